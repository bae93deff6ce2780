/// JSON text written member by member, for messages built on every update: no tree to
/// allocate and then walk. Values that already are trees (a state, a layout) are written as
/// they are. The caller opens and closes what it writes; commas take care of themselves.
///
/// Written into a buffer of its own (`GrowableBytes`) and copied into an array once, when the
/// message is done (`bytes`); not copyable, as that buffer is not.
public struct JSONText: ~Copyable {
    @usableFromInline var output: GrowableBytes
    /// A value was just written at this level: the next one needs a comma first.
    @usableFromInline var afterValue = false
    /// The last double written, and where its text is in `output`: a message often carries
    /// one time twice (an update's `updatedAt` and `deliveredAt` are both its `now`), and
    /// copying its text costs a tenth of working the digits out again.
    private var lastDouble: (bitPattern: UInt64, text: Range<Int>)?

    public init(capacity: Int = 256) {
        output = GrowableBytes(capacity: capacity)
    }

    /// The text written so far, copied into an array: read it once, when the text is done.
    public var bytes: [UInt8] { output.array }

    public mutating func openObject() { open(UInt8(ascii: "{")) }
    public mutating func closeObject() { close(UInt8(ascii: "}")) }
    public mutating func openArray() { open(UInt8(ascii: "[")) }
    public mutating func closeArray() { close(UInt8(ascii: "]")) }

    /// A member's key; its value comes next. Keys are the protocol's own names, spelled in
    /// the source: a static string needs no escaping and no `String` to be written.
    ///
    /// Inlined where it is called, so that the key's length and bytes are constants there: a
    /// call into this module and a `memcpy` of a few bytes cost ~65 instructions per key, and
    /// the messages sent on every update have ~25 keys.
    @inlinable @inline(__always)
    public mutating func key(_ key: StaticString) {
        let name = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        assert(JSONBytes.firstSpecial(in: name, from: 0) == name.count, "a key that needs escaping: \(key)")
        output.appendKey(name, comma: afterValue)
        afterValue = false
    }

    public mutating func value(_ value: JSON) {
        separate()
        value.write(into: &output)
        afterValue = true
    }

    /// How many bytes are written so far: where the next value starts, for `value(repeating:)`.
    package var count: Int { output.count }

    /// A value written already, at `range` of this text, written again: copied, not worked
    /// out a second time.
    package mutating func value(repeating range: Range<Int>) {
        separate()
        output.appendCopy(of: range)
        afterValue = true
    }

    /// A value already written as compact JSON text.
    public mutating func value(text: [UInt8]) {
        separate()
        text.withUnsafeBytes { output.appendBytes($0) }
        afterValue = true
    }

    /// Opens an object whose first members are already written, as compact JSON text
    /// (`"a":1,"b":2`, no braces); more members may follow.
    public mutating func openObject(members: [UInt8]) {
        openObject()
        members.withUnsafeBytes { output.appendBytes($0) }
        afterValue = !members.isEmpty
    }

    /// Members of the open object already written as compact JSON text (`"a":1,"b":2`).
    public mutating func members(_ members: [UInt8]) {
        guard !members.isEmpty else { return }
        separate()
        members.withUnsafeBytes { output.appendBytes($0) }
        afterValue = true
    }

    public mutating func member(_ key: StaticString, _ value: JSON) {
        self.key(key)
        self.value(value)
    }

    // Members of one scalar type, written without making a `JSON` of it first: the messages
    // sent on every update are mostly these.

    // The key is written where the member is (`key`, inlined); the value by this module.

    @inlinable @inline(__always)
    public mutating func member(_ key: StaticString, string: String) {
        self.key(key)
        value(string: string)
    }

    @inlinable @inline(__always)
    public mutating func member(_ key: StaticString, int: Int) {
        self.key(key)
        value(int: int)
    }

    @inlinable @inline(__always)
    public mutating func member(_ key: StaticString, double: Double) {
        self.key(key)
        value(double: double)
    }

    @inlinable @inline(__always)
    public mutating func member(_ key: StaticString, bool: Bool) {
        self.key(key)
        value(bool: bool)
    }

    @usableFromInline
    mutating func value(string: String) {
        JSON.writeString(string, into: &output)
        afterValue = true
    }

    @usableFromInline
    mutating func value(int: Int) {
        JSON.writeInteger(int, into: &output)
        afterValue = true
    }

    @usableFromInline
    mutating func value(double: Double) {
        if let lastDouble, lastDouble.bitPattern == double.bitPattern {
            output.appendCopy(of: lastDouble.text)
        } else {
            let start = output.count
            JSON.writeDouble(double, into: &output)
            lastDouble = (double.bitPattern, start..<output.count)
        }
        afterValue = true
    }

    @usableFromInline
    mutating func value(bool: Bool) {
        let literal: StaticString = bool ? "true" : "false"
        output.appendBytes(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        afterValue = true
    }

    private mutating func open(_ byte: UInt8) {
        separate()
        output.append(byte)
        afterValue = false
    }

    private mutating func close(_ byte: UInt8) {
        output.append(byte)
        afterValue = true
    }

    private mutating func separate() {
        if afterValue { output.append(UInt8(ascii: ",")) }
    }
}
