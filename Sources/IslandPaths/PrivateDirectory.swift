#if canImport(Glibc)
import Glibc
#endif

/// Checks that a directory the daemon serves its socket in (or keeps its state in) is under
/// the control of no one but its own user and root, so no other user can replace the socket
/// or read what is behind it.
package enum PrivateDirectory {
    package struct Refusal: Error, Equatable, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "\(path): \(reason)" }

        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// The XDG runtime directory's own rule ("MUST be owned by the user, and they MUST be the
    /// only one having read and write access to it. Its Unix access mode MUST be 0700"),
    /// checked without following a symbolic link at `path` itself.
    package static func checkRuntimeDirectory(_ path: String, uid: UInt32) throws(Refusal) {
        let info = try status(of: path)
        guard info.st_uid == uid else {
            throw Refusal(path: path, reason: "the runtime directory is owned by uid \(info.st_uid), not by uid \(uid)")
        }
        guard info.st_mode & 0o7777 == 0o700 else {
            throw Refusal(path: path, reason: "the runtime directory has mode \(octal(info.st_mode & 0o7777)), not 0700")
        }
    }

    /// A directory the daemon is about to use: a directory (not a link to one), owned by `uid`
    /// or root, and writable by no one else unless it is sticky (like /tmp, where others can
    /// add names but not remove or replace ours).
    package static func checkOwned(_ path: String, uid: UInt32) throws(Refusal) {
        let info = try status(of: path)
        guard info.st_uid == uid || info.st_uid == 0 else {
            throw Refusal(path: path, reason: "owned by uid \(info.st_uid); only uid \(uid) or root may own a directory islandd serves from")
        }
        let sticky = info.st_mode & mode_t(S_ISVTX) != 0
        guard info.st_mode & 0o022 == 0 || sticky else {
            throw Refusal(path: path, reason: "writable by other users (mode \(octal(info.st_mode & 0o7777))), so they could replace the socket")
        }
    }

    /// `lstat` of `path`, refusing anything but a directory.
    private static func status(of path: String) throws(Refusal) -> stat {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw Refusal(path: path, reason: reason.lowercased())
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Refusal(path: path, reason: "not a directory (a symbolic link or another file)")
        }
        return info
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension PrivateDirectory {
    /// `checkOwned` for `path` and every directory above it: whoever may rename any of them
    /// could put a directory of their own in its place.
    package static func checkTree(_ path: String, uid: UInt32) throws(Refusal) {
        var current = path
        while true {
            try checkOwned(current, uid: uid)
            guard let slash = current.lastIndex(of: "/"), current != "/" else { return }
            current = slash == current.startIndex ? "/" : String(current[..<slash])
        }
    }
}
