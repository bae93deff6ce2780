#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import SelfWake
import ServiceLifecycle

/// Reloads the app manifests and the layouts apps install when a desktop entry or a layout
/// file appears, changes or goes in the data directories, so that a developer who installs an
/// app's entry while the daemon runs need not know about `island admin reload`. What is
/// watched, when a burst of events has ended and when failed watches are tried again is
/// `ManifestWatch`'s, `ReloadCoalescer`'s and `WatchRetry`'s to say; this is the inotify shell
/// around them.
struct ManifestWatcherService: Service {
    /// Started before the data directories' first scan (`IslandDaemon`): what changes there
    /// once that scan has looked is an event, whether or not the group has started yet.
    let watcher: ManifestWatcher?
    let changes: AsyncStream<Void>
    let reloader: Reloader

    /// A change's signal for `changes`: one pending reload stands for any number of changes
    /// seen while the last one ran.
    static func makeChanges() -> (AsyncStream<Void>, @Sendable () -> Void) {
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        return (changes, { continuation.yield() })
    }

    func run() async {
        // Without inotify (a kernel without it, no watches left) the daemon still works:
        // manifests are read on reload, and the watcher keeps trying. The service waits for the
        // shutdown either way: a service that returns would stop the group.
        for await _ in changes.cancelOnGracefulShutdown() {
            await reloader.reloadManifests()
        }
        watcher?.stop()
    }
}

/// The inotify descriptor and the thread that reads it. Its watches, the coalescing and the
/// retries live on that thread alone; `stop` wakes it through a pipe it also polls.
final class ManifestWatcher: Sendable {
    private let stopping: WakePipe
    private let dataDirectories: [String]
    private let logger: Logger
    private let changed: @Sendable () -> Void

    /// What a watch reports: entries created, written, renamed in or out, or deleted, and the
    /// folder itself going. Folders are watched through symbolic links (a data directory may
    /// be one), never a file that replaced a folder.
    private static let mask = UInt32(
        IN_CREATE | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    /// An ancestor waited on only needs to see the next folder appear (or itself go).
    private static let ancestorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    /// The least time between two reads of the queue: a flood of creations and deletions is
    /// read in a few large gulps a second, or overflows the kernel's queue (which is itself one
    /// reason to rescan), rather than costing a wake-up per event.
    private static let readSpacing = 0.1

    init?(dataDirectories: [String], logger: Logger, changed: @escaping @Sendable () -> Void) {
        do {
            stopping = try WakePipe()
        } catch {
            logger.warning(
                "cannot watch the data directories; new desktop entries and layouts are read on reload",
                metadata: ["error": "\(String(cString: strerror(error.errno)))"])
            return nil
        }
        (self.dataDirectories, self.logger, self.changed) = (dataDirectories, logger, changed)
    }

    /// Places the watches on the calling thread, then reads them on a thread of its own
    /// (`spawn`'s; a test starts it late, as a busy machine may): a change made once `start`
    /// has returned is seen, however late that thread first runs. (When that thread placed
    /// the watches, the daemon could say it was ready before them, and an entry installed in
    /// between was never read: on a busy machine, seconds.)
    func start(spawn: (@escaping @Sendable () -> Void) -> Void = ManifestWatcher.thread) {
        var state = State()
        place(&state)
        spawn { [self, state] in run(state) }
    }

    static func thread(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = "manifest-watch"
        thread.start()
    }

    /// Ends the thread.
    func stop() { stopping.wake() }

    /// The watching thread's own: the inotify descriptor, its watches, the pending rescan and
    /// the retries.
    private struct State: Sendable {
        var inotify: Int32 = -1
        var watches: [Int32: [ManifestWatch.Target]] = [:]
        var coalescer = ReloadCoalescer()
        var retry = WatchRetry()
    }

    private func place(_ state: inout State) {
        let now = Self.monotonicNow()
        if state.inotify < 0 { state.inotify = inotify_init1(Int32(O_CLOEXEC | O_NONBLOCK)) }
        let failure = state.inotify < 0 ? "cannot create an inotify instance" : arm(state.inotify, &state.watches)
        if let failure {
            let beginsRun = state.retry.failed(at: now)
            let metadata: Logger.Metadata = [
                "error": "\(failure)", "retry": "\(state.retry.deadline.map { Int(($0 - now).rounded()) } ?? 0) s",
            ]
            if beginsRun {
                logger.warning(
                    "cannot watch every data directory; new desktop entries and layouts there are read on reload until it can",
                    metadata: metadata)
            } else {
                logger.debug("still cannot watch every data directory", metadata: metadata)
            }
        } else if state.retry.succeeded() {
            logger.info("watching every data directory again")
            // Whatever changed while nothing was watched.
            state.coalescer.eventArrived(at: now)
        }
    }

    private func run(_ initial: State) {
        var state = initial
        defer { if state.inotify >= 0 { close(state.inotify) } }
        var nextRead = 0.0
        while true {
            let now = Self.monotonicNow()
            let reading = state.inotify >= 0 && now >= nextRead
            let wakeAt = [state.coalescer.deadline, state.retry.deadline, reading || state.inotify < 0 ? nil : nextRead].compactMap { $0 }.min()
            let timeout = wakeAt.map { Int32(min(max(0, ($0 - now) * 1000).rounded(.up), 60_000)) } ?? -1
            var fds = [
                pollfd(fd: stopping.readEnd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: reading ? state.inotify : -1, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, timeout)
            if ready < 0 && errno != EINTR { return }
            if fds[0].revents != 0 { return }
            if fds[1].revents != 0 {
                nextRead = Self.monotonicNow() + Self.readSpacing
                if readEvents(state.inotify, watches: state.watches) {
                    // Placed again at once, before the reload reads: a folder just created is
                    // watched before the entries copied into it arrive.
                    place(&state)
                    state.coalescer.eventArrived(at: Self.monotonicNow())
                }
            }
            if state.retry.isDue(at: Self.monotonicNow()) { place(&state) }
            if state.coalescer.takeDue(at: Self.monotonicNow()) { changed() }
        }
    }

    /// Places the watches `ManifestWatch` asks for and removes those no longer asked for.
    /// Returns why some could not be placed; nil when all were.
    private func arm(_ inotify: Int32, _ watches: inout [Int32: [ManifestWatch.Target]]) -> String? {
        let fm = FileManager.default
        let targets = ManifestWatch.targets(
            dataDirectories: dataDirectories,
            isDirectory: { path in
                var isDirectory: ObjCBool = false
                return fm.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            },
            subfolders: { path in
                (try? fm.contentsOfDirectory(atPath: path))?.filter { name in
                    var isDirectory: ObjCBool = false
                    return fm.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
                } ?? []
            })
        var placed: [Int32: [ManifestWatch.Target]] = [:]
        var failure: String?
        // One watch per directory, whatever targets share it: the mask is what all of them need.
        var byDirectory: [String: [ManifestWatch.Target]] = [:]
        for target in targets { byDirectory[target.directory, default: []].append(target) }
        for (directory, shared) in byDirectory.sorted(by: { $0.key < $1.key }) {
            let mask = shared.contains { $0.awaiting == nil } ? Self.mask : Self.ancestorMask
            let wd = inotify_add_watch(inotify, directory, mask)
            guard wd >= 0 else {
                let error = errno
                // A folder that went between the look and the watch is no failure: its event follows.
                if error != ENOENT && error != ENOTDIR {
                    failure = failure ?? "\(directory): \(String(cString: strerror(error)))"
                }
                continue
            }
            placed[wd, default: []].append(contentsOf: shared)
        }
        for wd in watches.keys where placed[wd] == nil { inotify_rm_watch(inotify, wd) }
        watches = placed
        return failure
    }

    /// Reads what the kernel queued; whether any of it can change the manifests or layouts. At
    /// most a few buffers per wake-up (and `readSpacing` apart): a flood is read on the next turn, or overflows the
    /// kernel's queue, which is itself a reason to reload.
    private func readEvents(_ inotify: Int32, watches: [Int32: [ManifestWatch.Target]]) -> Bool {
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<8 {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            buffer.withUnsafeBytes { bytes in
                let header = MemoryLayout<inotify_event>.size
                var offset = 0
                // Once one event calls for a rescan the rest can only call for the same one:
                // they are drained unread, so a flood costs a read per buffer, not a parse per event.
                while !relevant, offset + header <= count {
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
                    if ManifestWatch.relevant(name: name, isDirectory: mask & UInt32(IN_ISDIR) != 0, targets: targets) {
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
