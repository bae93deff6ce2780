#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
public import VarlinkCore

extension VarlinkClient {
    /// A client of `service` connected to it in memory. Its calls are encoded, sequenced
    /// (`ServerConnectionStateMachine`) and answered as on a socket, with no socket, event
    /// loop or framing in between: for tests where a socket adds nothing.
    /// - Parameter peer: the credentials the service sees; by default this process's own.
    public static func inProcess(_ service: VarlinkService, peer: PeerCredentials? = PeerCredentials.thisProcess) -> VarlinkClient {
        let context = VarlinkConnectionContext(id: inProcessConnections.add(1, ordering: .relaxed).newValue, peer: peer)
        return VarlinkClient(transport: InProcessConnection(service: service, context: context))
    }
}

private let inProcessConnections = Atomic<UInt64>(0)

extension PeerCredentials {
    /// This process, as a peer connected from it would be seen.
    public static var thisProcess: PeerCredentials {
        PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid())
    }
}
