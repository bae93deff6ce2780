import ArgumentParser
import Foundation
import IslandPaths
import IslandPresenter
import OrderedJSON
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct TUI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tui",
        abstract: "The live island in the terminal.",
        discussion: """
            The island is centred at the top (compact pill, minimal pill with the detached \
            bubble, or the expanded island), the lock-screen list below, the status line last.
            Keys: ←/→ or Tab select an activity in the list (a long list scrolls to keep it \
            on screen); e expand; c collapse; Enter tap \
            (opens the returned URL with xdg-open, or shows it); d dismiss; 1-9 press the Nth \
            button of the expanded layout; q quit.
            A key acts for an activity only once what it acts on has stood still on screen for \
            0.5 s: right after an activity appears, moves or becomes the one keys act on, a key \
            says "changed just now" and sends nothing.
            """)
    @OptionGroup var options: CommonOptions

    func run() async throws {
        let terminal = TerminalSession()
        try terminal.enter()
        defer { terminal.restore() }
        let interactor = Interactor(socketPath: options.socketPath)
        let controller = TUIController(
            io: .init(
                write: { writeAll($0) },
                size: { TerminalSession.size() },
                clock: now,
                open: { openWithXDG($0) },
                interact: { action, id, button in try await interactor.interact(action, id: id, button: button) },
                monotonic: BootClock.now, settleTime: clickSettleTime(environment: ProcessInfo.processInfo.environment)))
        await controller.redraw()
        let loop = SubscriptionLoop(socketPath: options.socketPath)
        let signals = signalStream([SIGINT, SIGTERM, SIGHUP, SIGWINCH])
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await loop.run { await controller.handle($0) } }
            group.addTask {
                while !Task.isCancelled {
                    try? await sleepToNextSecond()
                    await controller.tick()
                }
            }
            group.addTask {
                for await number in signals {
                    if number == SIGWINCH {
                        writeAll("\u{1B}[2J")
                        await controller.redraw()
                    } else {
                        return
                    }
                }
            }
            group.addTask {
                for await chunk in TerminalSession.input() {
                    for key in TUIKey.parse(chunk) {
                        guard await controller.press(key) else { return }
                    }
                }
            }
            // Quit, a terminating signal or the end of input ends everything.
            await group.next()
            group.cancelAll()
        }
        terminal.restore()
        // The input thread may still be blocked in read(2); leave without waiting for it.
        Glibc.exit(0)
    }
}
