import IslandCore
import IslandJSON
import IslandProtocol
import VarlinkCore

/// The four role interfaces of Protocol/, each method a thin translation between Varlink
/// parameters and the engine. Every call first binds or checks the connection's role.
struct RoleInterfaces: Sendable {
    let engine: IslandEngine
    let roles: RoleBinder
    let scope: DaemonScope
    let version: String

    var implementations: [VarlinkImplementation] {
        [
            VarlinkImplementation(interface: try! VarlinkInterface(parsing: IslandInterfaces.errors), handlers: [:]),
            producer, extensionRole, presenter, admin,
        ]
    }

    // MARK: org.island.Producer

    /// Binds or checks the connection's producer role, on the engine.
    private func producerApp(_ request: VarlinkRequest, on engine: isolated IslandEngine) throws(VarlinkError) -> String {
        let role = try roles.bind(.producer(claim: request.parameters["app"]?.stringValue), connection: request.connection)
        guard case .producer(let app) = role else { throw VarlinkError.permissionDenied }
        // The first producer call of a connection counts it for the producer-death policy.
        if request.connection.attachment(ProducerRegistration.self) == nil {
            request.connection.setAttachment(ProducerRegistration())
            let uid = request.connection.peer?.uid
            engine.producerConnected(app: app, uid: uid)
            request.connection.onClose { [engine] in Task { await engine.producerDisconnected(app: app, uid: uid) } }
        }
        return app
    }

    private func producerApp(_ request: VarlinkRequest) async throws(VarlinkError) -> String {
        try await producerApp(request, on: engine)
    }

    private struct ProducerRegistration: Sendable {}

    /// A producer's mutation, made on the engine as soon as the call is read — no task per
    /// call. `start` hands the engine the call with `decided`, which releases the connection
    /// once the change is decided, so pipelined calls overlap their commits (and share them:
    /// group commit) while replies keep their order; and with the reply's encoder, which the
    /// engine runs on the store's writer thread once the change is committed.
    private func mutation<T: Sendable>(
        _ start: @escaping @Sendable (isolated IslandEngine, _ app: String, VarlinkRequest, _ decided: @escaping @Sendable () -> Void,
                                      _ encode: @escaping @Sendable (T) -> VarlinkEncodedParameters,
                                      _ done: @escaping IslandEngine.Completion<VarlinkEncodedParameters>) throws(VarlinkError) -> Void,
        reply: @escaping @Sendable (T, inout JSONText) -> Void
    ) -> VarlinkMethodHandler {
        .responding { [self] request, responder in
            engine.perform { engine in
                do throws(VarlinkError) {
                    let app = try producerApp(request, on: engine)
                    try start(engine, app, request, { responder.releaseConnection() }, { value in
                        var text = JSONText(capacity: 1024)
                        text.openObject()
                        reply(value, &text)
                        text.closeObject()
                        return VarlinkEncodedParameters(text)
                    }) { result in
                        switch result {
                        case .success(let encoded): responder.reply(encoded: encoded)
                        case .failure(let error): responder.fail(error)
                        }
                    }
                } catch {
                    responder.fail(error)
                }
            }
        }
    }

    var producer: VarlinkImplementation {
        VarlinkImplementation(interface: try! VarlinkInterface(parsing: IslandInterfaces.producer), handlers: [
            "Request": mutation({ engine, app, request, decided, encode, done throws(VarlinkError) in
                let p = request.parameters
                engine.request(
                    app: app, type: p["type"]!.stringValue!, attributes: p["attributes"]!.objectValue!,
                    content: Wire.content(of: request)!, key: p["key"]?.stringValue,
                    ownerGone: p["ownerGone"]?.stringValue.flatMap(OwnerGonePolicy.init(rawValue:)) ?? .keep,
                    uid: request.connection.peer?.uid, decided: decided, prepare: encode, completion: done)
            }, reply: { (result: (Activity, Bool), text: inout JSONText) in
                text.key("activity")
                Wire.writeActivity(result.0, to: &text)
                text.member("created", bool: result.1)
            }),
            "Update": mutation({ engine, app, request, decided, encode, done throws(VarlinkError) in
                let p = request.parameters
                let alert = p["alert"]?.objectValue.map { Alert(title: $0["title"]!.stringValue!, body: $0["body"]!.stringValue!) }
                engine.update(app: app, uid: request.connection.peer?.uid, id: p["id"]!.stringValue!, content: Wire.content(of: request)!,
                              alert: alert, timestamp: p["timestamp"]?.doubleValue, decided: decided, prepare: encode, completion: done)
            }, reply: { (outcome: UpdateOutcome, text: inout JSONText) in
                text.key("activity")
                Wire.writeActivity(outcome.activity, to: &text)
                text.key("delivery")
                text.openObject()
                text.member("throttled", bool: outcome.throttled)
                text.member("deliverAt", double: outcome.deliverAt)
                text.member("alerted", bool: outcome.alerted)
                text.member("alertSuppressed", bool: outcome.alertSuppressed)
                text.closeObject()
            }),
            "End": mutation({ engine, app, request, decided, encode, done throws(VarlinkError) in
                let p = request.parameters
                engine.end(app: app, uid: request.connection.peer?.uid, id: p["id"]!.stringValue!, content: Wire.content(of: request),
                           dismissal: try Wire.dismissalPolicy(from: p["dismissalPolicy"]),
                           timestamp: p["timestamp"]?.doubleValue, decided: decided, prepare: encode, completion: done)
            }, reply: { (activity: Activity, text: inout JSONText) in
                text.key("activity")
                Wire.writeActivity(activity, to: &text)
            }),
            "List": .async { [self] request throws(VarlinkError) in
                let app = try await producerApp(request)
                let p = request.parameters
                var states: Set<ActivityState>?
                if let names = p["states"]?.arrayValue {
                    states = []
                    for (i, name) in names.enumerated() {
                        guard let state = name.stringValue.flatMap(ActivityState.init(rawValue:)) else {
                            throw VarlinkError.invalidParameter("states[\(i)]")
                        }
                        states!.insert(state)
                    }
                }
                let activities = await engine.list(app: app, uid: request.connection.peer?.uid, type: p["type"]?.stringValue,
                                                   states: states)
                return ["activities": .array(activities.map(Wire.activity))]
            },
            "Watch": .streaming { [self] request, responder in
                Task {
                    do throws(VarlinkError) {
                        let app = try await producerApp(request)
                        let ids = request.parameters["ids"]?.arrayValue.map { Set($0.compactMap(\.stringValue)) }
                        await engine.watch(app: app, uid: request.connection.peer?.uid, ids: ids, responder: responder)
                    } catch {
                        responder.fail(error)
                    }
                }
            },
            "Authorization": .async { [self] request throws(VarlinkError) in
                let app = try await producerApp(request)
                return ["authorization": await engine.authorization(app: app, uid: request.connection.peer?.uid)]
            },
        ])
    }

    // MARK: org.island.Extension

    private func extensionApp(_ request: VarlinkRequest) throws(VarlinkError) -> String {
        let role = try roles.bind(.extensionOf(claim: request.parameters["app"]?.stringValue), connection: request.connection)
        guard case .extensionOf(let app) = role else { throw VarlinkError.permissionDenied }
        return app
    }

    var extensionRole: VarlinkImplementation {
        VarlinkImplementation(interface: try! VarlinkInterface(parsing: IslandInterfaces.extensionRole), handlers: [
            "RegisterLayout": .async { [self] request throws(VarlinkError) in
                let app = try extensionApp(request)
                try await engine.registerLayout(app: app, uid: request.connection.peer?.uid, type: request.parameters["type"]!.stringValue!,
                                                layout: request.parameters["layout"]!)
                return [:]
            },
            "RemoveLayout": .async { [self] request throws(VarlinkError) in
                let app = try extensionApp(request)
                try await engine.removeLayout(app: app, uid: request.connection.peer?.uid, type: request.parameters["type"]!.stringValue!)
                return [:]
            },
            "ListLayouts": .async { [self] request throws(VarlinkError) in
                let app = try extensionApp(request)
                let layouts = await engine.listLayouts(app: app, uid: request.connection.peer?.uid)
                return ["layouts": .array(layouts.map { ["type": .string($0.0), "layout": $0.1] })]
            },
        ])
    }

    // MARK: org.island.Presenter

    var presenter: VarlinkImplementation {
        VarlinkImplementation(interface: try! VarlinkInterface(parsing: IslandInterfaces.presenter), handlers: [
            "Subscribe": .streaming { [self] request, responder in
                do throws(VarlinkError) {
                    guard case .presenter(let uid) = try roles.bind(.presenter, connection: request.connection) else { return }
                    Task { await engine.subscribe(uid: uid, responder: responder) }
                } catch {
                    responder.fail(error)
                }
            },
            "Interact": .async { [self] request throws(VarlinkError) in
                guard case .presenter(let uid) = try roles.bind(.presenter, connection: request.connection) else {
                    throw VarlinkError.permissionDenied
                }
                let p = request.parameters
                let url = try await engine.interact(uid: uid, action: p["action"]!.stringValue!, id: p["id"]?.stringValue, button: p["button"]?.stringValue)
                return url.map { ["url": .string($0)] } ?? [:]
            },
        ])
    }

    // MARK: org.island.Admin

    var admin: VarlinkImplementation {
        VarlinkImplementation(interface: try! VarlinkInterface(parsing: IslandInterfaces.admin), handlers: [
            "SetEnabled": .async { [self] request throws(VarlinkError) in
                _ = try roles.bind(.admin, connection: request.connection)
                try await engine.setEnabled(app: request.parameters["app"]?.stringValue, enabled: request.parameters["enabled"]!.boolValue!)
                return [:]
            },
            "SetFrequentUpdates": .async { [self] request throws(VarlinkError) in
                _ = try roles.bind(.admin, connection: request.connection)
                try await engine.setFrequentUpdates(app: request.parameters["app"]!.stringValue!, enabled: request.parameters["enabled"]!.boolValue!)
                return [:]
            },
            "ListApps": .async { [self] request throws(VarlinkError) in
                _ = try roles.bind(.admin, connection: request.connection)
                let (apps, enabled) = await engine.apps()
                return ["apps": .array(apps), "enabled": .bool(enabled)]
            },
            "Status": .async { [self] request throws(VarlinkError) in
                _ = try roles.bind(.admin, connection: request.connection)
                var status = await engine.status()
                status["version"] = .string(version)
                status["scope"] = .string(scope.rawValue)
                status["connections"] = .int(connectionCount())
                return status
            },
            "Reload": .async { [self] request throws(VarlinkError) in
                _ = try roles.bind(.admin, connection: request.connection)
                try await reload()
                return [:]
            },
        ])
    }

    /// Set by the daemon once its server exists.
    var connectionCount: @Sendable () -> Int = { 0 }
    var reload: @Sendable () async throws(VarlinkError) -> Void = {}
}
