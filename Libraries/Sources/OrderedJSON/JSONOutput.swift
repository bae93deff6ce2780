#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the writer appends JSON text: an array of bytes (`JSON.serialized()`, a Varlink
/// message) or `JSONText`'s buffer.
protocol JSONOutput: ~Copyable {
    mutating func append(_ byte: UInt8)
    mutating func appendBytes(_ bytes: UnsafeRawBufferPointer)
}

extension Array: JSONOutput where Element == UInt8 {}

/// Bytes appended to memory this value alone owns, copied into an array once they are done.
/// An array checks that its storage is uniquely held, and goes through its general append,
/// at every append: ~70 instructions for each key of a message written on every update,
/// where this buffer compares its count with its capacity. Not copyable, so that no two
/// values can write to one buffer. Its appends are inlinable for `JSONText.key`, which its
/// callers inline.
@usableFromInline
struct GrowableBytes: ~Copyable, JSONOutput {
    // From `malloc`: Swift's own raw allocation asks for an aligned block (`posix_memalign`,
    // twice the instructions with jemalloc) where bytes need no alignment, and `realloc`
    // grows a block in place when it can.
    @usableFromInline var start: UnsafeMutableRawPointer
    @usableFromInline var capacity: Int
    @usableFromInline var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        start = Self.reallocate(nil, to: self.capacity)
    }

    // Inlinable like the stored properties' accessors, which `JSONText.key` inlines and
    // which destroy the value they replace.
    @inlinable
    deinit {
        Self.release(start)
    }

    @usableFromInline
    static func release(_ block: UnsafeMutableRawPointer) {
        free(block)
    }

    /// What is written so far, copied into an array.
    var array: [UInt8] {
        [UInt8].filled(count: count) { array in
            array.copyMemory(from: UnsafeRawBufferPointer(start: start, count: count))
            return count
        }
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: 1) }
        start.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always)
    mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if capacity - count < bytes.count { grow(toHold: bytes.count) }
        (start + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// `,"name":` (the comma when `comma`), with one check of the capacity: every key of
    /// every message is written so.
    @inlinable @inline(__always)
    mutating func appendKey(_ name: UnsafeRawBufferPointer, comma: Bool) {
        let separator = comma ? 1 : 0
        let written = separator + name.count + 3
        if capacity - count < written { grow(toHold: written) }
        let key = start + count + separator
        // Stored either way, and overwritten by the opening quote when there is no comma.
        (start + count).storeBytes(of: UInt8(ascii: ","), as: UInt8.self)
        key.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
        if let name = name.baseAddress { (key + 1).copyMemory(from: name, byteCount: written - separator - 3) }
        (key + written - separator - 2).storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
        (key + written - separator - 1).storeBytes(of: UInt8(ascii: ":"), as: UInt8.self)
        count += written
    }

    /// Appends a copy of the bytes at `range` of what is written.
    mutating func appendCopy(of range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "a range outside the bytes written")
        if capacity - count < range.count { grow(toHold: range.count) }
        // The copy lands after `count`, so it cannot overlap its source.
        (start + count).copyMemory(from: start + range.lowerBound, byteCount: range.count)
        count += range.count
    }

    @usableFromInline @inline(never)
    mutating func grow(toHold extra: Int) {
        capacity = max(capacity * 2, count + extra)
        start = Self.reallocate(start, to: capacity)
    }

    private static func reallocate(_ block: UnsafeMutableRawPointer?, to size: Int) -> UnsafeMutableRawPointer {
        guard let block = realloc(block, size) else { fatalError("out of memory for \(size) bytes of JSON text") }
        return block
    }
}

extension Array where Element == UInt8 {
    /// An array of up to `count` bytes, written by `body` into its storage, which returns how
    /// many it wrote. `Array(unsafeUninitializedCapacity:initializingWith:)` allocates
    /// through a path of the standard library that is not specialized and looks the storage's
    /// type up at run time (~560 instructions a call, `Benchmarks/profile.py`); an empty
    /// array's reserved capacity is not.
    static func filled(count: Int, by body: (UnsafeMutableRawBufferPointer) -> Int) -> [UInt8] {
        var array: [UInt8] = []
        array.reserveCapacity(count)
        array.append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { free, initialized in
                initialized = body(UnsafeMutableRawBufferPointer(free))
            }
        }
        return array
    }
}
