package import OrderedJSON

/// How a server turns its frames into calls. A call to a method whose parameters can be read
/// from text (`VarlinkMethodHandler.reading`) is read straight from the frame, with no tree,
/// when it is written the usual way — `method` first, then `parameters` and the flags, keys
/// without escapes — and its parameters' reader takes them; its parameters then need no
/// validation either, as their reader accepts only what the method's input type does. Every
/// other frame is parsed into a tree (`VarlinkCall(frame:)`), which finds the exact error in
/// a frame the fast reading left, or validates and refuses or accepts it as any call.
package struct VarlinkCallReader: Sendable {
    /// Reads a method's parameters object into its own type.
    package typealias ReadParameters = @Sendable (inout JSONReader) throws(JSONReader.Mismatch) -> VarlinkReadParameters

    /// The methods with a reader: a few, found by comparing their names' bytes.
    private let routes: [VarlinkRoute]

    package init(routes: [VarlinkRoute]) {
        self.routes = routes
    }

    /// Frames of no method with a reader: every call as a tree.
    package static let trees = VarlinkCallReader(routes: [])

    package func call(frame: [UInt8]) throws(VarlinkMessageError) -> VarlinkCall {
        if !routes.isEmpty, let call = frame.withUnsafeBytes({ read($0, frame: frame) }) { return call }
        return try VarlinkCall(frame: frame)
    }

    private func read(_ bytes: UnsafeRawBufferPointer, frame: [UInt8]) -> VarlinkCall? {
        var reader = JSONReader(bytes)
        do throws(JSONReader.Mismatch) {
            try reader.enterObject()
            guard let first = try reader.nextKey(), case "method" = first else { return nil }
            let method = try reader.readUnescapedString()
            guard let route = routes.first(where: { $0.methodBytes.withUnsafeBytes { JSONBytes.equal($0, method) } }),
                let readParameters = route.handler.readParameters
            else { return nil }
            var parameters: VarlinkReadParameters?
            var more: Bool?, oneway: Bool?, upgrade: Bool?
            func flag(_ value: inout Bool?) throws(JSONReader.Mismatch) {
                guard value == nil else { throw JSONReader.Mismatch() }
                if reader.readNull() {
                    value = false
                } else {
                    value = try reader.readBool()
                }
            }
            while let key = try reader.nextKey() {
                switch key {
                case "parameters":
                    guard parameters == nil else { return nil }
                    parameters = try readParameters(&reader)
                case "more": try flag(&more)
                case "oneway": try flag(&oneway)
                case "upgrade": try flag(&upgrade)
                default: return nil
                }
            }
            try reader.finish()
            guard let parameters else { return nil }
            return VarlinkCall(
                route: route, readParameters: parameters, frame: frame,
                more: more ?? false, oneway: oneway ?? false, upgrade: upgrade ?? false)
        } catch {
            return nil
        }
    }
}
