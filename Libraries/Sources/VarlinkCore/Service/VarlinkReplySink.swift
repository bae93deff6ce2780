/// Where the replies of one call go. The transport implements it; `final` marks the reply
/// that ends the call.
public protocol VarlinkReplySink: Sendable {
    func send(_ reply: VarlinkReply, final: Bool)
    /// Sends replies that continue the call, in order, in one hand-over to the transport.
    func send(continuing replies: [VarlinkReply])
    /// Runs `callback` once if the call ends without its final reply (the connection
    /// closed); at once if that already happened.
    func onCancel(_ callback: @escaping @Sendable () -> Void)
    /// Whether the peer is keeping up with its replies. A streaming handler that sees false
    /// should hold back and coalesce rather than queue more.
    var isWritable: Bool { get }
    /// The call's outcome is decided; the next pipelined call may start before its reply.
    func releaseConnection()
    /// Closes the connection once the replies sent so far are written.
    func closeConnection()
}

extension VarlinkReplySink {
    public func releaseConnection() {}
    public func closeConnection() {}

    public func send(continuing replies: [VarlinkReply]) {
        for reply in replies { send(reply, final: false) }
    }
}
