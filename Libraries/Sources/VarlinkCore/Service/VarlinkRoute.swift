/// A method a service answers: its interface, its signature and its handler.
package final class VarlinkRoute: Sendable {
    /// The full name, `interface.Method`.
    let method: String
    let interface: VarlinkInterface
    let signature: VarlinkMethodSignature
    let handler: VarlinkMethodHandler
    /// `method` as bytes, which a call read from text is matched with.
    let methodBytes: [UInt8]

    init(method: String, interface: VarlinkInterface, signature: VarlinkMethodSignature, handler: VarlinkMethodHandler) {
        self.method = method
        self.interface = interface
        self.signature = signature
        self.handler = handler
        self.methodBytes = Array(method.utf8)
    }
}
