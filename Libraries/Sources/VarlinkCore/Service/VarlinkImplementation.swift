/// An interface and the handlers of its methods.
public struct VarlinkImplementation: Sendable {
    public var interface: VarlinkInterface
    public var handlers: [String: VarlinkMethodHandler]

    public init(interface: VarlinkInterface, handlers: [String: VarlinkMethodHandler]) {
        self.interface = interface
        self.handlers = handlers
    }
}
