public import OrderedJSON

/// A call as a handler sees it: validated parameters plus who is calling.
public struct VarlinkRequest: Sendable {
    public var call: VarlinkCall
    public var connection: VarlinkConnectionContext

    public var parameters: JSONObject { call.parameters }
}
