/// JSON text written member by member, for messages built on every update: no tree to
/// allocate and then walk. Values that already are trees (a state, a layout) are written as
/// they are. The caller opens and closes what it writes; commas take care of themselves.
public struct JSONText {
    public private(set) var bytes: [UInt8] = []
    /// A value was just written at this level: the next one needs a comma first.
    private var afterValue = false
    /// The last double written, and where its text is in `bytes`: a message often carries
    /// one time twice (an update's `updatedAt` and `deliveredAt` are both its `now`), and
    /// copying its text costs a tenth of working the digits out again.
    private var lastDouble: (bitPattern: UInt64, text: Range<Int>)?

    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func openObject() { open(UInt8(ascii: "{")) }
    public mutating func closeObject() { close(UInt8(ascii: "}")) }
    public mutating func openArray() { open(UInt8(ascii: "[")) }
    public mutating func closeArray() { close(UInt8(ascii: "]")) }

    /// A member's key; its value comes next. Keys are the protocol's own names, spelled in
    /// the source: a static string needs no escaping and no `String` to be written.
    public mutating func key(_ key: StaticString) {
        let name = UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        assert(JSONBytes.firstSpecial(in: name, from: 0) == name.count, "a key that needs escaping: \(key)")
        // `,"name":` written straight into the array's free capacity: one check of its
        // capacity and uniqueness instead of five, for every key of every message.
        let comma = afterValue ? 1 : 0
        let count = name.count + 3 + comma
        bytes.append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { member, initialized in
                member[0] = UInt8(ascii: ",")
                member[comma] = UInt8(ascii: "\"")
                UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: member[(comma + 1)...])).copyMemory(from: name)
                member[comma + 1 + name.count] = UInt8(ascii: "\"")
                member[comma + 2 + name.count] = UInt8(ascii: ":")
                initialized = count
            }
        }
        afterValue = false
    }

    public mutating func value(_ value: JSON) {
        separate()
        value.write(to: &bytes)
        afterValue = true
    }

    /// How many bytes are written so far: where the next value starts, for `value(repeating:)`.
    package var count: Int { bytes.count }

    /// A value written already, at `range` of this text, written again: copied, not worked
    /// out a second time.
    package mutating func value(repeating range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "a range outside the text written")
        separate()
        repeatBytes(range)
        afterValue = true
    }

    /// A value already written as compact JSON text.
    public mutating func value(text: [UInt8]) {
        separate()
        bytes.appendBytes(text)
        afterValue = true
    }

    /// Opens an object whose first members are already written, as compact JSON text
    /// (`"a":1,"b":2`, no braces); more members may follow.
    public mutating func openObject(members: [UInt8]) {
        openObject()
        bytes.appendBytes(members)
        afterValue = !members.isEmpty
    }

    /// Members of the open object already written as compact JSON text (`"a":1,"b":2`).
    public mutating func members(_ members: [UInt8]) {
        guard !members.isEmpty else { return }
        separate()
        bytes.appendBytes(members)
        afterValue = true
    }

    public mutating func member(_ key: StaticString, _ value: JSON) {
        self.key(key)
        self.value(value)
    }

    // Members of one scalar type, written without making a `JSON` of it first: the messages
    // sent on every update are mostly these.

    public mutating func member(_ key: StaticString, string: String) {
        member(key) { JSON.writeString(string, to: &$0) }
    }

    public mutating func member(_ key: StaticString, int: Int) {
        member(key) { JSON.writeInteger(int, to: &$0) }
    }

    public mutating func member(_ key: StaticString, double: Double) {
        self.key(key)
        if let lastDouble, lastDouble.bitPattern == double.bitPattern {
            repeatBytes(lastDouble.text)
        } else {
            let start = bytes.count
            JSON.writeDouble(double, to: &bytes)
            lastDouble = (double.bitPattern, start..<bytes.count)
        }
        afterValue = true
    }

    /// Appends a copy of `range` of what is written already.
    private mutating func repeatBytes(_ range: Range<Int>) {
        // Through a copy on the stack: `bytes` cannot be read while it is appended to.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count) { copy in
            bytes.withUnsafeBufferPointer { written in
                _ = copy.initialize(fromContentsOf: UnsafeBufferPointer(rebasing: written[range]))
            }
            bytes.appendBytes(UnsafeBufferPointer(copy))
        }
    }

    public mutating func member(_ key: StaticString, bool: Bool) {
        member(key) { JSON.writeLiteral(bool ? "true" : "false", to: &$0) }
    }

    private mutating func member(_ key: StaticString, writing value: (inout [UInt8]) -> Void) {
        self.key(key)
        value(&bytes)
        afterValue = true
    }

    private mutating func open(_ byte: UInt8) {
        separate()
        bytes.append(byte)
        afterValue = false
    }

    private mutating func close(_ byte: UInt8) {
        bytes.append(byte)
        afterValue = true
    }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }
}
