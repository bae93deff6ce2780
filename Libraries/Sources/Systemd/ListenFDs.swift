#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// A socket that the service manager (or `systemd-socket-activate`) opened on our behalf.
public struct ListenedSocket: Sendable, Hashable {
    /// The file descriptor, already open and marked close-on-exec.
    public var fd: Int32
    /// The name from `FileDescriptorName=` (or `LISTEN_FDNAMES`); `"unknown"` when none was given.
    public var name: String

    /// Creates a value describing an already open socket.
    public init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }
}

/// Socket activation as described in `sd_listen_fds(3)`.
public enum SocketActivation {
    /// Takes ownership of the sockets passed to this process through `LISTEN_FDS`.
    ///
    /// Call this once, early, before any other thread runs: with `unsetEnvironment` it calls
    /// `unsetenv(3)`, which is not thread-safe, and the variables are cleared so that child
    /// processes do not mistake our descriptors for theirs.
    ///
    /// - Parameter unsetEnvironment: Remove `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES`
    ///   from the environment afterwards.
    /// - Returns: The sockets in the order the manager passed them (descriptors 3, 4, …), or an
    ///   empty array when the process was not socket activated or `LISTEN_PID` names another process.
    public static func takeListenedSockets(unsetEnvironment: Bool = true) -> [ListenedSocket] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
        let count = sd_listen_fds_with_names(unsetEnvironment ? 1 : 0, &names)
        // libsystemd hands us a NULL-terminated strv allocated with malloc: every element and the
        // array itself are ours to free, whatever the count turned out to be.
        defer {
            if let names {
                var index = 0
                while let name = names[index] {
                    free(name)
                    index += 1
                }
                free(names)
            }
        }
        guard count > 0 else { return [] }

        return (0..<Int(count)).map { index in
            let name = names?[index].map { String(cString: $0) } ?? "unknown"
            return ListenedSocket(fd: SD_LISTEN_FDS_START + Int32(index), name: name)
        }
    }

    /// Whether `fd` is a listening `AF_UNIX` stream socket, i.e. something we can `accept(2)` on.
    public static func isUnixStreamListener(_ fd: Int32) -> Bool {
        sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0
    }
}
