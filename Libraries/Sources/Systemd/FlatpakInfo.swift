#if canImport(Glibc)
import Glibc
#endif
import SmallFiles
import FreeDesktop

extension ProcessIdentity {
    /// What `/.flatpak-info` in a process's root says.
    public enum FlatpakInfo: Equatable, Sendable {
        /// There is no such file: the process is not in a Flatpak sandbox.
        case absent
        /// The file is there; `appID` is the `name=` of its `[Application]` group, nil when
        /// that is missing or not an app id.
        case present(appID: String?)
        /// The root or the file could not be read, or is not a regular file. The caller
        /// must not conclude "not a Flatpak": a sandboxed app that made itself undumpable
        /// (`PR_SET_DUMPABLE`) hides its root this way.
        case uninspectable(reason: String)
    }

    /// Reads `/.flatpak-info` inside the root of `pid`, as xdg-desktop-portal does: the root
    /// is opened as a directory first and the file inside it without following a symlink,
    /// and only a regular file counts.
    ///
    /// Whatever this says is the word of whoever built the process's mount namespace: any
    /// user can `unshare -Ur` and `chroot` into a directory holding such a file. Whether that
    /// builder is trusted is the caller's question (see `sharesUserNamespace(pid:)`).
    ///
    /// - Parameter procRoot: Where procfs is mounted; tests point it at a fake tree.
    public static func flatpakInfo(pid: Int32, procRoot: String = "/proc") -> FlatpakInfo {
        guard pid > 0 else { return .uninspectable(reason: "no process id") }
        let rootPath = "\(procRoot)/\(pid)/root"
        let root = open(rootPath, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard root >= 0 else { return .uninspectable(reason: "cannot open \(rootPath): \(String(cString: strerror(errno)))") }
        defer { close(root) }
        // A symlink would be resolved against the daemon's root, not the process's, and read
        // one of the daemon's files; a FIFO would block the daemon in open(2).
        let file = openat(root, ".flatpak-info", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard file >= 0 else {
            return errno == ENOENT ? .absent : .uninspectable(reason: "cannot open \(rootPath)/.flatpak-info: \(String(cString: strerror(errno)))")
        }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return .uninspectable(reason: "\(rootPath)/.flatpak-info is not a regular file")
        }
        guard let contents = try? readSmallFile(descriptor: file, limit: 64 * 1024) else {
            return .uninspectable(reason: "cannot read \(rootPath)/.flatpak-info")
        }
        // A GKeyFile; `name[de]=` would be another key.
        let name = KeyFile(parsing: String(decoding: contents, as: UTF8.self), syntax: .desktopEntry).value("name", inGroup: "Application")
        return .present(appID: name.flatMap { isReverseDNSName($0) ? $0 : nil })
    }

    /// The Flatpak application ID of `pid`, when its root holds a `.flatpak-info` that names
    /// one; a claim, not a proof (see `flatpakInfo(pid:procRoot:)`).
    public static func flatpakAppID(pid: Int32, procRoot: String = "/proc") -> String? {
        guard case .present(let app) = flatpakInfo(pid: pid, procRoot: procRoot) else { return nil }
        return app
    }
}
