/// The kernel-verified credentials of the peer process (`SO_PEERCRED`).
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}
