#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ServiceLifecycle

/// Reloads the app manifests (and the layouts apps install) when a desktop entry appears,
/// changes or goes in an `applications/` folder of the data directories, so that a developer
/// who installs an app's entry while the daemon runs need not know about `island admin reload`.
/// What is watched and when a burst of events has ended is `ManifestWatch`'s and
/// `ReloadCoalescer`'s to say; this is the inotify shell around them.
struct ManifestWatcherService: Service {
    let dataDirectories: [String]
    let reloader: Reloader
    let logger: Logger

    func run() async {
        // One pending reload stands for any number of changes seen while the last one ran.
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watcher = ManifestWatcher(dataDirectories: dataDirectories, logger: logger) { continuation.yield() }
        // Without inotify (a kernel without it, no watches left) the daemon still works as it did:
        // manifests are read on reload. The service waits for the shutdown either way: a
        // service that returns would stop the group.
        watcher?.start()
        for await _ in changes.cancelOnGracefulShutdown() {
            await reloader.reloadManifests()
        }
        watcher?.stop()
    }
}

/// The inotify descriptor and the thread that reads it. Its watches and the coalescing live
/// on that thread alone; `stop` wakes it by closing the write end of a pipe it also polls.
final class ManifestWatcher: Sendable {
    private let inotify: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let dataDirectories: [String]
    private let logger: Logger
    private let changed: @Sendable () -> Void

    /// What a watch reports: entries created, written, renamed in or out, or deleted, and the
    /// folder itself going. Folders are watched through symbolic links (a data directory may
    /// be one), never a file that replaced a folder.
    private static let mask = UInt32(IN_CREATE | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    /// An ancestor waited on only needs to see the next folder appear (or itself go).
    private static let ancestorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    init?(dataDirectories: [String], logger: Logger, changed: @escaping @Sendable () -> Void) {
        let inotify = inotify_init1(Int32(O_CLOEXEC | O_NONBLOCK))
        guard inotify >= 0 else {
            logger.warning("cannot watch the applications folders; new desktop entries are read on reload",
                           metadata: ["error": "\(String(cString: strerror(errno)))"])
            return nil
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            close(inotify)
            return nil
        }
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        (self.inotify, wakeRead, wakeWrite) = (inotify, pipeEnds[0], pipeEnds[1])
        (self.dataDirectories, self.logger, self.changed) = (dataDirectories, logger, changed)
    }

    func start() {
        let thread = Thread { [self] in
            run()
            close(inotify)
            close(wakeRead)
        }
        thread.name = "manifest-watch"
        thread.start()
    }

    /// Ends the thread: the read end of the pipe then reports a hang-up.
    func stop() { close(wakeWrite) }

    private func run() {
        var watches: [Int32: [ManifestWatch.Target]] = [:]
        var coalescer = ReloadCoalescer()
        arm(&watches)
        while true {
            let now = Self.monotonicNow()
            let timeout = coalescer.deadline.map { Int32(min(max(0, ($0 - now) * 1000).rounded(.up), 60_000)) } ?? -1
            var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, timeout)
            if ready < 0 && errno != EINTR { return }
            if fds[1].revents != 0 { return }
            if fds[0].revents != 0, readEvents(watches: watches) {
                // Placed again at once, before the reload reads: a folder just created is
                // watched before the entries copied into it arrive.
                arm(&watches)
                coalescer.eventArrived(at: Self.monotonicNow())
            }
            if coalescer.takeDue(at: Self.monotonicNow()) { changed() }
        }
    }

    /// Places the watches `ManifestWatch` asks for and removes those no longer asked for.
    private func arm(_ watches: inout [Int32: [ManifestWatch.Target]]) {
        let targets = ManifestWatch.targets(dataDirectories: dataDirectories) { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        var placed: [Int32: [ManifestWatch.Target]] = [:]
        for target in targets {
            let wd = inotify_add_watch(inotify, target.directory, target.awaiting == nil ? Self.mask : Self.ancestorMask)
            guard wd >= 0 else {
                logger.debug("cannot watch a data directory", metadata: ["path": "\(target.directory)",
                                                                        "error": "\(String(cString: strerror(errno)))"])
                continue
            }
            placed[wd, default: []].append(target)
        }
        for wd in watches.keys where placed[wd] == nil { inotify_rm_watch(inotify, wd) }
        watches = placed
    }

    /// Reads what the kernel queued; whether any of it can change the manifests. At most a
    /// few buffers per wake-up: a flood is read on the next turn, or overflows the kernel's
    /// queue, which is itself a reason to reload.
    private func readEvents(watches: [Int32: [ManifestWatch.Target]]) -> Bool {
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<8 {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.withUnsafeBytes { bytes in
                let header = MemoryLayout<inotify_event>.size
                var offset = 0
                while offset + header <= count {
                    let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = bytes[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                    offset += header + length
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        relevant = true
                        continue
                    }
                    // A watch `arm` removed itself reports IN_IGNORED too: it is no longer in `watches`.
                    guard let targets = watches[wd] else { continue }
                    if mask & UInt32(IN_IGNORED) != 0 {
                        relevant = true
                        continue
                    }
                    let name = nameBytes.isEmpty ? nil : String(decoding: nameBytes, as: UTF8.self)
                    if ManifestWatch.relevant(name: name, isDirectory: mask & UInt32(IN_ISDIR) != 0, awaiting: targets.map(\.awaiting)) {
                        relevant = true
                    }
                }
            }
        }
        return relevant
    }

    private static func monotonicNow() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
