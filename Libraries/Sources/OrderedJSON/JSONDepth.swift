import OrderedCollections

extension JSON {
    /// How many containers deep the value is: 0 for a scalar, 1 for `{}` or `[1]`, 2 for
    /// `{"a":[]}`. The parser's `maximumDepth` counts the same way.
    public var nestingDepth: Int {
        switch self {
        case .array(let array): 1 + array.reduce(0) { max($0, $1.nestingDepth) }
        case .object(let object): 1 + object.values.reduce(0) { max($0, $1.nestingDepth) }
        default: 0
        }
    }

    /// `nestingDepth` read from JSON text with no tree, strings skipped, for a check made on
    /// every update; text that is not JSON gives what its brackets say.
    public static func nestingDepth(ofText text: [UInt8]) -> Int {
        text.withUnsafeBytes { bytes in
            var (depth, deepest, index) = (0, 0, 0)
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let end = JSONBytes.endOfString(in: bytes, at: index) else { return deepest }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    deepest = max(deepest, depth)
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                default:
                    break
                }
                index += 1
            }
            return deepest
        }
    }
}
