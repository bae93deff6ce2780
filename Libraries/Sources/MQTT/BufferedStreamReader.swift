import Glibc

/// Reads a stream descriptor through a buffer, for `MQTTLinkFrame.read`: one `read` takes
/// whatever the other side has written — a frame's length with its body, often several
/// frames — where reading the length and then the body cost two system calls a frame, on the
/// daemon's side for every message and on the link process's for every `done`.
///
/// A part larger than the buffer is read straight into its destination, so the buffer stays
/// at its size whatever frames come.
///
/// `waitsWithPoll`: wait for input in `poll` (`POLLIN`) before each `read`, for a thread that
/// reads a socket another thread writes to. A thread asleep in `read` on a socket is woken
/// whenever room is freed in the socket's send buffer — each time the other side reads what
/// was written — and goes back to sleep finding nothing to read; `poll` is woken only by what
/// it asked for. (The link process's main thread reads the daemon's commands on the socket
/// its sessions' threads write every message to: without it, it woke for every message.)
package struct BufferedStreamReader {
    package let descriptor: Int32
    private let waitsWithPoll: Bool
    private var buffer: [UInt8]
    /// What is buffered and not yet taken: `buffer[start..<end]`.
    private var start = 0
    private var end = 0

    package init(descriptor: Int32, capacity: Int = 16 * 1024, waitsWithPoll: Bool = false) {
        self.descriptor = descriptor
        self.waitsWithPoll = waitsWithPoll
        buffer = [UInt8](repeating: 0, count: max(1, capacity))
    }

    /// Fills `destination` whole, from what is buffered and then from the descriptor; false at
    /// the end of the stream or on an error, as `readFully`.
    package mutating func fill(_ destination: UnsafeMutableRawBufferPointer) -> Bool {
        var filled = 0
        while filled < destination.count {
            if start == end {
                let rest = UnsafeMutableRawBufferPointer(rebasing: destination[filled...])
                if waitsWithPoll {
                    var wanted = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    // Readable, ended or failed: the `read` below tells which.
                    if poll(&wanted, 1, -1) < 0 {
                        if errno == EINTR { continue }
                        return false
                    }
                }
                if rest.count >= buffer.count { return readFully(descriptor, rest) }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
                if count > 0 {
                    (start, end) = (0, count)
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            let taken = min(end - start, destination.count - filled)
            buffer.withUnsafeBytes { bytes in
                (destination.baseAddress! + filled).copyMemory(from: bytes.baseAddress! + start, byteCount: taken)
            }
            start += taken
            filled += taken
        }
        return true
    }
}
