import OrderedJSON
public import Logging
import OrderedCollections

/// The transport-independent half of a Varlink server: the interfaces, the validation of
/// every call against its method's input type, `org.varlink.service`, and dispatch to
/// handlers. Transports (VarlinkNIO's server, VarlinkInProcess, or tests calling `dispatch`
/// directly) feed it.
public final class VarlinkService: Sendable {
    public let info: VarlinkServiceInfo
    let implementations: [String: VarlinkImplementation]
    /// Interface names in the order they were given, for `GetInfo`.
    let interfaceNames: [String]
    /// Every method with a handler, by its full name: a call finds its method with one
    /// look-up of the name it came with, and no string cut from it.
    private let routes: [String: VarlinkRoute]
    let logger: Logger

    public static let serviceInterface: VarlinkInterface = {
        try! VarlinkInterface(parsing: String(decoding: PackageResources.org_varlink_service_varlink, as: UTF8.self))
    }()

    /// What the transport tells a peer whose connection it ends or refuses for a reason of the
    /// connection's own; their interface is served with the others.
    public let connectionErrors: VarlinkConnectionErrors

    /// How the transports turn frames into calls: those of methods whose handlers read their
    /// parameters from text (`VarlinkMethodHandler.reading`) without a tree.
    package let callReader: VarlinkCallReader

    /// - Parameter connectionErrors: the errors that end a connection, as this service names them.
    public init(
        info: VarlinkServiceInfo, implementations: [VarlinkImplementation], connectionErrors: VarlinkConnectionErrors,
        logger: Logger = Logger(label: "varlink")
    ) {
        self.info = info
        self.connectionErrors = connectionErrors
        self.logger = logger
        var all: [String: VarlinkImplementation] = [:]
        var names: [String] = []
        let builtIn = ([Self.serviceInterface] + (connectionErrors.interface.map { [$0] } ?? [])).map {
            VarlinkImplementation(interface: $0, handlers: [:])
        }
        for implementation in builtIn + implementations {
            let name = implementation.interface.name
            precondition(all[name] == nil, "interface \(name) registered twice")
            for method in implementation.handlers.keys {
                precondition(implementation.interface.methods[method] != nil, "\(name) has no method \(method)")
            }
            all[name] = implementation
            names.append(name)
        }
        self.implementations = all
        self.interfaceNames = names
        var routes: [String: VarlinkRoute] = [:]
        for implementation in implementations {
            for (method, handler) in implementation.handlers {
                let name = implementation.interface.name + "." + method
                routes[name] = VarlinkRoute(
                    method: name, interface: implementation.interface,
                    signature: implementation.interface.methods[method]!, handler: handler)
            }
        }
        self.routes = routes
        self.callReader = VarlinkCallReader(routes: routes.values.filter { $0.handler.readParameters != nil })
    }

    /// Runs one call: validates it, then hands it to its handler, which answers through
    /// `sink`. Every call ends in exactly one final reply, which a `oneway` call's
    /// transport discards.
    public func dispatch(_ call: VarlinkCall, connection: VarlinkConnectionContext, sink: some VarlinkReplySink) {
        let route: VarlinkRoute
        if let found = call.route {
            // A call read from its text found its method as it was read: taken as it is, not
            // through a `Result` copied on every call.
            route = found
        } else {
            switch self.route(of: call) {
            case .success(let found): route = found
            case .failure(let error):
                sink.send(VarlinkReply(error: error), final: true)
                return
            }
        }
        // Upgrading to another protocol is not something any of our methods offers.
        if call.upgrade {
            sink.send(VarlinkReply(error: .invalidParameter("upgrade")), final: true)
            return
        }
        // Parameters read from text were read only as far as the input type accepts them.
        if call.route == nil, let invalid = route.interface.firstInvalidMember(in: call.parameters, of: route.signature.input) {
            sink.send(VarlinkReply(error: .invalidParameter(invalid.path, expected: invalid.expected)), final: true)
            return
        }
        if route.handler.requiresMore && !call.more {
            sink.send(VarlinkReply(error: .expectedMore), final: true)
            return
        }
        let responder = VarlinkResponder(route: route, more: call.more, oneway: call.oneway, sink: sink, logger: logger)
        route.handler.body(VarlinkRequest(call: call, connection: connection), responder)
    }

    /// The method a call names: from the table of routes, or else one of `org.varlink.service`,
    /// one declared without a handler (which answers `MethodNotImplemented` once the call is
    /// found valid), or the error that names what is missing.
    private func route(of call: VarlinkCall) -> Result<VarlinkRoute, VarlinkError> {
        if let route = call.route ?? routes[call.method] { return .success(route) }
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
        return .success(VarlinkRoute(method: call.method, interface: implementation.interface, signature: signature, handler: handler))
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
