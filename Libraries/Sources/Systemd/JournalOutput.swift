#if canImport(Glibc)
import Glibc
#endif
import CSystemd

// Detecting the journal and getting bytes to it or to stderr.
extension JournalLogHandler {
    /// Whether stderr is a stream that systemd connected to journald.
    ///
    /// systemd sets `JOURNAL_STREAM=<dev>:<ino>` for services logging to the journal; it is only
    /// trustworthy when it matches `fstat(2)` of stderr, because the variable is inherited by
    /// children whose stderr may have been redirected elsewhere.
    public static var isStderrTheJournal: Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }),
            let (device, inode) = parseJournalStream(value)
        else { return false }
        var status = stat()
        guard fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// `JOURNAL_STREAM` set at all means stderr probably ends up in the journal, where the `<N>`
    /// prefix is understood; without it a human is reading and the prefix is noise.
    static var isJournalStreamSet: Bool {
        getenv("JOURNAL_STREAM") != nil
    }

    static var isJournalSocketPresent: Bool {
        var status = stat()
        guard stat("/run/systemd/journal/socket", &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFSOCK
    }

    /// Parses `<dev>:<ino>`, both decimal as systemd writes them.
    static func parseJournalStream(_ value: String) -> (device: UInt64, inode: UInt64)? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else {
            return nil
        }
        return (device, inode)
    }

    /// Sends one entry over the native protocol; `false` if libsystemd reported an error.
    static func sendToJournal(_ fields: [(name: String, value: String)]) -> Bool {
        // All fields in one buffer so that a single allocation backs every iovec.
        var storage: [UInt8] = []
        var spans: [(offset: Int, length: Int)] = []
        spans.reserveCapacity(fields.count)
        for field in fields {
            let offset = storage.count
            storage.append(contentsOf: field.name.utf8)
            storage.append(UInt8(ascii: "="))
            storage.append(contentsOf: field.value.utf8)
            spans.append((offset, storage.count - offset))
        }
        return storage.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            let vectors = spans.map { iovec(iov_base: base + $0.offset, iov_len: $0.length) }
            return sd_journal_sendv(vectors, Int32(vectors.count)) >= 0
        }
    }

    /// Writes `line` and a newline to `fd` (stderr) with one write(2), so that concurrent entries do not
    /// interleave: POSIX makes writes up to PIPE_BUF atomic on pipes, and Linux sends a small
    /// write to a stream socket (journald's end of stderr) as one unit as well.
    static func writeLine(_ line: String, to fd: Int32 = STDERR_FILENO) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var written = 0
            // Only a signal or an entry larger than the pipe can make this loop run twice.
            while written < buffer.count {
                let result = write(fd, base + written, buffer.count - written)
                if result > 0 {
                    written += result
                } else if result < 0 && errno == EINTR {
                    continue
                } else {
                    return  // Nowhere left to report a failing stderr.
                }
            }
        }
    }
}
