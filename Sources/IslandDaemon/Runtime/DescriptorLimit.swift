#if canImport(Glibc)
import Glibc
#endif

/// The daemon's file descriptors: every connection holds one, and running out makes `accept`
/// fail for everyone, presenters included. The daemon raises its soft `RLIMIT_NOFILE` to the
/// hard limit at start (systemd's default soft limit is 1,024, its hard one far higher) and
/// keeps its connection limits below what it then has (docs/design.md §4).
enum DescriptorLimit {
    /// Descriptors kept for everything but clients: the database and its journal files, the
    /// event loop's own, the listening sockets, the journal, standard streams, /proc reads.
    static let headroom = 64

    /// Raises the soft limit to the hard one; returns the soft limit in force afterwards.
    static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// The connection limits that fit `descriptors`: what is configured, lowered so that the
    /// connections, the reserve kept beyond them and the headroom all have a descriptor.
    static func connectionLimits(total: Int, perUser: Int, reserve: Int, descriptors: Int) -> (total: Int, perUser: Int) {
        let fitting = max(1, descriptors - headroom - reserve)
        let total = min(total, fitting)
        return (total, min(perUser, total))
    }
}
