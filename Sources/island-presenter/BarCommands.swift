import ArgumentParser
import Foundation
import IslandPaths
import IslandPresenter
import OrderedJSON
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the bar presenters record what their clicks may act on.
func barShownDirectory() -> String {
    BarShown.directory(runtimeDirectory: SocketLocation.userRuntimeDirectory(environment: ProcessInfo.processInfo.environment, uid: getuid()))
}

/// The bar's driver: its lines on standard output, what its clicks may act on in a record of
/// its own in `barShownDirectory` (replaced atomically at each change).
func makeBarDriver(_ format: BarFormat, options: BarOptions) -> BarDriver {
    let directory = barShownDirectory()
    let path = directory + "/" + BarShown.fileName(socket: options.common.socketPath, pid: getpid())
    barRecord.withLock { $0 = path }
    let reported = Once()
    return BarDriver(
        format: format, maxLength: options.maxLength, clock: now, monotonic: BootClock.now,
        settleTime: clickSettleTime(environment: ProcessInfo.processInfo.environment), pid: getpid(),
        publish: { record in
            mkdir(directory, 0o700)
            do {
                try Data(record.serialized).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                // Clicks then act on the island as the daemon has it: said once, not per line.
                guard reported.first() else { return }
                writeAll("island-presenter: cannot record what the bar shows in \(path) (its clicks will not be checked against it): \(error)\n", to: 2)
            }
        },
        output: { line in
            if !writeAll(line + "\n") { exitOutputClosed() }
        })
}

/// This bar presenter's record of what its clicks may act on, removed when it exits (a record
/// left by one killed outright is removed by the next click: its pid is gone).
let barRecord = Mutex<String?>(nil)

@Sendable func removeBarRecord() {
    if let path = barRecord.withLock({ $0 }) { unlink(path) }
}

/// True the first time only.
final class Once: Sendable {
    private let done = Mutex(false)

    func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

func runBar(_ format: BarFormat, options: BarOptions, driver: BarDriver? = nil) async {
    // A closed stdout is handled where it is seen, with a status of its own; SIGPIPE (which
    // the socket code may ignore anyway) must not decide it.
    signal(SIGPIPE, SIG_IGN)
    let interrupt = exitOnInterrupt(cleanup: removeBarRecord)
    defer { interrupt.cancel() }
    whenStandardOutputCloses { exitOutputClosed() }
    let driver = driver ?? makeBarDriver(format, options: options)
    let loop = SubscriptionLoop(socketPath: options.common.socketPath)
    await withTaskGroup(of: Void.self) { group in
        group.addTask { await loop.run { await driver.handle($0) } }
        group.addTask {
            for await _ in driver.tickingStarts {
                while !Task.isCancelled {
                    try? await sleepToNextSecond()
                    guard await driver.tick() else { break }
                }
            }
        }
        await group.next()
        group.cancelAll()
    }
}

struct Waybar: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A Waybar custom module (return-type: json): one JSON object per line.",
        discussion: """
            Each line: {"text", "alt", "tooltip", "class", "percentage"?}; alt is the chip \
            (the short form, for a format that shows {alt} where space is short), tooltip an \
            alert and then the lock-screen list (one activity per line), class the island's mode \
            plus "stale", "alert", "focus" (Do Not Disturb) and "sharing" (content hidden while \
            the screen is shared) when they hold, percentage the progress of the island's activity.
            """)
    @OptionGroup var options: BarOptions
    func run() async throws { await runBar(.waybar, options: options) }
}

struct I3blocks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "i3blocks",
        abstract: "An i3blocks block (format=json, interval=persist): {\"full_text\", \"short_text\"} per line.",
        discussion: """
            i3blocks writes a persistent block's clicks to its standard input (a JSON object \
            with "button" under format=json): button 1 toggles the island's activity expanded, \
            2 opens the lock-screen list in a terminal, 3 taps it (see the click mode). i3blocks 1.4 \
            drops clicks on a running persistent block: bind a key to "click toggle" there.
            """)
    @OptionGroup var options: BarOptions
    func run() async throws {
        let common = options.common
        let driver = makeBarDriver(.i3blocks, options: options)
        // Not in the bar's task group: the end of input (no i3blocks, stdin /dev/null) ends
        // only the reading.
        Task.detached {
            var pending: [UInt8] = []
            for await chunk in TerminalSession.input() {
                pending += chunk
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<end], as: UTF8.self)
                    pending.removeSubrange(...end)
                    guard let button = BarClick.i3blocksButton(in: line), let action = BarClick.forButton(button) else { continue }
                    // The click is about the line i3blocks shows: what this driver put out,
                    // as of when the click was read.
                    let clickedAt = BootClock.now()
                    _ = await Click.perform(action, options: common, clickedAt: clickedAt, shown: [await driver.shown])
                }
                // A click is a line of the block's properties; nothing longer is one.
                if pending.count > 1 << 16 { pending.removeAll() }
            }
        }
        await runBar(.i3blocks, options: options, driver: driver)
    }
}

struct Eww: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "An eww deflisten source: the island's text per line; an empty line when there is none.")
    @OptionGroup var options: BarOptions
    func run() async throws { await runBar(.eww, options: options) }
}

struct Polybar: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A polybar custom/script (tail = true): the island's text per line; an empty line hides it.")
    @OptionGroup var options: BarOptions
    func run() async throws { await runBar(.polybar, options: options) }
}
