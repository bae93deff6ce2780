#if canImport(Glibc)
import Glibc
#endif

/// Why a connection to the daemon's socket failed, in the words every client says it with.
package enum ConnectFailure {
    /// SwiftNIO's connect errors read `connect(descriptor:addr:size:): … (errno: 2)`, which says
    /// neither what is wrong nor what to do; say it plainly. Text without an errno is kept.
    package static func describe(_ text: String) -> String {
        guard let match = text.firstMatch(of: #/errno: (\d+)/#), let code = Int32(match.output.1) else { return text }
        switch code {
        case ENOENT: return "no socket there"
        case ECONNREFUSED: return "connection refused (nothing listens on the socket)"
        case EACCES: return "permission denied"
        default: return String(cString: strerror(code))
        }
    }
}
