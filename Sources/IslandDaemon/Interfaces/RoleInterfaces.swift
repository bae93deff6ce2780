import IslandCore
import OrderedJSON
import IslandProtocol
import OrderedCollections
import VarlinkCore

/// The four role interfaces of Protocol/, each method a thin translation between Varlink and
/// the engine: its parameters read by their decoder (MethodParameters.varlinkmap), the connection's
/// role bound or checked, the engine called, and its answer or refusal put in wire form
/// (Wire/).
struct RoleInterfaces: Sendable {
    let engine: IslandEngine
    /// Push's tokens, which `Request`, `List`, `PushToken` and `PushToStartToken` ask for.
    let push: PushGateway
    let roles: RoleBinder
    let scope: DaemonScope
    let version: String

    var implementations: [VarlinkImplementation] {
        [
            VarlinkImplementation(interface: try! VarlinkInterface(parsing: IslandInterfaces.errors), handlers: [:]),
            producer, extensionRole, presenter, admin,
        ]
    }

    /// Calls the engine, naming its refusal for the client.
    private static func refusalsNamed<T>(_ body: () async throws(EngineError) -> T) async throws(VarlinkError) -> T {
        do {
            return try await body()
        } catch {
            throw VarlinkError(error)
        }
    }

    /// Runs `body`, ending the call with the error it throws.
    private static func failing(_ responder: VarlinkResponder, _ body: () throws(VarlinkError) -> Void) {
        do {
            try body()
        } catch {
            responder.fail(error)
        }
    }

    // MARK: org.island.Producer

    /// Binds or checks the connection's producer role, on the engine.
    private func producerApp(
        claim: String?, _ connection: VarlinkConnectionContext,
        on engine: isolated IslandEngine
    ) throws(VarlinkError) -> String {
        try Self.producerApp(claim: claim, connection, roles: roles, on: engine)
    }

    private static func producerApp(
        claim: String?, _ connection: VarlinkConnectionContext, roles: RoleBinder,
        on engine: isolated IslandEngine
    ) throws(VarlinkError) -> String {
        // A connection counted as a producer's is bound to that app for good: its later calls
        // need not bind again (`RoleBinder.bind` reads the role, then this, on every update).
        // Another claim goes through `bind`, which refuses it by name.
        if let registered = connection.attachment(ProducerRegistration.self), claim == nil || claim == registered.app {
            return registered.app
        }
        let role = try roles.bind(.producer(claim: claim), connection: connection)
        guard case .producer(let app) = role else { throw VarlinkError.permissionDenied }
        // The first producer call of a connection counts it for the producer-death policy.
        if connection.attachment(ProducerRegistration.self) == nil {
            connection.setAttachment(ProducerRegistration(app: app))
            let uid = connection.peer?.uid
            engine.producerConnected(app: app, uid: uid, confined: roles.isSandboxed(connection.peer))
            connection.onClose { [engine] in engine.performLater { $0.producerDisconnected(app: app, uid: uid) } }
        }
        return app
    }

    private func producerApp(claim: String?, _ connection: VarlinkConnectionContext) async throws(VarlinkError) -> String {
        try await producerApp(claim: claim, connection, on: engine)
    }

    /// The connection is counted as a producer of `app`, to which its role is bound.
    private struct ProducerRegistration: Sendable {
        let app: String
    }

    /// Why `app` may not head an activity with `sourceApp`: it does not speak for other apps
    /// (`RoleBinder.sourceAppRefusal`), or no such app is installed; nil when it may.
    private static func sourceAppRefusal(
        _ sourceApp: String, app: String, _ connection: VarlinkConnectionContext,
        roles: RoleBinder, registry: AppRegistry
    ) -> EngineError? {
        // Looked up once per connection, like its role: a producer requesting again and again
        // does not make the daemon inspect its process again and again.
        let standing =
            connection.attachment(SourceAppStanding.self)
            ?? connection.attachIfAbsent(SourceAppStanding(refusal: roles.sourceAppRefusal(app: app, peer: connection.peer)))
        if let reason = standing.refusal { return .speaksOnlyForItself(reason: reason) }
        guard registry.manifest(for: sourceApp) != nil else { return .noSuchSourceApp(app: sourceApp) }
        return nil
    }

    /// Whether the connection's producer may speak for other apps, and if not, why.
    private struct SourceAppStanding: Sendable {
        let refusal: String?
    }

    /// A producer's mutation, made on the engine as soon as the call is read — no task per
    /// call. `start` hands the engine the call's parameters and the call itself
    /// (`ProducerCall`), which releases the connection once the change is decided, so
    /// pipelined calls overlap their commits (and share them: group commit) while replies
    /// keep their order, and encodes the reply on the store's writer thread once the change is
    /// committed.
    private func mutation<Parameters: VarlinkReadableParameters & AppClaiming & SendableMetatype, T: ProducerDecision>(
        _: Parameters.Type,
        _ start:
            @escaping @Sendable (
                isolated IslandEngine, Parameters, _ app: String, _ connection: VarlinkConnectionContext, _ call: ProducerCall<T>
            ) -> Void,
        reply: @escaping @Sendable (T, inout JSONText) -> Void
    ) -> VarlinkMethodHandler {
        // The reply's encoder is made once, not for every call.
        let encode: @Sendable (T) -> VarlinkEncodedParameters = { value in
            // Room for the activity the reply carries, its content twice: more than 1 KB with
            // a state of a few hundred bytes, and growing the text copies it.
            var text = JSONText(capacity: 2048)
            text.openObject()
            reply(value, &text)
            text.closeObject()
            return VarlinkEncodedParameters(text)
        }
        let method = ProducerMethod(roles: roles, start: start)
        // Each call's closures hold only what they use: not this struct, nor the whole request.
        return .responding { [engine, method] request, responder in
            let parameters: Parameters
            do throws(VarlinkError) {
                parameters = try request.parameters(as: Parameters.self)
            } catch {
                return responder.fail(error)
            }
            let connection = request.connection
            let call = ProducerCall(responder: responder, encode: encode)
            // On the engine's loop, where connections are served, at once and with nothing
            // allocated to carry the call there.
            if engine.isOnLoop {
                Self.startOnLoop(call, parameters, connection, method, engine)
            } else {
                engine.perform { Self.start(call, parameters, connection, method, on: $0) }
            }
        }
        .reading(Parameters.self)
    }

    /// What a producer's mutation does with each call, made once per method: the role binder
    /// and the engine's operation, handed to `start` as one argument.
    private struct ProducerMethod<Parameters, T: ProducerDecision>: Sendable {
        let roles: RoleBinder
        let start:
            @Sendable (
                isolated IslandEngine, Parameters, _ app: String, _ connection: VarlinkConnectionContext, _ call: ProducerCall<T>
            ) -> Void
    }

    /// Binds or checks the connection's producer role and starts the call's change.
    private static func start<Parameters: AppClaiming, T: ProducerDecision>(
        _ call: ProducerCall<T>, _ parameters: Parameters, _ connection: VarlinkConnectionContext,
        _ method: ProducerMethod<Parameters, T>, on engine: isolated IslandEngine
    ) {
        do throws(VarlinkError) {
            let app = try producerApp(claim: parameters.app, connection, roles: method.roles, on: engine)
            method.start(engine, parameters, app, connection, call)
        } catch {
            call.refuse(error)
        }
    }

    /// `start` on the engine, from its loop's thread, as `IslandEngine.onLoop` enters it (and
    /// sound where that is: the engine's executor is this loop), but without a closure: the
    /// call's arguments go to `start` itself. A closure holding them went to the heap for
    /// every call, with a reabstraction thunk around it (`withoutActuallyEscaping` is generic
    /// over the closure's type), and copied the parameters. A reference to a function that
    /// captures nothing is no object, and none of the arguments is a function (a closure
    /// argument would be wrapped in a thunk by the cast): `method` carries the operation.
    @inline(__always)
    private static func startOnLoop<Parameters: AppClaiming & SendableMetatype, T: ProducerDecision>(
        _ call: ProducerCall<T>, _ parameters: Parameters, _ connection: VarlinkConnectionContext,
        _ method: ProducerMethod<Parameters, T>, _ engine: IslandEngine
    ) {
        assert(engine.isOnLoop, "the engine was entered off its event loop")
        typealias Isolated = (ProducerCall<T>, Parameters, VarlinkConnectionContext, ProducerMethod<Parameters, T>, isolated IslandEngine) -> Void
        typealias Unchecked = (ProducerCall<T>, Parameters, VarlinkConnectionContext, ProducerMethod<Parameters, T>, IslandEngine) -> Void
        let isolated: Isolated = Self.start
        unsafeBitCast(isolated, to: Unchecked.self)(call, parameters, connection, method, engine)
    }

    var producer: VarlinkImplementation {
        VarlinkImplementation(
            interface: try! VarlinkInterface(parsing: IslandInterfaces.producer),
            handlers: [
                "Request": mutation(
                    RequestParameters.self,
                    { [push, roles] engine, p, app, connection, call in
                        let uid = connection.peer?.uid
                        if let sourceApp = p.sourceApp,
                            let refusal = Self.sourceAppRefusal(
                                sourceApp, app: app, connection, roles: roles,
                                registry: engine.registry)
                        {
                            call.decided()
                            return call.answer(.failure(refusal))
                        }
                        if let channel = p.channel {
                            push.assumeIsolated { push in
                                push.request(
                                    channel: channel, alsoToken: p.pushToken, app: app, type: p.type, attributes: p.attributes,
                                    content: p.content, key: p.key, ownerGone: p.ownerGone, sourceApp: p.sourceApp, uid: uid,
                                    decided: call.decided,
                                    prepare: { [encode = call.encoder] in encode(RequestDecision($0.0, created: $0.1, pushToken: $0.2)) },
                                    completion: call.answer)
                            }
                        } else if p.pushToken {
                            push.assumeIsolated { push in
                                push.request(
                                    app: app, type: p.type, attributes: p.attributes, content: p.content, key: p.key,
                                    ownerGone: p.ownerGone, sourceApp: p.sourceApp, start: p.start, alert: p.alert, uid: uid,
                                    decided: call.decided,
                                    prepare: { [encode = call.encoder] in encode(RequestDecision($0.0, created: $0.1, pushToken: $0.2)) },
                                    completion: call.answer)
                            }
                        } else {
                            engine.request(
                                app: app, type: p.type, attributes: p.attributes, content: p.content, key: p.key,
                                ownerGone: p.ownerGone, sourceApp: p.sourceApp, start: p.start, alert: p.alert, uid: uid,
                                decided: call.decided, prepare: { [encode = call.encoder] in encode(RequestDecision($0.0, created: $0.1, pushToken: nil)) },
                                completion: call.answer)
                        }
                    },
                    reply: { (result: RequestDecision, text: inout JSONText) in
                        text.key("activity")
                        Wire.writeActivity(result.activity, pushToken: result.pushToken, to: &text)
                        text.member("created", bool: result.created)
                    }),
                "Update": mutation(
                    UpdateParameters.self,
                    { engine, p, app, connection, call in
                        engine.update(
                            app: app, uid: connection.peer?.uid, id: p.id, content: p.content, alert: p.alert, timestamp: p.timestamp,
                            waiter: call)
                    },
                    reply: { (outcome: UpdateOutcome, text: inout JSONText) in
                        text.key("activity")
                        Wire.writeActivity(outcome.activity, to: &text)
                        text.key("delivery")
                        text.openObject()
                        text.member("throttled", bool: outcome.throttled)
                        text.member("deliverAt", double: outcome.deliverAt)
                        text.member("alerted", bool: outcome.alerted)
                        text.member("alertSuppressed", bool: outcome.alertSuppressed)
                        if let suppression = outcome.alertSuppression { text.member("alertSuppressedReason", string: suppression.rawValue) }
                        text.closeObject()
                    }),
                "End": mutation(
                    EndParameters.self,
                    { engine, p, app, connection, call in
                        engine.end(
                            app: app, uid: connection.peer?.uid, id: p.id, content: p.content, dismissal: p.dismissal, timestamp: p.timestamp,
                            waiter: call)
                    },
                    reply: { (activity: Activity, text: inout JSONText) in
                        text.key("activity")
                        Wire.writeActivity(activity, to: &text)
                    }),
                "List": .async { [self] request throws(VarlinkError) in
                    let p = try ListParameters(request.call)
                    let app = try await producerApp(claim: p.app, request.connection)
                    let activities = await engine.list(app: app, uid: request.connection.peer?.uid, type: p.type, states: p.states)
                    return [ProducerNames.List.activities: .array(zip(activities, await push.tokens(of: activities)).map(Wire.activity))]
                },
                "Watch": .streaming { [self] request, responder in
                    engine.perform { engine in
                        Self.failing(responder) { () throws(VarlinkError) in
                            let p = try WatchParameters(request.call)
                            let app = try producerApp(claim: p.app, request.connection, on: engine)
                            engine.watch(app: app, uid: request.connection.peer?.uid, ids: p.ids, responder: responder)
                        }
                    }
                },
                "Authorization": .async { [self] request throws(VarlinkError) in
                    let p = try AppClaimParameters(request.call)
                    let app = try await producerApp(claim: p.app, request.connection)
                    return [
                        ProducerNames.Authorization.authorization: Wire.authorization(await engine.authorization(app: app, uid: request.connection.peer?.uid))
                    ]
                },
                "PushToken": .async { [self] request throws(VarlinkError) in
                    let p = try PushTokenParameters(request.call)
                    let app = try await producerApp(claim: p.app, request.connection)
                    let token = try await Self.refusalsNamed { () async throws(EngineError) in
                        try await push.token(app: app, uid: request.connection.peer?.uid, id: p.id, rotate: p.rotate)
                    }
                    return [ProducerNames.PushToken.pushToken: .string(token)]
                },
                "PushToStartToken": .async { [self] request throws(VarlinkError) in
                    let p = try PushToStartTokenParameters(request.call)
                    let app = try await producerApp(claim: p.app, request.connection)
                    let token = try await Self.refusalsNamed { () async throws(EngineError) in
                        try await push.startToken(app: app, uid: request.connection.peer?.uid, type: p.type, rotate: p.rotate)
                    }
                    return [ProducerNames.PushToStartToken.pushToken: .string(token)]
                },
            ])
    }

    // MARK: org.island.Extension

    private func extensionApp(claim: String?, _ connection: VarlinkConnectionContext) throws(VarlinkError) -> String {
        let role = try roles.bind(.extensionOf(claim: claim), connection: connection)
        guard case .extensionOf(let app) = role else { throw VarlinkError.permissionDenied }
        return app
    }

    var extensionRole: VarlinkImplementation {
        VarlinkImplementation(
            interface: try! VarlinkInterface(parsing: IslandInterfaces.extensionRole),
            handlers: [
                "RegisterLayout": .async { [self] request throws(VarlinkError) in
                    let p = try RegisterLayoutParameters(request.call)
                    let app = try extensionApp(claim: p.app, request.connection)
                    let warnings = try await Self.refusalsNamed { () async throws(EngineError) in
                        try await engine.registerLayout(app: app, uid: request.connection.peer?.uid, type: p.type, layout: .object(p.layout))
                    }
                    return [ExtensionNames.RegisterLayout.warnings: .array(warnings.map { .string($0.description) })]
                },
                "RemoveLayout": .async { [self] request throws(VarlinkError) in
                    let p = try RemoveLayoutParameters(request.call)
                    let app = try extensionApp(claim: p.app, request.connection)
                    try await Self.refusalsNamed { () async throws(EngineError) in
                        try await engine.removeLayout(app: app, uid: request.connection.peer?.uid, type: p.type)
                    }
                    return [:]
                },
                "ListLayouts": .async { [self] request throws(VarlinkError) in
                    let p = try AppClaimParameters(request.call)
                    let app = try extensionApp(claim: p.app, request.connection)
                    let layouts = await engine.listLayouts(app: app, uid: request.connection.peer?.uid)
                    typealias Registered = ExtensionNames.RegisteredLayout
                    return [ExtensionNames.ListLayouts.layouts: .array(layouts.map { [Registered.type: .string($0.type), Registered.layout: $0.layout] })]
                },
            ])
    }

    // MARK: org.island.Presenter

    var presenter: VarlinkImplementation {
        VarlinkImplementation(
            interface: try! VarlinkInterface(parsing: IslandInterfaces.presenter),
            handlers: [
                "Subscribe": .streaming { [self] request, responder in
                    Self.failing(responder) { () throws(VarlinkError) in
                        guard case .presenter(let uid) = try roles.bind(.presenter, connection: request.connection) else { return }
                        engine.perform { $0.subscribe(uid: uid, responder: responder) }
                    }
                },
                "Interact": .async { [self] request throws(VarlinkError) in
                    let p = try InteractParameters(request.call)
                    guard case .presenter(let uid) = try roles.bind(.presenter, connection: request.connection) else {
                        throw VarlinkError.permissionDenied
                    }
                    let url = try await Self.refusalsNamed { () async throws(EngineError) in
                        try await engine.interact(uid: uid, action: p.action, id: p.id, button: p.button)
                    }
                    return url.map { [PresenterNames.Interact.url: .string($0)] } ?? [:]
                },
            ])
    }

    // MARK: org.island.Admin

    var admin: VarlinkImplementation {
        VarlinkImplementation(
            interface: try! VarlinkInterface(parsing: IslandInterfaces.admin),
            handlers: [
                "SetEnabled": .async { [self] request throws(VarlinkError) in
                    let p = try SetEnabledParameters(request.call)
                    _ = try roles.bind(.admin, connection: request.connection)
                    try await Self.refusalsNamed { () async throws(EngineError) in try await engine.setEnabled(app: p.app, enabled: p.enabled) }
                    return [:]
                },
                "SetFrequentUpdates": .async { [self] request throws(VarlinkError) in
                    let p = try SetFrequentUpdatesParameters(request.call)
                    _ = try roles.bind(.admin, connection: request.connection)
                    try await Self.refusalsNamed { () async throws(EngineError) in
                        try await engine.setFrequentUpdates(app: p.app, enabled: p.enabled)
                    }
                    return [:]
                },
                "ListApps": .async { [self] request throws(VarlinkError) in
                    _ = try roles.bind(.admin, connection: request.connection)
                    let (apps, enabled) = await engine.apps()
                    return [AdminNames.ListApps.apps: .array(apps.map(Wire.app)), AdminNames.ListApps.enabled: .bool(enabled)]
                },
                "Status": .async { [self] request throws(VarlinkError) in
                    _ = try roles.bind(.admin, connection: request.connection)
                    var status = Wire.status(await engine.status(), version: version, scope: scope, connections: connectionCount())
                    if let push = await pushStatus() { status[AdminNames.Status.push] = push }
                    return status
                },
                "SetFocus": .async { [self] request throws(VarlinkError) in
                    let p = try SetFocusParameters(request.call)
                    _ = try roles.bind(.admin, connection: request.connection)
                    let since = try await Self.refusalsNamed { () async throws(EngineError) in try await engine.setFocus(p.on) }
                    return [AdminNames.SetFocus.focus: Wire.focus(since: since)]
                },
                "GetFocus": .async { [self] request throws(VarlinkError) in
                    _ = try roles.bind(.admin, connection: request.connection)
                    return [AdminNames.GetFocus.focus: Wire.focus(since: await engine.focusSince)]
                },
                "SetSharing": .async { [self] request throws(VarlinkError) in
                    let p = try SetSharingParameters(request.call)
                    _ = try roles.bind(.admin, connection: request.connection)
                    let (sharing, hidden) = await engine.setSharing(p.on, source: p.source)
                    return [AdminNames.SetSharing.sharing: Wire.sharing(sharing, contentHidden: hidden)]
                },
                "GetSharing": .async { [self] request throws(VarlinkError) in
                    _ = try roles.bind(.admin, connection: request.connection)
                    let (sharing, hidden) = await engine.sharing
                    return [AdminNames.GetSharing.sharing: Wire.sharing(sharing, contentHidden: hidden)]
                },
                "SetLock": .async { [self] request throws(VarlinkError) in
                    let p = try SetLockParameters(request.call)
                    _ = try roles.bind(.admin, connection: request.connection)
                    return [AdminNames.SetLock.lock: Wire.lock(await engine.setLock(p.on, source: p.source))]
                },
                "SetDesktopLockScreen": .async { [self] request throws(VarlinkError) in
                    let p = try SetDesktopLockScreenParameters(request.call)
                    _ = try roles.bind(.admin, connection: request.connection)
                    await engine.setDesktopLockScreen(p.desktopLockScreen)
                    return [:]
                },
                "GetDesktopLockScreen": .async { [self] request throws(VarlinkError) in
                    _ = try roles.bind(.admin, connection: request.connection)
                    let desktop = await engine.desktopLockScreen
                    typealias Reply = AdminNames.GetDesktopLockScreen
                    func apps(_ level: LockScreenVisibility) -> JSON {
                        .array(desktop.perApp.filter { $0.value == level }.keys.sorted().map { .string($0) })
                    }
                    return [Reply.everyAppSecret: .bool(desktop.everyAppSecret), Reply.privateApps: apps(.private), Reply.secretApps: apps(.secret)]
                },
                "GetLock": .async { [self] request throws(VarlinkError) in
                    _ = try roles.bind(.admin, connection: request.connection)
                    return [AdminNames.GetLock.lock: Wire.lock(await engine.sessionLock)]
                },
                "Reload": .async { [self] request throws(VarlinkError) in
                    _ = try roles.bind(.admin, connection: request.connection)
                    let skipped = try await reload()
                    typealias Skipped = AdminNames.SkippedLayout
                    return [AdminNames.Reload.skippedLayouts: .array(skipped.map { [Skipped.path: .string($0.path), Skipped.reason: .string($0.reason)] })]
                },
            ])
    }

    /// Set by the daemon once its server exists.
    var connectionCount: @Sendable () -> Int = { 0 }
    /// `org.island.Admin.PushStatus`, set by the daemon when push is on.
    var pushStatus: @Sendable () async -> JSON? = { nil }
    /// `org.island.Admin.Reload`: the installed layouts it skipped.
    var reload: @Sendable () async throws(VarlinkError) -> [InstalledLayouts.Skipped] = { [] }
}
