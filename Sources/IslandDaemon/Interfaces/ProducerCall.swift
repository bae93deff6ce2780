import IslandCore
import IslandStore
import OrderedCollections
import VarlinkCore

/// The reply of a `oneway` call, which nobody reads: made once.
private let noReply = VarlinkEncodedParameters([:])

/// What a producer's change decided, as its call keeps it from the decision until its reply is
/// encoded: one concrete type for every call. `ProducerCall` is generic, and a generic class's
/// fields are destroyed by its unspecialized deinit, which for a field of type `Decided?` looked
/// `Optional<Decided>`'s metadata up in the runtime's cache on every call (~330 instructions);
/// a field of this type is destroyed as any concrete value is.
enum KeptDecision: Sendable {
    /// Nothing decided yet, or the reply already encoded.
    case nothing
    case update(UpdateOutcome)
    case activity(Activity)
    case request(RequestDecision)
}

/// What a producer's call may decide: kept as a `KeptDecision` until its reply is encoded.
protocol ProducerDecision: Sendable {
    var kept: KeptDecision { get }
    /// The decision `kept` holds, which is of this kind: the call that kept it made it of one
    /// (not an optional, whose metadata the generic call would look up again).
    init(kept: KeptDecision)
}

extension UpdateOutcome: ProducerDecision {
    var kept: KeptDecision { .update(self) }
    init(kept: KeptDecision) {
        guard case .update(let outcome) = kept else { preconditionFailure("an update's call kept another decision") }
        self = outcome
    }
}

extension Activity: ProducerDecision {
    var kept: KeptDecision { .activity(self) }
    init(kept: KeptDecision) {
        guard case .activity(let activity) = kept else { preconditionFailure("an end's call kept another decision") }
        self = activity
    }
}

/// What a `Request` decided: the activity, whether it was created (not an idempotent repeat),
/// and its push token when one was asked for.
struct RequestDecision: ProducerDecision {
    var activity: Activity
    var created: Bool
    var pushToken: String?

    init(_ activity: Activity, created: Bool, pushToken: String?) {
        (self.activity, self.created, self.pushToken) = (activity, created, pushToken)
    }

    var kept: KeptDecision { .request(self) }
    init(kept: KeptDecision) {
        guard case .request(let decision) = kept else { preconditionFailure("a request's call kept another decision") }
        self = decision
    }
}

/// A producer's mutation (`Request`, `Update`, `End`) on its way through the engine's
/// pipeline, as one object: it releases the connection once the change is decided, encodes
/// the reply from what the decision returned on the store's writer thread once the change is
/// committed, and answers on the engine. The steps' order is `DecisionWaiter`'s, which is what
/// makes its plain stored properties safe to share between the two threads.
final class ProducerCall<Decided: ProducerDecision>: DecisionTaker, @unchecked Sendable {
    private let responder: VarlinkResponder
    /// The reply's encoder, or for a `oneway` call, whose reply is thrown away unread
    /// (`VarlinkResponder.discardsReply`), one that writes nothing.
    let encoder: @Sendable (Decided) -> VarlinkEncodedParameters
    /// A `oneway` call's sender waits for nothing: its commit may linger.
    let isAwaited: Bool
    // Written and read in the order of the steps: never at once.
    private var result = KeptDecision.nothing
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

    func take(_ decided: Decided) { result = decided.kept }

    func decided() { responder.releaseConnection() }

    func committed(_ outcome: Result<Void, StoreError>) {
        if case .success = outcome {
            if case .nothing = result {} else { reply = encoder(Decided(kept: result)) }
        }
        result = .nothing
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
