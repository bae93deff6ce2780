import NIOPosix

/// The daemon's own thread for reading the folders other programs write — the data
/// directories' desktop entries and layouts — and the configuration. What is read there is
/// read with care (`readRegularFile`: no FIFO, device or endless file is opened for reading),
/// but a file system may still be slow; a read waiting here holds this thread alone, never one
/// of the few threads of Swift's cooperative pool, which every asynchronous call needs, nor the
/// event loop that serves the connections. One thread: scans run one at a time, in order.
final class FileReads: Sendable {
    private let pool: NIOThreadPool

    init() {
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    /// `body`'s result, computed on the file thread.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        do {
            return try await pool.runIfActive(body)
        } catch {
            // Only once the pool was shut down, which the daemon never does while it runs.
            return body()
        }
    }
}
