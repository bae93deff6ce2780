#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import SelfWake

/// Writes all of `text` to a file descriptor, unbuffered (so each bar line leaves at once).
/// False when the descriptor refuses it: EPIPE once the reader (the bar) is gone.
@discardableResult
package func writeAll(_ text: String, to fd: Int32 = 1) -> Bool {
    var bytes = Array(text.utf8)
    return bytes.withUnsafeMutableBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&descriptor, 1, -1)
                    continue
                }
                return false
            }
            offset += n
        }
        return true
    }
}

/// Calls `closed` (on a thread of its own) once nothing can read standard output any more: a
/// pipe whose reader is gone (POLLERR) or a terminal hung up (POLLHUP). A bar presenter
/// otherwise learns it only at its next write, which may never come while nothing changes.
/// Regular files never report either.
package func whenStandardOutputCloses(_ closed: @escaping @Sendable () -> Void) {
    let thread = Thread {
        var descriptor = pollfd(fd: 1, events: 0, revents: 0)
        while true {
            let n = poll(&descriptor, 1, -1)
            if n < 0, errno == EINTR { continue }
            if n < 0 { return }
            if descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { break }
        }
        closed()
    }
    thread.start()
}

/// The controlling terminal in the presenter's mode — raw input, the alternate screen, no
/// cursor — and back as it was. Restoring is idempotent and safe from any thread.
package final class TerminalSession: Sendable {
    private let original: Mutex<termios?> = Mutex(nil)

    package init() {}

    /// Enters raw mode and the alternate screen. Throws when stdin is not a terminal.
    package func enter() throws {
        var attributes = termios()
        guard tcgetattr(0, &attributes) == 0 else { throw TerminalError.notATerminal }
        let saved = attributes
        original.withLock { $0 = saved }
        attributes.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        attributes.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        attributes.c_cc.6 = 1  // VMIN
        attributes.c_cc.5 = 0  // VTIME
        tcsetattr(0, TCSAFLUSH, &attributes)
        writeAll("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    package func restore() {
        guard
            var saved = original.withLock({ state -> termios? in
                defer { state = nil }; return state
            })
        else { return }
        writeAll("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(0, TCSAFLUSH, &saved)
    }

    /// The window size from `TIOCGWINSZ`, or 80×24.
    package static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    /// Terminal input as chunks of bytes, read on a thread of its own; ends at end of file.
    package static func input() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                continuation.yield(Array(buffer[0..<n]))
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}

package enum TerminalError: Error, CustomStringConvertible {
    case notATerminal
    package var description: String { "standard input is not a terminal" }
}

/// Signals delivered as an async stream, caught from the moment it is made (the default action
/// is turned off for them); the watch ends with the stream.
package func signalStream(_ signals: [Int32]) -> AsyncStream<Int32> {
    let (stream, continuation) = AsyncStream<Int32>.makeStream()
    let watch = SignalWatch(signals) { continuation.yield($0) }
    continuation.onTermination = { _ in _ = watch }
    return stream
}

/// Opens a URL with `xdg-open` when it is on `PATH`; false otherwise.
package func openWithXDG(_ url: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
    let path = environment["PATH"] ?? "/usr/bin:/bin"
    guard let opener = path.split(separator: ":").map({ String($0) + "/xdg-open" }).first(where: { (candidate: String) in access(candidate, X_OK) == 0 }) else {
        return false
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: opener)
    process.arguments = [url]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do {
        try process.run()
        // Reap it in the background; nothing waits on the result.
        Thread { process.waitUntilExit() }.start()
        return true
    } catch {
        return false
    }
}
