public import OrderedJSON

/// A method's parameters as Swift values, made once before its handler runs — a decoding step
/// per method, like the dispatch tables systemd reads Varlink parameters with.
public protocol VarlinkParameters: Sendable {
    /// From the parameters of `call`, which the service has validated against the method's
    /// input type already: this should never fail, but should the interface and the decoder
    /// ever disagree, the call is refused (`InvalidParameter` naming the field), not trusted.
    init(_ call: VarlinkCall) throws(VarlinkError)
}

/// Parameters that can also be read straight from a call's text, with no tree, for methods on
/// a hot path (see `VarlinkMethodHandler.reading`).
public protocol VarlinkReadableParameters: VarlinkParameters {
    /// Reads the parameters object at `reader`'s position, up to and past its closing brace.
    ///
    /// Must accept only what the method's input type accepts (no member missing, unknown,
    /// repeated or of another kind), and make of it exactly what `init(_:)` makes of the tree;
    /// anything else, it throws `Mismatch`, and the call is read as a tree instead, validated,
    /// and refused or accepted as any other. So a reader may leave rare forms to the tree.
    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch)
}

extension VarlinkRequest {
    /// The call's parameters as `P`: as its reader read them from the frame, or else from the
    /// validated tree. Inlinable, as `VarlinkConnectionContext.attachment(_:)` is: specialized
    /// for `P` where it is called, it finds no metadata at run time.
    @inlinable
    public func parameters<P: VarlinkParameters>(as type: P.Type) throws(VarlinkError) -> P {
        if let read = call.readParameters?.value(as: P.self) { return read }
        return try P(call)
    }
}

/// Parameters a method's reader read, of a type the call does not know: a box whose type is
/// checked by identity, with no dynamic cast, as every call of the method is unboxed.
/// Usable from inline code, with its members, for the generic functions that make and open
/// one on every call (`VarlinkMethodHandler.reading(_:)`, `VarlinkRequest.parameters(as:)`).
@usableFromInline
package class VarlinkReadParameters: @unchecked Sendable {
    // Unchecked: immutable, and `Typed`'s value is Sendable.
    @usableFromInline let type: ObjectIdentifier

    @usableFromInline init(type: ObjectIdentifier) {
        self.type = type
    }

    @usableFromInline
    final class Typed<P: Sendable>: VarlinkReadParameters, @unchecked Sendable {
        @usableFromInline let value: P

        @inlinable init(_ value: P) {
            self.value = value
            super.init(type: ObjectIdentifier(P.self))
        }
    }

    /// The value, if it is a `P`. Final: a `package` class's method could be overridden in
    /// another module of the package, so it would be called through the class's table, and
    /// unspecialized, with the call copied around it (a call's six references, ~380
    /// instructions) — where final it is inlined into the two comparisons and a load.
    @inlinable
    package final func value<P: Sendable>(as _: P.Type) -> P? {
        guard type == ObjectIdentifier(P.self) else { return nil }
        return unsafeDowncast(self, to: Typed<P>.self).value
    }
}
