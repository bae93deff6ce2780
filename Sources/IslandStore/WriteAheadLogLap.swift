#if canImport(Glibc)
import Glibc
#endif

/// The write-ahead log's first lap, written before the first commit needs it.
///
/// SQLite appends each commit to the log (`islandd.sqlite3-wal`), and once a checkpoint has
/// copied the log into the database (every `wal_autocheckpoint` pages) it starts the log over,
/// writing over the blocks it already has. The first lap is different: every commit grows the
/// file, and a `fdatasync` after a file grew must also commit the file system's journal, for
/// the file's new size. On ext4 on the development machine that was 258–286 µs a commit
/// against 156–177 µs for one written over blocks the file had (docs/benchmarks.md, "The log's
/// first lap"), and a daemon starts every log anew: a clean close checkpoints the log and
/// deletes it. (PostgreSQL fills its log's segments with zeros before use for the same reason,
/// `wal_init_zero`.)
///
/// So after SQLite has opened the log, the store writes zeros from its end to one lap's length
/// and syncs them, once, at start-up (~4 MiB, a few milliseconds). SQLite reads a log frame by
/// frame and stops at the first whose checksum does not follow on (as it does over the frames
/// an earlier lap left), so zeros past the last commit are nothing to it, before a crash or
/// after one; it writes its frames where its own count of frames says, never at the file's end.
/// The space is real blocks, not `fallocate`'s: writing into an allocated but unwritten extent
/// changes the extent's state, which a `fdatasync` must journal just as it would a new size.
enum WriteAheadLogLap {
    /// SQLite's log: a 32-byte header, then per page a 24-byte frame header and the page.
    static let headerBytes = 32
    static let frameHeaderBytes = 24

    /// A lap's length in bytes: the frames a checkpoint lets the log reach, and a few for
    /// the commit that crosses the threshold (it writes all its pages before the checkpoint).
    static func bytes(pageSize: Int, pagesPerCheckpoint: Int) -> Int {
        headerBytes + (pagesPerCheckpoint + 16) * (frameHeaderBytes + pageSize)
    }

    /// Extends the log at `path` with zeros to `length` bytes and syncs it; a log already that
    /// long is left alone. Best effort: a log it could not extend (a full disk) is as SQLite
    /// made it, only slower to commit to. Returns whether the log now has the length.
    @discardableResult
    static func reserve(_ path: String, length: Int) -> Bool {
        // Non-blocking, so that a FIFO put in the log's place cannot hold the open; only a
        // regular file is written (a regular file ignores the flag).
        let fd = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        var offset = Int(info.st_size)
        guard offset < length else { return true }
        // One page of zeros on the stack, written 16 times a call: the daemon's heap keeps
        // nothing of it.
        return withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 16) { page in
            page.initializeMemory(as: UInt8.self, repeating: 0)
            var vectors = [iovec](repeating: iovec(iov_base: page.baseAddress, iov_len: page.count), count: 16)
            while offset < length {
                let count = min(vectors.count, (length - offset + page.count - 1) / page.count)
                vectors[count - 1].iov_len = min(page.count, length - offset - (count - 1) * page.count)
                let written = pwritev(fd, vectors, Int32(count), off_t(offset))
                vectors[count - 1].iov_len = page.count
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return false }
                offset += written
            }
            return fdatasync(fd) == 0
        }
    }
}
