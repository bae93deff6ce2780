#if canImport(Glibc)
import Glibc
#endif
import SmallFiles

/// What confines a process, as far as another process on the host can tell.
public enum ProcessSandbox: Equatable, Sendable {
    /// Nothing: the process shares the observer's user namespace and has no sandbox marker.
    case none
    /// A Flatpak sandbox: its root holds a `.flatpak-info` naming `appID` (nil when it names
    /// none). `ownUserNamespace` says whether the process runs in a user namespace other than
    /// the observer's, as every unprivileged bubblewrap sandbox does — and as anyone can
    /// arrange with `unshare -Ur`, so then the file proves nothing to another user.
    case flatpak(appID: String?, ownUserNamespace: Bool)
    /// A user namespace of its own and no Flatpak marker: bubblewrap, a rootless container,
    /// `unshare`.
    case userNamespace
    /// A pid namespace of its own (every Flatpak, most containers); seen where the user
    /// namespace cannot be read.
    case pidNamespace
    /// A strictly confined Snap (its AppArmor label is `snap.<name>.<app>`).
    case snap(name: String)
    /// The process could not be inspected (it exited, or hides its `/proc` entries by being
    /// undumpable); a sandbox cannot be ruled out.
    case uninspectable(reason: String)

    /// For messages: what confines the process, in a few words.
    public var summary: String {
        switch self {
        case .none: "no sandbox"
        case .flatpak(let app, _): app.map { "the Flatpak sandbox of \($0)" } ?? "a Flatpak sandbox that names no app"
        case .userNamespace: "a user namespace of its own"
        case .pidNamespace: "a pid namespace of its own"
        case .snap(let name): "the Snap \(name)"
        case .uninspectable(let reason): "a process that cannot be inspected (\(reason))"
        }
    }
}

/// A file by device and inode: what a path or a running executable is, whatever name or
/// mount namespace it was reached through.
public struct FileIdentity: Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    init(_ status: stat) {
        self.init(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }
}

/// A file only root controls (see `ProcessIdentity.rootControlledFile(atPath:)`).
public struct RootControlledFile: Hashable, Sendable {
    /// The path with every symlink resolved.
    public var path: String
    public var identity: FileIdentity

    public init(path: String, identity: FileIdentity) {
        self.path = path
        self.identity = identity
    }
}

extension ProcessIdentity {
    /// What confines `pid`, seen from the calling process.
    ///
    /// Reading another user's namespaces and root needs ptrace access (their uid or
    /// `CAP_SYS_PTRACE`), which the packaged system daemon does not have. Without it, what
    /// every process may read still tells some sandboxes apart: the
    /// `app-flatpak-<app-id>-<n>.scope` that flatpak runs each app in, and a pid namespace
    /// of its own (`NSpid:` in `status`), which no process can leave.
    ///
    /// - Parameter readingForeignRoots: Whether to look into the root of a process in another
    ///   user namespace. Its owner may have mounted any file system there, FUSE included,
    ///   whose server can leave a reader blocked for as long as it likes; a daemon serving
    ///   other users must not read it (the Flatpak's id then comes from its unit, if at all).
    public static func sandbox(
        pid: Int32, procRoot: String = "/proc", userUnit: (Int32) -> String? = userUnit(pid:),
        readingForeignRoots: Bool = true
    ) -> ProcessSandbox {
        func flatpakByUnit() -> ProcessSandbox? {
            guard let unit = userUnit(pid), unit.hasPrefix("app-flatpak-"), let app = appID(fromUnit: unit) else { return nil }
            return .flatpak(appID: app, ownUserNamespace: true)
        }
        guard let shared = sharesUserNamespace(pid: pid, procRoot: procRoot) else {
            if let flatpak = flatpakByUnit() { return flatpak }
            if ownsPIDNamespace(pid: pid, procRoot: procRoot) { return .pidNamespace }
            return .uninspectable(reason: "cannot read \(procRoot)/\(pid)/ns/user")
        }
        if !shared && !readingForeignRoots { return flatpakByUnit() ?? .userNamespace }
        switch flatpakInfo(pid: pid, procRoot: procRoot) {
        case .present(let app): return .flatpak(appID: app, ownUserNamespace: !shared)
        case .uninspectable(let reason): return .uninspectable(reason: reason)
        case .absent: break
        }
        if !shared { return .userNamespace }
        if let name = snapName(fromLabel: securityLabel(pid: pid, procRoot: procRoot)) { return .snap(name: name) }
        return .none
    }

    /// Whether `pid` runs in the caller's user namespace; nil when that cannot be read.
    ///
    /// A process can only ever move into a user namespace it holds `CAP_SYS_ADMIN` over, so
    /// an unprivileged process that created its own can never come back; and only a
    /// privileged process can give a process of the caller's namespace another root
    /// (`chroot` and new mount namespaces need capabilities there). A sandbox marker seen in
    /// a process that shares the namespace was therefore placed by a privileged process.
    public static func sharesUserNamespace(pid: Int32, procRoot: String = "/proc") -> Bool? {
        guard pid > 0, let theirs = fileIdentity("\(procRoot)/\(pid)/ns/user"),
            let ours = fileIdentity("\(procRoot)/self/ns/user")
        else { return nil }
        return theirs == ours
    }

    /// Whether `pid` runs in a pid namespace below the caller's: its `NSpid:` line (in
    /// `status`, which anyone may read) lists one pid per namespace level.
    static func ownsPIDNamespace(pid: Int32, procRoot: String) -> Bool {
        guard pid > 0, let status = try? readSmallFile("\(procRoot)/\(pid)/status", limit: 64 * 1024) else { return false }
        let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("NSpid:") }
        return (line?.split(whereSeparator: { $0 == " " || $0 == "\t" }).count ?? 0) > 2
    }

    /// The file `pid` executes. `stat` through `/proc/PID/exe` reaches the very file the
    /// kernel runs, where the link's text is only a path in the process's own mount
    /// namespace (a bind mount there can make any file look like `/usr/bin/app`).
    public static func executableFile(pid: Int32, procRoot: String = "/proc") -> FileIdentity? {
        guard pid > 0 else { return nil }
        return fileIdentity("\(procRoot)/\(pid)/exe")
    }

    /// The file at `path` when no one but root can have put it there or can change it: the
    /// path is absolute, and the file and every directory above it (symlinks resolved) are
    /// owned by root and writable by no other user (group write only for root's group).
    /// Nil otherwise — a file in a world-writable directory such as `/tmp`, or in a home.
    public static func rootControlledFile(atPath path: String) -> RootControlledFile? {
        guard path.hasPrefix("/"), let resolvedPointer = realpath(path, nil) else { return nil }
        let resolved = String(cString: resolvedPointer)
        free(resolvedPointer)
        var prefix = ""
        var directories = ["/"]
        let components = resolved.split(separator: "/")
        for component in components.dropLast() {
            prefix += "/" + component
            directories.append(prefix)
        }
        for directory in directories {
            // lstat: after realpath a symlink here means the path changed meanwhile.
            guard let status = linkStatus(directory), status.st_mode & S_IFMT == S_IFDIR, isRootControlled(status) else { return nil }
        }
        guard let status = linkStatus(resolved), status.st_mode & S_IFMT == S_IFREG, isRootControlled(status) else { return nil }
        return RootControlledFile(path: resolved, identity: FileIdentity(status))
    }

    /// The AppArmor label of `pid` (`unconfined`, `snap.firefox.firefox (enforce)`), or nil
    /// without AppArmor.
    static func securityLabel(pid: Int32, procRoot: String) -> String? {
        for path in ["\(procRoot)/\(pid)/attr/apparmor/current", "\(procRoot)/\(pid)/attr/current"] {
            guard let bytes = try? readSmallFile(path, limit: 4096) else { continue }
            let label = String(decoding: bytes.prefix { $0 != 0 && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            if !label.isEmpty { return label }
        }
        return nil
    }

    /// The snap name of a strictly confined Snap's AppArmor label, `snap.<name>.<app> (mode)`.
    static func snapName(fromLabel label: String?) -> String? {
        guard let label, label.hasPrefix("snap.") else { return nil }
        let profile = label.prefix { $0 != " " }
        let parts = profile.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, !parts[1].isEmpty else { return nil }
        return String(parts[1])
    }

    private static func isRootControlled(_ status: stat) -> Bool {
        status.st_uid == 0 && status.st_mode & S_IWOTH == 0 && (status.st_mode & S_IWGRP == 0 || status.st_gid == 0)
    }

    private static func fileIdentity(_ path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(status)
    }

    private static func linkStatus(_ path: String) -> stat? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status
    }
}
