#if canImport(Glibc)
import Glibc
#endif

/// Why a connection to the daemon's socket failed, in the words every client says it with.
package enum ConnectFailure {
    /// SwiftNIO's connect errors read `connect(descriptor:addr:size:): … (errno: 2)`, which says
    /// neither what is wrong nor what to do; say it plainly. Text without an errno is kept.
    /// With the `socket` path, a refusal because something else is there (a FIFO, a file, a
    /// folder: connect(2) says ECONNREFUSED for any of them) says what is there, not that
    /// nothing listens.
    package static func describe(_ text: String, socket: String? = nil) -> String {
        guard let match = text.firstMatch(of: #/errno: (\d+)/#), let code = Int32(match.output.1) else { return text }
        switch code {
        case ENOENT: return "no socket there"
        case ECONNREFUSED:
            if let socket, let kind = nonSocket(at: socket, followingLinks: true) { return "\(kind) is there, not a socket" }
            return "connection refused (nothing listens on the socket)"
        case EACCES: return "permission denied"
        default: return String(cString: strerror(code))
        }
    }

    /// What is at `path` when it is there and is not a socket, in the words a refusal says it
    /// with: a client's (a link followed, as connect(2) follows it) and the daemon's before it
    /// binds (not followed: a link there is itself what is in the way).
    package static func nonSocket(at path: String, followingLinks: Bool) -> String? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: return nil
        case S_IFIFO: return "a FIFO"
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "a file that is not a socket"
        }
    }
}
