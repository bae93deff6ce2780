public import OrderedJSON
import Logging
import Synchronization

/// Answers one call. Safe to use from any thread; replies after the final one are ignored.
///
/// One is made for every call: it holds the call's method (for the checks of debug builds)
/// and whether it takes `continues`, not the call itself — a copy of the call, its interface
/// and a logger were eighteen retains and as many releases on every update.
public final class VarlinkResponder: Sendable {
    private let route: VarlinkRoute
    /// The call was made with `more`.
    private let more: Bool
    /// The call was made with `oneway`: its caller wants no reply, and the transport discards
    /// the one it is sent. A handler may skip the work of making it (`reply(encoded:)` then
    /// takes anything, unchecked).
    public let discardsReply: Bool
    private let sink: any VarlinkReplySink
    #if DEBUG
    private let logger: Logger
    #endif
    private let finished = Atomic<Bool>(false)

    init(route: VarlinkRoute, more: Bool, oneway: Bool = false, sink: any VarlinkReplySink, logger: Logger) {
        self.route = route
        self.more = more
        self.discardsReply = oneway
        self.sink = sink
        #if DEBUG
        self.logger = logger
        #endif
    }

    /// Sends a reply. `continues` is honoured only for a call made with `more`; otherwise
    /// the reply ends the call.
    public func reply(_ parameters: JSONObject, continues: Bool = false) {
        #if DEBUG
        assertConforms(parameters)
        #endif
        let continues = continues && more
        if !continues {
            guard finished.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        } else if finished.load(ordering: .acquiring) {
            return
        }
        sink.send(VarlinkReply(parameters: parameters, continues: continues), final: !continues)
    }

    /// Sends the final reply, its parameters encoded by the caller (off the event loop, say).
    public func reply(encoded parameters: VarlinkEncodedParameters) {
        #if DEBUG
        if !discardsReply { assertConforms(parameters) }
        #endif
        guard finished.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        sink.send(VarlinkReply(encoded: parameters), final: true)
    }

    /// Sends a reply that continues a streaming call, encoded once by the caller (the same
    /// update fanned out to many subscribers).
    public func reply(continuing parameters: VarlinkEncodedParameters) {
        guard more, !finished.load(ordering: .acquiring) else { return }
        #if DEBUG
        assertConforms(parameters)
        #endif
        sink.send(VarlinkReply(encoded: parameters, continues: true), final: false)
    }

    /// Sends replies that continue a streaming call, encoded once by the caller, in one
    /// hand-over to the transport.
    public func reply(continuing batch: [VarlinkEncodedParameters]) {
        guard more, !batch.isEmpty, !finished.load(ordering: .acquiring) else { return }
        #if DEBUG
        for encoded in batch { assertConforms(encoded) }
        #endif
        sink.send(continuing: batch.map { VarlinkReply(encoded: $0, continues: true) })
    }

    #if DEBUG
    private func assertConforms(_ encoded: VarlinkEncodedParameters) {
        assertConforms(VarlinkReply(encoded: encoded).parameters)
    }

    private func assertConforms(_ parameters: JSONObject) {
        if let field = route.interface.firstInvalidField(in: parameters, of: route.signature.output) {
            logger.critical("reply does not match the output type", metadata: ["method": "\(route.method)", "field": "\(field)"])
            assertionFailure("\(route.method) replied with invalid field '\(field)': \(JSON.object(parameters))")
        }
    }
    #endif

    /// Ends the call with a named error; with `closingConnection`, the connection too, once
    /// the error is written (a stream that could not keep within its bounds).
    public func fail(_ error: VarlinkError, closingConnection: Bool = false) {
        guard finished.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        sink.send(VarlinkReply(error: error), final: true)
        if closingConnection { sink.closeConnection() }
    }

    /// Runs `callback` if the peer goes away before the call has had its final reply, so a
    /// streaming handler can stop producing.
    public func onCancel(_ callback: @escaping @Sendable () -> Void) {
        sink.onCancel(callback)
    }

    /// Whether the peer is reading its replies fast enough for more to be sent without
    /// queueing in the server. Streams use it to coalesce instead of piling up output.
    public var isWritable: Bool { sink.isWritable }

    /// Lets the next pipelined call on the connection start before this one's reply.
    public func releaseConnection() {
        sink.releaseConnection()
    }

    /// Whether the call has had its final reply.
    public var isFinished: Bool { finished.load(ordering: .acquiring) }
}
