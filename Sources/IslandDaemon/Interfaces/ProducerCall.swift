import IslandStore
import OrderedCollections
import VarlinkCore

/// The reply of a `oneway` call, which nobody reads: made once.
private let noReply = VarlinkEncodedParameters([:])

/// A producer's mutation (`Request`, `Update`, `End`) on its way through the engine's
/// pipeline, as one object: it releases the connection once the change is decided, encodes
/// the reply from what the decision returned on the store's writer thread once the change is
/// committed, and answers on the engine. The steps' order is `DecisionWaiter`'s, which is what
/// makes its plain stored properties safe to share between the two threads.
final class ProducerCall<Decided: Sendable>: DecisionTaker, @unchecked Sendable {
    private let responder: VarlinkResponder
    /// The reply's encoder, or for a `oneway` call, whose reply is thrown away unread
    /// (`VarlinkResponder.discardsReply`), one that writes nothing.
    let encoder: @Sendable (Decided) -> VarlinkEncodedParameters
    /// A `oneway` call's sender waits for nothing: its commit may linger.
    let isAwaited: Bool
    // Written and read in the order of the steps: never at once.
    private var result: Decided?
    private var reply: VarlinkEncodedParameters?

    init(responder: VarlinkResponder, encode: @escaping @Sendable (Decided) -> VarlinkEncodedParameters) {
        self.responder = responder
        self.isAwaited = !responder.discardsReply
        if responder.discardsReply {
            self.encoder = { _ in noReply }
        } else {
            self.encoder = encode
        }
    }

    func take(_ decided: Decided) { result = decided }

    func decided() { responder.releaseConnection() }

    func committed(_ outcome: Result<Void, StoreError>) {
        if case .success = outcome, let result { reply = encoder(result) }
        result = nil
    }

    func finish(_ outcome: Result<Void, EngineError>, on engine: isolated IslandEngine) {
        switch outcome {
        case .success: responder.reply(encoded: reply ?? noReply)
        case .failure(let error): responder.fail(VarlinkError(error))
        }
    }

    /// The answer of a change made through the engine's closures (a push's).
    func answer(_ outcome: Result<VarlinkEncodedParameters, EngineError>) {
        switch outcome {
        case .success(let encoded): responder.reply(encoded: encoded)
        case .failure(let error): responder.fail(VarlinkError(error))
        }
    }

    /// The call is refused before it reaches the engine's pipeline.
    func refuse(_ error: VarlinkError) { responder.fail(error) }
}
