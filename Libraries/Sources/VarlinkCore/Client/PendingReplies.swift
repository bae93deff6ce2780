import DequeModule
package import OrderedJSON

/// The calls of one client connection that wait for replies, oldest first: a server answers
/// a connection's calls in the order they were made, so every reply is the oldest call's.
package struct PendingReplies {
    /// What waits for the replies to one call.
    package enum Awaiting: Sendable {
        /// One reply, successful or an error.
        case reply(CheckedContinuation<VarlinkReply, any Error>)
        /// Each reply's parameters until one comes without `continues`; an error reply ends
        /// the stream by throwing `VarlinkError`.
        case stream(AsyncThrowingStream<JSONObject, any Error>.Continuation)

        package func fail(_ error: any Error) {
            switch self {
            case .reply(let continuation): continuation.resume(throwing: error)
            case .stream(let continuation): continuation.finish(throwing: error)
            }
        }
    }

    private var waiting = Deque<Awaiting>()

    package init() {}

    package mutating func expect(_ awaiting: Awaiting) {
        waiting.append(awaiting)
    }

    /// Hands a reply (a message without its NUL) to the call it answers. Throws when it is
    /// not a reply or answers no call: then nothing more on the connection can be trusted.
    package mutating func receive(_ frame: some Collection<UInt8>) throws(VarlinkClientError) {
        let reply: VarlinkReply
        do {
            reply = try VarlinkReply(frame: frame)
        } catch {
            throw .invalidReply(error.reason)
        }
        guard let head = waiting.first else { throw .invalidReply("a reply arrived for no call") }
        switch head {
        case .reply(let continuation):
            waiting.removeFirst()
            continuation.resume(returning: reply)
        case .stream(let continuation):
            if let error = reply.error {
                waiting.removeFirst()
                continuation.finish(throwing: VarlinkError(error, reply.parameters))
            } else {
                continuation.yield(reply.parameters)
                if !reply.continues {
                    waiting.removeFirst()
                    continuation.finish()
                }
            }
        }
    }

    /// Ends every waiting call with `error`.
    package mutating func failAll(_ error: any Error) {
        while let next = waiting.popFirst() { next.fail(error) }
    }
}
