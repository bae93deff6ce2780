public import OrderedJSON
public import OrderedCollections

/// Why a client call did not get an answer.
public enum VarlinkClientError: Error, Sendable, Equatable {
    /// The connection closed before the call's final reply.
    case connectionClosed
    /// The server sent something that is not a Varlink reply.
    case invalidReply(String)
}

/// What carries a client's calls to a server and brings the replies back: a Unix socket
/// (VarlinkNIO's `VarlinkClient.connect(unixPath:)`), or memory (VarlinkInProcess).
package protocol VarlinkClientTransport: Sendable {
    /// Sends a call — its message, without the NUL — after every call sent before it, and hands
    /// its replies to `awaiting` (nil for a oneway call); `written` resumes once the transport
    /// has taken the call, or fails if it cannot.
    func send(_ message: [UInt8], awaiting: PendingReplies.Awaiting?, written: CheckedContinuation<Void, any Error>?)
    func close() async
}

/// A Varlink client on one connection. Calls may be issued concurrently; they are pipelined
/// on the connection and their replies matched in order.
public final class VarlinkClient: Sendable {
    private let transport: any VarlinkClientTransport

    package init(transport: any VarlinkClientTransport) {
        self.transport = transport
    }

    /// Calls `method` and returns the parameters of its reply; an error reply throws
    /// `VarlinkError`.
    public func call(_ method: String, _ parameters: JSONObject = [:]) async throws -> JSONObject {
        try await reply(to: VarlinkCall(method: method, parameters: parameters))
    }

    /// Calls `method` with `more` and yields each reply's parameters until one arrives
    /// without `continues`; an error reply ends the stream by throwing `VarlinkError`.
    public func stream(_ method: String, _ parameters: JSONObject = [:]) -> AsyncThrowingStream<JSONObject, any Error> {
        let (stream, continuation) = AsyncThrowingStream<JSONObject, any Error>.makeStream()
        transport.send(VarlinkCall(method: method, parameters: parameters, more: true).encoded(), awaiting: .stream(continuation), written: nil)
        return stream
    }

    /// Sends a `oneway` call; the server answers nothing. Returns once it is written.
    public func oneway(_ method: String, _ parameters: JSONObject = [:]) async throws {
        let message = VarlinkCall(method: method, parameters: parameters, oneway: true).encoded()
        try await withCheckedThrowingContinuation { written in transport.send(message, awaiting: nil, written: written) }
    }

    /// Sends a raw call, for callers that need its flags exactly as given.
    public func send(raw call: VarlinkCall) async throws -> JSONObject {
        guard !call.oneway else {
            transport.send(call.encoded(), awaiting: nil, written: nil)
            return [:]
        }
        return try await reply(to: call)
    }

    public func close() async {
        await transport.close()
    }

    private func reply(to call: VarlinkCall) async throws -> JSONObject {
        let message = call.encoded()
        let reply = try await withCheckedThrowingContinuation { continuation in
            transport.send(message, awaiting: .reply(continuation), written: nil)
        }
        if let error = reply.error { throw VarlinkError(error, reply.parameters) }
        return reply.parameters
    }
}
