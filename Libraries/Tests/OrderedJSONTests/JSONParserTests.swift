import Foundation
import OrderedJSON
import OrderedCollections
import Testing

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2.5, 1e3, true, false, null], "b": {"c": "d"}, "e": 0} "#)
        #expect(value == ["a": [1, -2.5, 1000.0, true, false, nil], "b": ["c": "d"], "e": 0])
        #expect(value["a"]?.arrayValue?[0] == .int(1))
        #expect(value["a"]?.arrayValue?[2] == .double(1000))
    }

    @Test func keepsIntegersApartFromFloats() throws {
        #expect(try JSONParser.parse("2") == .int(2))
        #expect(try JSONParser.parse("2.0") == .double(2))
        // Beyond Int64 an integer can only be a float.
        #expect(try JSONParser.parse("18446744073709551616") == .double(18446744073709551616))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\n\té😀"))
    }

    @Test(arguments: [
        ("", JSONParseError.Reason.empty),
        ("{", .unexpectedEnd),
        ("[1,]", .unexpectedCharacter),
        ("{\"a\":1,}", .unexpectedCharacter),
        ("01", .trailingData),
        ("1.", .invalidNumber),
        ("-", .invalidNumber),
        ("1e", .invalidNumber),
        ("1e999", .invalidNumber),
        ("tru", .unexpectedEnd),
        ("nul!", .unexpectedCharacter),
        ("\"\\x\"", .invalidEscape),
        ("\"\\ud800\"", .unexpectedCharacter),
        ("\"\\ud800\\u0041\"", .invalidEscape),
        ("\"\\udc00\"", .invalidEscape),
        ("\"a\nb\"", .controlCharacterInString),
        ("{\"a\":1,\"a\":2}", .duplicateKey),
        ("{} {}", .trailingData),
        ("'a'", .unexpectedCharacter),
    ])
    func rejectsMalformedText(text: String, reason: JSONParseError.Reason) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.reason == reason, "\(text)")
        }
    }

    @Test func findsADuplicateKeyWhereverItIsAndKeepsTheOrder() throws {
        // Small objects compare keys one by one and large ones hash them: both, on either side
        // of the switch, with the duplicate spelled differently (an escape) and the same.
        for count in [1, 2, 15, 16, 17, 40] {
            let keys = (0..<count).map { "k\($0)" }
            let object = try JSONParser.parse("{" + keys.map { "\"\($0)\":0" }.joined(separator: ",") + "}")
            #expect(object.objectValue.map { Array($0.keys) } == keys)
            for duplicated in 0..<count {
                for spelling in [keys[duplicated], "\\u006b" + keys[duplicated].dropFirst()] {
                    let head = "{" + keys.map { "\"\($0)\":0," }.joined()
                    let text = head + "\"\(spelling)\":1}"
                    #expect(throws: JSONParseError(reason: .duplicateKey, offset: head.utf8.count), "\(count) \(spelling)") {
                        try JSONParser.parse(text)
                    }
                }
            }
        }
    }

    @Test func parsesIntegersToTheirLimitsAndDoublesBeyond() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .int(.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONParser.parse("-9223372036854775809") == .double(-9_223_372_036_854_775_808))
        #expect(try JSONParser.parse("-0") == .int(0))
        #expect(try JSONParser.parse("[0,-1,10,-10,1234567890123]") == [0, -1, 10, -10, 1_234_567_890_123])
    }

    @Test func rejectsInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0x5C, 0x6E, 0xC0, 0xAF, 0x22]] {
            #expect(throws: JSONParseError(reason: .invalidUTF8, offset: 1)) { try JSONParser.parse(bytes) }
        }
    }

    @Test func boundsNesting() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        _ = try JSONParser.parse(ok)
        // A nesting far past the limit fails fast instead of exhausting the stack.
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(hostile) }
    }

    @Test func serializesCompactlyAndRoundTrips() throws {
        let value: JSON = ["s": "quote\" backslash\\ nl\n ctl\u{01} é", "n": [1, 2.5, nil, true], "o": [:], "f": 1.0]
        let text = value.description
        #expect(text == #"{"s":"quote\" backslash\\ nl\n ctl\u0001 é","n":[1,2.5,null,true],"o":{},"f":1.0}"#)
        #expect(try JSONParser.parse(text) == value)
        #expect(JSON.double(.infinity).description == "null")
    }

    @Test func writesTextMemberByMemberAsTheTreeWouldBe() throws {
        let tree: JSON = ["a": 1, "b": ["c": [true, .null, ["d": "e\"f"]], "g": []], "h": [:], "i": [[], [1, 2]]]
        var text = JSONText()
        text.openObject()
        text.member("a", 1)
        text.key("b")
        text.openObject()
        text.key("c")
        text.openArray()
        text.value(true)
        text.value(.null)
        text.value(["d": "e\"f"])
        text.closeArray()
        text.key("g")
        text.openArray()
        text.closeArray()
        text.closeObject()
        text.key("h")
        text.openObject()
        text.closeObject()
        text.key("i")
        text.openArray()
        text.openArray()
        text.closeArray()
        text.value([1, 2])
        text.closeArray()
        text.closeObject()
        #expect(text.bytes == tree.serialized(), "\(String(decoding: text.bytes, as: UTF8.self))")
        #expect(try JSONParser.parse(text.bytes) == tree)
    }

    @Test func countsTheSerializedSizeExactly() throws {
        let samples: [JSON] = [
            .null, true, false, 0, -12345678901234, 0.5, 1_795_430_000.123456, -1e-300, .double(.infinity), .double(.nan),
            "", "plain", "quote \" backslash \\ newline \n return \r tab \t", "\u{01}\u{1f}\u{7f}", "caf\u{e9} \u{1F600}",
            [], [1], [1, "two", [3.0], ["four": .null]], [:], ["a": 1], ["key \"q\"": ["nested": [true, false, .null]], "": ""],
        ]
        for value in samples {
            #expect(value.serializedSize == value.serialized().count, "\(value)")
        }
        // Every byte a string can hold, each escaped as the writer escapes it.
        let everyByte = String(decoding: (0...0x7F).map { UInt8($0) }, as: UTF8.self)
        #expect(JSON.string(everyByte).serializedSize == JSON.string(everyByte).serialized().count)
    }

    /// The writer looks at eight bytes at a time: a byte to escape must be found wherever it
    /// falls in a word, beside any other byte, however long the string.
    @Test func escapesEveryByteThatNeedsItAtEveryPositionOfAWord() throws {
        func reference(_ bytes: [UInt8]) -> [UInt8] {
            var out: [UInt8] = [UInt8(ascii: "\"")]
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
                case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
                case 0x0A: out += Array(#"\n"#.utf8)
                case 0x0D: out += Array(#"\r"#.utf8)
                case 0x09: out += Array(#"\t"#.utf8)
                case ..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
                default: out.append(byte)
                }
            }
            return out + [UInt8(ascii: "\"")]
        }
        let special: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F]
        for length in 1...19 {
            for position in 0..<length {
                for byte in special {
                    for filler: UInt8 in [UInt8(ascii: "a"), 0x21, 0x5D] {
                        var bytes = [UInt8](repeating: filler, count: length)
                        bytes[position] = byte
                        let string = String(decoding: bytes, as: UTF8.self)
                        let written = JSON.string(string).serialized()
                        #expect(written == reference(bytes), "byte \(byte) at \(position) of \(length)")
                        #expect(JSON.string(string).serializedSize == written.count)
                        #expect(try JSONParser.parse(written) == .string(string))
                    }
                }
            }
        }
        // Two in one word: the scan takes the lowest flagged byte of a word as the first special
        // one, which holds only if a flag never appears below a real one.
        for length in 2...17 {
            for first in 0..<length {
                for second in first + 1..<length {
                    for (a, b) in [(UInt8(0x22), UInt8(0x5C)), (0x5C, 0x00), (0x1F, 0x22), (0x00, 0x00)] {
                        for filler: UInt8 in [0x21, 0x23, 0x5B, 0x5D, 0x20] {
                            var bytes = [UInt8](repeating: filler, count: length)
                            bytes[first] = a
                            bytes[second] = b
                            let string = String(decoding: bytes, as: UTF8.self)
                            let written = JSON.string(string).serialized()
                            #expect(written == reference(bytes), "\(a) at \(first), \(b) at \(second) of \(length)")
                            #expect(try JSONParser.parse(written) == .string(string))
                        }
                    }
                }
            }
        }
        // The parser scans the same way: raw control characters and invalid UTF-8 are found
        // wherever they fall.
        for length in 1...19 {
            for position in 0..<length {
                for (byte, reason) in [
                    (UInt8(0x01), JSONParseError.Reason.controlCharacterInString), (0x1F, .controlCharacterInString),
                    (0xFF, .invalidUTF8), (0x80, .invalidUTF8),
                ] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    do {
                        _ = try JSONParser.parse([UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")])
                        Issue.record("accepted byte \(byte) at \(position) of \(length)")
                    } catch {
                        #expect(error.reason == reason, "byte \(byte) at \(position) of \(length)")
                    }
                }
            }
        }
        let multibyte = "caf\u{e9} \u{1F600} \"\u{7f}\u{80}\u{ff}\u{100}\n…"
        #expect(JSON.string(multibyte).serializedSize == JSON.string(multibyte).serialized().count)
        #expect(try JSONParser.parse(JSON.string(multibyte).serialized()) == .string(multibyte))
    }

    @Test func writesIntegersAtTheirLimits() throws {
        for integer in [0, 7, -7, 10, -10, 99, 100, Int.max, Int.min, Int.min + 1] {
            let written = JSON.int(integer).serialized()
            #expect(written == Array(String(integer).utf8))
            #expect(JSON.int(integer).serializedSize == written.count)
        }
    }

    @Test func writesDoublesAsTheirDescription() throws {
        // Whole numbers take a path of their own: it must spell them as `description` does,
        // up to where that switches to an exponent, and keep the sign of -0.0.
        var doubles: [Double] = [
            0, -0.0, 1, -1, 0.5, -2.5, 1e14, 1e15 - 1, 1e15, -1e15, 1e16, 9_007_199_254_740_992,
            1_763_928_000, 1_763_928_000.25, .ulpOfOne, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
            // Timestamps as a clock gives them, and other fractions: the digits of `write(to:)`.
            1_764_250_000.123456, 1_764_250_000.1234567, -3.141592653589793, 1e-7, 0.1, 1.0 / 3,
            -.leastNormalMagnitude,
        ]
        for exponent in 0...17 {
            let power = (0..<exponent).reduce(1.0) { value, _ in value * 10 }
            doubles += [power, power - 1, power + 1, -power, power + 0.5]
        }
        for double in doubles {
            let written = JSON.double(double).serialized()
            #expect(written == Array(double.description.utf8), "\(double)")
            #expect(JSON.double(double).serializedSize == written.count)
            #expect(try JSONParser.parse(written).doubleValue == double, "\(double)")
        }
        #expect(JSON.double(.nan).serialized() == Array("null".utf8))
        #expect(JSON.double(-.infinity).serialized() == Array("null".utf8))
    }

    /// Doubles between 1 and 10^15 that are not whole have digits worked out without
    /// `description` (`JSON.shortestDecimal`): they must be its digits all the same.
    @Test func writesFractionsAsTheirDescription() throws {
        // A fixed sequence (a linear congruential generator), so every run checks the same.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        var doubles: [Double] = [
            // Ties between two decimals, and the doubles beside a power of two.
            109_379_121_199_737.875, 867_680_552_867.968_75, 1.5, 2.5, 0.5 + 1e-9 + 1,
            1.000_000_000_000_000_2, 1.999_999_999_999_999_8, 2.000_000_000_000_000_4, 1024.000_000_000_000_2,
            999_999_999_999_999.9, 1e15 - 0.5, 1e15 - 0.125, 1.1, 9.96, 99.99, 0.1 + 0.2 + 1,
        ]
        for _ in 0..<20_000 {
            // Times as a clock gives them: seconds since 1970 with nanoseconds, as they are
            // and through the reference date `Date` keeps them from.
            let seconds = Double(1_600_000_000 + next() % 300_000_000)
            let nanoseconds = Double(next() % 1_000_000_000)
            doubles += [seconds + nanoseconds / 1e9, (seconds - 978_307_200 + nanoseconds / 1e9) + 978_307_200]
            // Any double of the range, and decimals of a few digits.
            let bits = 0x3FF0_0000_0000_0000 + next() % (0x430C_6BF5_2634_0000 - 0x3FF0_0000_0000_0000)
            doubles += [Double(bitPattern: bits), Double(next() % 10_000_000_000_000) / 1000, Double(next() % 100_000) / 100]
        }
        for double in doubles + doubles.map(-) {
            let written = JSON.double(double).serialized()
            #expect(written == Array(double.description.utf8), "\(double)")
            #expect(JSON.double(double).serializedSize == written.count)
            #expect(try JSONParser.parse(written).doubleValue == double, "\(double)")
        }
    }

    @Test func writesScalarMembersAsTheirJSONValues() throws {
        for (string, int, double, bool) in [
            ("plain", 0, 0.0, false), ("quote \" and \u{1}", Int.min, -0.0, true),
            ("é, 日本", Int.max, 1_763_928_000.125, false),
        ] {
            var typed = JSONText()
            typed.openObject()
            typed.member("s", string: string)
            typed.member("i", int: int)
            typed.member("d", double: double)
            typed.member("b", bool: bool)
            typed.closeObject()
            var generic = JSONText()
            generic.openObject()
            generic.member("s", .string(string))
            generic.member("i", .int(int))
            generic.member("d", .double(double))
            generic.member("b", .bool(bool))
            generic.closeObject()
            #expect(typed.bytes == generic.bytes)
            #expect(try JSONParser.parse(typed.bytes) == ["s": .string(string), "i": .int(int), "d": .double(double), "b": .bool(bool)])
        }
    }

    @Test func opensAnObjectWithMembersWrittenBefore() throws {
        var members = JSONText()
        members.openObject()
        members.member("a", 1)
        members.member("b", ["c": "d"])
        var text = JSONText()
        text.openArray()
        text.openObject(members: Array(members.bytes.dropFirst()))
        text.member("e", true)
        text.closeObject()
        text.openObject(members: [])
        text.member("f", .null)
        text.closeObject()
        text.closeArray()
        #expect(try JSONParser.parse(text.bytes) == [["a": 1, "b": ["c": "d"], "e": true], ["f": .null]])
    }

    /// `JSONText` writes into a buffer of its own that starts as small as asked and grows: what
    /// it writes across each growth, copied within the text (a repeated double,
    /// `value(repeating:)`) or not, is the tree's text.
    @Test func writesTheSameTextWhereverItsBufferGrows() throws {
        let long = String(repeating: "ab\"\u{1}\u{e9}", count: 50)
        let list: JSON = [1, 0.5, .null, "x", ["y": -1e-7]]
        let tree: JSON = [
            "at": 1_764_250_000.123456, "again": 1_764_250_000.123456, "s": .string(long), "i": .int(.min), "b": false,
            "list": list, "copy": list,
        ]
        for capacity in 0...96 {
            var text = JSONText(capacity: capacity)
            text.openObject()
            text.member("at", double: 1_764_250_000.123456)
            text.member("again", double: 1_764_250_000.123456)
            text.member("s", string: long)
            text.member("i", int: .min)
            text.member("b", bool: false)
            text.key("list")
            let start = text.count
            text.value(list)
            let written = start..<text.count
            text.key("copy")
            text.value(repeating: written)
            text.closeObject()
            #expect(text.bytes == tree.serialized(), "capacity \(capacity)")
        }
    }

    @Test func comparesNumbersByValueWhenAsked() {
        #expect(JSON.int(1) != JSON.double(1))
        #expect(JSON.int(1).numericallyEquals(.double(1)))
        #expect(JSON.object(["a": [1]]).numericallyEquals(["a": [1.0]]))
        #expect(!JSON.object(["a": 1]).numericallyEquals(["a": 1, "b": 2]))
    }
}
