extension JSON {
    /// The shape of an object written as `serialized()` writes it: each key, quotes and escapes
    /// as written, followed by one byte for the kind of its value — all numbers one kind, since
    /// the text of a whole double is that of an integer. Two objects have the same shape when
    /// they have the same keys in the same order with values of the same kinds. Read from the
    /// text, with no tree, for a check made on every update; nil for text that is not a compact
    /// object.
    public static func objectShape(ofText text: [UInt8]) -> [UInt8]? {
        text.withUnsafeBytes { text in
            guard text.count >= 2, text[0] == UInt8(ascii: "{") else { return nil }
            var shape: [UInt8] = []
            if text[1] == UInt8(ascii: "}") { return text.count == 2 ? shape : nil }
            // Keys and a byte for each value: never more than the text, usually half of it.
            shape.reserveCapacity(min(text.count, 256))
            var index = 1
            while true {
                guard text[index] == UInt8(ascii: "\""), let keyEnd = JSONBytes.endOfString(in: text, at: index),
                    keyEnd + 1 < text.count, text[keyEnd] == UInt8(ascii: ":"),
                    let kind = shapeKind(of: text[keyEnd + 1]), let valueEnd = JSONBytes.endOfValue(in: text, at: keyEnd + 1),
                    valueEnd < text.count
                else { return nil }
                // A key ends at its first unescaped quote, so key and kind read back one way only.
                shape.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[index..<keyEnd]))
                shape.append(kind)
                index = valueEnd + 1
                switch text[valueEnd] {
                case UInt8(ascii: ","): guard index < text.count else { return nil }
                case UInt8(ascii: "}"): return index == text.count ? shape : nil
                default: return nil
                }
            }
        }
    }

    /// The kind of the value a byte begins, as a letter; nil for none.
    static func shapeKind(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(ascii: "#")
        case UInt8(ascii: "t"), UInt8(ascii: "f"): UInt8(ascii: "b")
        case UInt8(ascii: "n"): UInt8(ascii: "n")
        case UInt8(ascii: "\""): UInt8(ascii: "s")
        case UInt8(ascii: "["): UInt8(ascii: "a")
        case UInt8(ascii: "{"): UInt8(ascii: "o")
        default: nil
        }
    }
}

extension JSONBytes {
    /// The index just past the string whose opening quote is at `start`, escapes skipped; nil
    /// if it does not end.
    static func endOfString(in bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
        var index = start + 1
        while true {
            index = firstSpecial(in: bytes, from: index)
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return index + 1
            case UInt8(ascii: "\\"): index += 2
            default: return nil
            }
        }
    }

    /// The index just past the compact value that starts at `start`: a string or container
    /// through its closing byte, a number or literal up to the comma or bracket after it.
    static func endOfValue(in bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
        var index = start
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return endOfString(in: bytes, at: index)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            break
        default:
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"): return index
                default: index += 1
                }
            }
            return index
        }
        var depth = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                guard let end = endOfString(in: bytes, at: index) else { return nil }
                index = end
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return index + 1 }
            default:
                break
            }
            index += 1
        }
        return nil
    }
}
