public import OrderedJSON

/// How a method answers. Handlers never see a call that does not conform to the method's
/// declared input type: the service validates first.
public struct VarlinkMethodHandler: Sendable {
    let requiresMore: Bool
    let body: @Sendable (VarlinkRequest, VarlinkResponder) -> Void
    /// Reads the method's parameters from a frame's text (`reading(_:)`).
    /// (Spelled out: the reader's alias of this type is not usable from inline code.)
    @usableFromInline var readParameters: (@Sendable (inout JSONReader) throws(JSONReader.Mismatch) -> VarlinkReadParameters)?

    init(requiresMore: Bool, body: @escaping @Sendable (VarlinkRequest, VarlinkResponder) -> Void) {
        self.requiresMore = requiresMore
        self.body = body
    }

    /// The same handler, for a method whose calls are read straight into `P`, with no tree,
    /// when their text allows (see `VarlinkReadableParameters`): the handler takes them with
    /// `VarlinkRequest.parameters(as: P.self)`. Inlinable, so that the reader is specialized
    /// for `P` where the method is declared and boxes what it reads with no metadata lookup.
    @inlinable
    public func reading<P: VarlinkReadableParameters>(_: P.Type) -> VarlinkMethodHandler {
        var handler = self
        handler.readParameters = { (reader: inout JSONReader) throws(JSONReader.Mismatch) -> VarlinkReadParameters in
            VarlinkReadParameters.Typed(try P(reading: &reader))
        }
        return handler
    }

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
