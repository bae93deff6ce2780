import IslandJSON
import IslandProtocol
import Logging
import Synchronization

/// What `org.varlink.service.GetInfo` reports about the service.
public struct VarlinkServiceInfo: Sendable {
    public var vendor: String
    public var product: String
    public var version: String
    public var url: String

    public init(vendor: String, product: String, version: String, url: String) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
    }
}

/// How a method answers. Handlers never see a call that does not conform to the method's
/// declared input type: the service validates first.
public struct VarlinkMethodHandler: Sendable {
    let requiresMore: Bool
    let body: @Sendable (VarlinkRequest, VarlinkResponder) -> Void

    /// Full control: reply any number of times (with `continues` for a `more` call) and
    /// finish with a reply without `continues` or an error. `requiresMore` makes a call
    /// without `more` fail with `ExpectedMore` before the handler runs.
    public static func streaming(
        requiresMore: Bool = true, _ body: @escaping @Sendable (VarlinkRequest, VarlinkResponder) -> Void
    ) -> VarlinkMethodHandler {
        VarlinkMethodHandler(requiresMore: requiresMore, body: body)
    }

    /// One reply computed on the connection's event loop; for quick work that does not block.
    public static func immediate(
        _ body: @escaping @Sendable (VarlinkRequest) throws(VarlinkError) -> JSONObject
    ) -> VarlinkMethodHandler {
        VarlinkMethodHandler(requiresMore: false) { request, responder in
            do throws(VarlinkError) {
                responder.reply(try body(request))
            } catch {
                responder.fail(error)
            }
        }
    }

    /// One reply, sent through the responder now or later, from any thread: for handlers that
    /// schedule their own work (say, on an actor whose executor is the connection's event
    /// loop) rather than start a task per call. Calling `releaseConnection` on the responder
    /// lets the next pipelined call start before this one's reply.
    public static func responding(_ body: @escaping @Sendable (VarlinkRequest, VarlinkResponder) -> Void) -> VarlinkMethodHandler {
        VarlinkMethodHandler(requiresMore: false, body: body)
    }

    /// One reply computed in a task that lets the next pipelined call on the connection start
    /// as soon as it calls `release` — once its outcome is decided and only, say, its
    /// durability remains to wait for. Replies still go out in call order.
    public static func pipelined(
        _ body: @escaping @Sendable (VarlinkRequest, _ release: @escaping @Sendable () -> Void) async throws(VarlinkError) -> JSONObject
    ) -> VarlinkMethodHandler {
        VarlinkMethodHandler(requiresMore: false) { request, responder in
            Task {
                do throws(VarlinkError) {
                    responder.reply(try await body(request, { responder.releaseConnection() }))
                } catch {
                    responder.fail(error)
                }
            }
        }
    }

    /// One reply computed in a task, for work that awaits.
    public static func async(
        _ body: @escaping @Sendable (VarlinkRequest) async throws(VarlinkError) -> JSONObject
    ) -> VarlinkMethodHandler {
        VarlinkMethodHandler(requiresMore: false) { request, responder in
            Task {
                do throws(VarlinkError) {
                    responder.reply(try await body(request))
                } catch {
                    responder.fail(error)
                }
            }
        }
    }
}

/// An interface and the handlers of its methods.
public struct VarlinkImplementation: Sendable {
    public var interface: VarlinkInterface
    public var handlers: [String: VarlinkMethodHandler]

    public init(interface: VarlinkInterface, handlers: [String: VarlinkMethodHandler]) {
        self.interface = interface
        self.handlers = handlers
    }
}

/// A call as a handler sees it: validated parameters plus who is calling.
public struct VarlinkRequest: Sendable {
    public var call: VarlinkCall
    public var connection: VarlinkConnectionContext

    public var parameters: JSONObject { call.parameters }
}

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

/// Per-connection facts and state shared by all calls on one connection, such as the
/// role a connection bound itself to with its first call.
public final class VarlinkConnectionContext: Sendable {
    public let id: UInt64
    public let peer: PeerCredentials?
    /// Each value boxed under its type's identifier, so that reading it back is a plain
    /// downcast rather than a dynamic cast from an existential (a role is read on every call).
    private let attachments = Mutex<[ObjectIdentifier: any AnyObject & Sendable]>([:])

    private final class Attachment<Value: Sendable>: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// What is stored under `T`'s identifier is always an `Attachment<T>`.
    private static func value<T: Sendable>(_ stored: (any AnyObject & Sendable)?, as type: T.Type) -> T? {
        stored.map { unsafeDowncast($0, to: Attachment<T>.self).value }
    }
    /// Callbacks to run when the connection closes; nil once it has closed.
    private let closeHandlers = Mutex<[@Sendable () -> Void]?>([])

    public init(id: UInt64, peer: PeerCredentials?) {
        self.id = id
        self.peer = peer
    }

    /// The value stored for `type` on this connection.
    public func attachment<T: Sendable>(_ type: T.Type) -> T? {
        attachments.withLock { Self.value($0[ObjectIdentifier(type)], as: type) }
    }

    /// Stores `value` unless a value of its type is already there; returns the value in
    /// place afterwards. Lets concurrent calls agree on one binding.
    @discardableResult
    public func attachIfAbsent<T: Sendable>(_ value: T) -> T {
        attachments.withLock { storage in
            if let existing = Self.value(storage[ObjectIdentifier(T.self)], as: T.self) { return existing }
            storage[ObjectIdentifier(T.self)] = Attachment(value)
            return value
        }
    }

    public func setAttachment<T: Sendable>(_ value: T?) {
        attachments.withLock { $0[ObjectIdentifier(T.self)] = value.map { Attachment($0) } }
    }

    /// Runs `callback` once when the connection closes (at once if it already has), so
    /// per-connection state elsewhere (a producer count, a subscription) can be released.
    public func onClose(_ callback: @escaping @Sendable () -> Void) {
        let closed = closeHandlers.withLock { handlers -> Bool in
            guard handlers != nil else { return true }
            handlers!.append(callback)
            return false
        }
        if closed { callback() }
    }

    /// Called by the transport when the connection is gone.
    public func markClosed() {
        let handlers = closeHandlers.withLock { handlers in
            defer { handlers = nil }
            return handlers ?? []
        }
        for handler in handlers { handler() }
    }
}

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

/// The transport-independent half of a Varlink server: the interfaces, the validation of
/// every call against its method's input type, `org.varlink.service`, and dispatch to
/// handlers. Transports (the NIO server, or tests calling `dispatch` directly) feed it.
public final class VarlinkService: Sendable {
    public let info: VarlinkServiceInfo
    let implementations: [String: VarlinkImplementation]
    /// Interface names in the order they were given, for `GetInfo`.
    let interfaceNames: [String]
    /// Every method with a handler, by its full name: a call finds its method with one
    /// look-up of the name it came with, and no string cut from it.
    private let routes: [String: Route]
    let logger: Logger

    private struct Route: Sendable {
        let interface: VarlinkInterface
        let signature: VarlinkMethodSignature
        let handler: VarlinkMethodHandler
    }

    public static let serviceInterface: VarlinkInterface = {
        try! VarlinkInterface(parsing: String(decoding: PackageResources.org_varlink_service_varlink, as: UTF8.self))
    }()

    public static let connectionInterface: VarlinkInterface = {
        try! VarlinkInterface(parsing: IslandInterfaces.connection)
    }()

    /// A member of every call's parameters whose text, when the caller sent it in canonical
    /// form, is kept with the call (`VarlinkCall.canonicalText`) instead of its tree (the
    /// parameters hold `{}` in its place), as a path from the message's top; empty for none.
    public let canonicalTextPath: [String]

    /// - Parameter canonicalTextOf: the path, within the parameters, of a member whose text
    ///   the handlers want as it came (an activity's state, which is stored and sent on as text).
    ///   Every interface must declare it an untyped `object`: its validation sees only `{}`.
    public init(info: VarlinkServiceInfo, implementations: [VarlinkImplementation], canonicalTextOf: [String] = [],
                logger: Logger = Logger(label: "varlink")) {
        self.info = info
        self.canonicalTextPath = canonicalTextOf.isEmpty ? [] : ["parameters"] + canonicalTextOf
        self.logger = logger
        var all: [String: VarlinkImplementation] = [:]
        var names: [String] = []
        let builtIn = [
            VarlinkImplementation(interface: Self.serviceInterface, handlers: [:]),
            VarlinkImplementation(interface: Self.connectionInterface, handlers: [:]),
        ]
        for implementation in builtIn + implementations {
            let name = implementation.interface.name
            precondition(all[name] == nil, "interface \(name) registered twice")
            for method in implementation.handlers.keys {
                precondition(implementation.interface.methods[method] != nil, "\(name) has no method \(method)")
            }
            precondition(canonicalTextOf.isEmpty || implementation.interface.declaresUntypedObject(at: canonicalTextOf),
                         "\(name) declares parameters.\(canonicalTextOf.joined(separator: ".")) as more than an object")
            all[name] = implementation
            names.append(name)
        }
        self.implementations = all
        self.interfaceNames = names
        var routes: [String: Route] = [:]
        for implementation in implementations {
            for (method, handler) in implementation.handlers {
                routes[implementation.interface.name + "." + method] = Route(
                    interface: implementation.interface, signature: implementation.interface.methods[method]!, handler: handler)
            }
        }
        self.routes = routes
    }

    /// Runs one call: validates it, then hands it to its handler, which answers through
    /// `sink`. Every call ends in exactly one final reply, which a `oneway` call's
    /// transport discards.
    public func dispatch(_ call: VarlinkCall, connection: VarlinkConnectionContext, sink: some VarlinkReplySink) {
        let route: Route
        switch self.route(of: call) {
        case .success(let found): route = found
        case .failure(let error):
            sink.send(VarlinkReply(error: error), final: true)
            return
        }
        // Upgrading to another protocol is not something any of our methods offers.
        if call.upgrade {
            sink.send(VarlinkReply(error: .invalidParameter("upgrade")), final: true)
            return
        }
        if let field = route.interface.firstInvalidField(in: call.parameters, of: route.signature.input) {
            sink.send(VarlinkReply(error: .invalidParameter(field)), final: true)
            return
        }
        if route.handler.requiresMore && !call.more {
            sink.send(VarlinkReply(error: .expectedMore), final: true)
            return
        }
        let responder = VarlinkResponder(call: call, output: route.signature.output, interface: route.interface, sink: sink, logger: logger)
        route.handler.body(VarlinkRequest(call: call, connection: connection), responder)
    }

    /// The method a call names: from the table of routes, or else one of `org.varlink.service`,
    /// one declared without a handler (which answers `MethodNotImplemented` once the call is
    /// found valid), or the error that names what is missing.
    private func route(of call: VarlinkCall) -> Result<Route, VarlinkError> {
        if let route = routes[call.method] { return .success(route) }
        let interfaceName = call.interfaceName
        guard let implementation = implementations[String(interfaceName)] else {
            return .failure(.interfaceNotFound(interfaceName))
        }
        let methodName = String(call.methodName)
        guard let signature = implementation.interface.methods[methodName] else {
            return .failure(.methodNotFound(call.method))
        }
        let handler: VarlinkMethodHandler
        if interfaceName == "org.varlink.service" {
            handler = methodName == "GetInfo" ? getInfo : getInterfaceDescription
        } else {
            handler = .immediate { [method = call.method] _ throws(VarlinkError) in throw .methodNotImplemented(method) }
        }
        return .success(Route(interface: implementation.interface, signature: signature, handler: handler))
    }

    private var getInfo: VarlinkMethodHandler {
        .immediate { [info, interfaceNames] _ in
            [
                "vendor": .string(info.vendor), "product": .string(info.product),
                "version": .string(info.version), "url": .string(info.url),
                "interfaces": .array(interfaceNames.map { .string($0) }),
            ]
        }
    }

    private var getInterfaceDescription: VarlinkMethodHandler {
        .immediate { [implementations] request throws(VarlinkError) in
            let name = request.parameters["interface"]?.stringValue ?? ""
            guard let implementation = implementations[name] else { throw .interfaceNotFound(name) }
            return ["description": .string(implementation.interface.description)]
        }
    }
}

/// Answers one call. Safe to use from any thread; replies after the final one are ignored.
public final class VarlinkResponder: Sendable {
    public let call: VarlinkCall
    private let output: [VarlinkField]
    private let interface: VarlinkInterface
    private let sink: any VarlinkReplySink
    private let logger: Logger
    private let finished = Atomic<Bool>(false)

    init(call: VarlinkCall, output: [VarlinkField], interface: VarlinkInterface, sink: any VarlinkReplySink, logger: Logger) {
        self.call = call
        self.output = output
        self.interface = interface
        self.sink = sink
        self.logger = logger
    }

    /// Sends a reply. `continues` is honoured only for a call made with `more`; otherwise
    /// the reply ends the call.
    public func reply(_ parameters: JSONObject, continues: Bool = false) {
        #if DEBUG
        assertConforms(parameters)
        #endif
        let continues = continues && call.more
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
        assertConforms(parameters)
        #endif
        guard finished.exchange(true, ordering: .acquiringAndReleasing) == false else { return }
        sink.send(VarlinkReply(encoded: parameters), final: true)
    }

    /// Sends a reply that continues a streaming call, encoded once by the caller (the same
    /// update fanned out to many subscribers).
    public func reply(continuing parameters: VarlinkEncodedParameters) {
        guard call.more, !finished.load(ordering: .acquiring) else { return }
        #if DEBUG
        assertConforms(parameters)
        #endif
        sink.send(VarlinkReply(encoded: parameters, continues: true), final: false)
    }

    /// Sends replies that continue a streaming call, encoded once by the caller, in one
    /// hand-over to the transport.
    public func reply(continuing batch: [VarlinkEncodedParameters]) {
        guard call.more, !batch.isEmpty, !finished.load(ordering: .acquiring) else { return }
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
        if let field = interface.firstInvalidField(in: parameters, of: output) {
            logger.critical("reply does not match the output type", metadata: ["method": "\(call.method)", "field": "\(field)"])
            assertionFailure("\(call.method) replied with invalid field '\(field)': \(JSON.object(parameters))")
        }
    }
    #endif

    /// Ends the call with a named error; with `closingConnection`, an error of
    /// `org.island.Connection`, the connection too, once the error is written.
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
