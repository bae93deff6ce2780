#if canImport(Glibc)
import Glibc
#endif
import FreeDesktop

/// Where the daemon's socket is, decided in one place so that the daemon and every client
/// agree on it (the daemon once fell back to a temp directory while clients looked in
/// `/run/user/UID`).
package enum SocketLocation {
    /// The system instance's socket.
    package static let system = "/run/island/islandd.sock"

    /// The user's runtime directory: `$XDG_RUNTIME_DIR` when it is absolute (the base-directory
    /// spec says to ignore a relative one), else `/run/user/UID`, the directory pam_systemd
    /// makes. Never a shared directory such as the system temp dir: anyone can create a
    /// directory there first and own what the daemon then puts in it.
    package static func userRuntimeDirectory(environment: [String: String], uid: UInt32) -> String {
        BaseDirectories(environment: environment).runtimeDirectory ?? "/run/user/\(uid)"
    }

    /// The user instance's socket in the runtime directory.
    package static func user(environment: [String: String], uid: UInt32) -> String {
        userRuntimeDirectory(environment: environment, uid: uid) + "/island/islandd.sock"
    }

    /// Where a client connects unless told: `$ISLAND_SOCKET`, else the user instance's socket.
    package static func client(environment: [String: String], uid: UInt32) -> String {
        if let socket = environment["ISLAND_SOCKET"], !socket.isEmpty { return socket }
        return user(environment: environment, uid: uid)
    }
}
