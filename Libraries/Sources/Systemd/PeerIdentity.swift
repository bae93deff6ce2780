#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// What the system knows about a process, looked up by pid (for example a peer's `SO_PEERCRED`).
///
/// Each fact says who could have arranged it, and that decides what it may prove: a user
/// chooses the names of the units in their own service manager, and anyone can build a mount
/// namespace with whatever files they like. A pid can also be recycled between the
/// credential check and the lookup.
public enum ProcessIdentity {
    /// The systemd unit the process runs in: its user unit (e.g.
    /// `app-gnome-org.gnome.Terminal-1234.scope`) if it has one, else its system unit.
    ///
    /// `nil` when the process is not in a systemd cgroup hierarchy (libsystemd says `-ENODATA`),
    /// does not exist, or cannot be inspected.
    public static func systemdUnit(pid: Int32) -> String? {
        userUnit(pid: pid) ?? systemUnit(pid: pid)
    }

    /// The unit of the process in a user's service manager (`user@UID.service`): named by
    /// that user, who may create any cgroup in the subtree systemd delegates to them.
    public static func userUnit(pid: Int32) -> String? {
        // pid 0 means "the caller" to sd-login; a peer never legitimately has it.
        guard pid > 0 else { return nil }
        return takeString { sd_pid_get_user_unit(pid, &$0) }
    }

    /// The unit of the process in the system manager; for everything a user's service
    /// manager runs, that is `user@UID.service` itself.
    public static func systemUnit(pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        return takeString { sd_pid_get_unit(pid, &$0) }
    }

    /// The uid owning the login session the process belongs to, from logind's cgroup layout.
    ///
    /// `nil` for processes outside a session (system services, or everything on a machine where
    /// PID 1 is not systemd).
    public static func sessionOwnerUID(pid: Int32) -> UInt32? {
        guard pid > 0 else { return nil }
        var uid: uid_t = 0
        guard sd_pid_get_owner_uid(pid, &uid) >= 0 else { return nil }
        return uid
    }

    /// The executable of the process: the target of `<procRoot>/<pid>/exe`.
    ///
    /// Linux appends ` (deleted)` when the file was replaced after the process started. `nil`
    /// when the link cannot be read, e.g. for another user's process without `CAP_SYS_PTRACE`.
    public static func executablePath(pid: Int32, procRoot: String = "/proc") -> String? {
        guard pid > 0 else { return nil }
        let link = "\(procRoot)/\(pid)/exe"
        var capacity = Int(PATH_MAX)
        // readlink(2) truncates silently; a full buffer means "try again with more room".
        while capacity <= 1 << 16 {
            var buffer = [CChar](repeating: 0, count: capacity)
            let length = readlink(link, &buffer, capacity)
            guard length >= 0 else { return nil }
            if length < capacity {
                return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            capacity *= 2
        }
        return nil
    }

    /// Runs an sd-login getter that hands out a malloc'ed string, and frees it.
    private static func takeString(
        _ getter: (inout UnsafeMutablePointer<CChar>?) -> Int32
    ) -> String? {
        var pointer: UnsafeMutablePointer<CChar>? = nil
        let result = getter(&pointer)
        defer { free(pointer) }
        guard result >= 0, let pointer else { return nil }
        return String(cString: pointer)
    }
}

/// Facts about users from sd-login and the user database, for deciding who may watch the
/// system-wide island.
public enum UserAccess {
    /// Whether `uid` has an active session on the local seat (`seat0`): the person in front
    /// of the machine. False outside systemd-logind.
    public static func hasActiveLocalSession(uid: UInt32) -> Bool {
        sd_uid_is_on_seat(uid, 1, "seat0") > 0
    }

    /// Whether `uid` belongs to group `gid`, as primary or supplementary group.
    public static func isMember(uid: UInt32, ofGroup gid: UInt32) -> Bool {
        guard let passwd = getpwuid(uid) else { return false }
        if passwd.pointee.pw_gid == gid { return true }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(passwd.pointee.pw_name, passwd.pointee.pw_gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(passwd.pointee.pw_name, passwd.pointee.pw_gid, &groups, &count) >= 0 else { return false }
        }
        return groups.prefix(Int(count)).contains(gid)
    }
}
