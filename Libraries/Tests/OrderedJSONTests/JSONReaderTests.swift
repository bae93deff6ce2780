import Foundation
import OrderedCollections
import OrderedJSON
import Testing

/// What a decoder reads with `JSONReader` is what the parser's tree holds, and it accepts
/// nothing the parser refuses: whatever it cannot read as asked is a mismatch, which the
/// caller settles with the parser.
@Suite struct JSONReaderTests {
    /// What `body` reads from `text`, or nil for a mismatch.
    private func read<T>(_ text: [UInt8], _ body: (inout JSONReader) throws(JSONReader.Mismatch) -> T) -> T? {
        text.withUnsafeBytes { buffer -> T? in
            var reader = JSONReader(buffer)
            do {
                return try body(&reader)
            } catch {
                return nil
            }
        }
    }

    private func read<T>(_ text: String, _ body: (inout JSONReader) throws(JSONReader.Mismatch) -> T) -> T? {
        read(Array(text.utf8), body)
    }

    /// `{"id":…,"content":{"state":STATE,"r":1}}` read member by member, as a decoder does:
    /// the state as text, or the mismatch.
    /// Reads `{"id":…,"content":{"state":` by position, up to the state's value: the envelope
    /// the raw messages below are built in.
    private static func enterState(_ reader: inout JSONReader) throws(JSONReader.Mismatch) {
        try reader.enterObject()
        _ = try reader.nextKey()
        _ = try reader.readString()
        _ = try reader.nextKey()
        try reader.enterObject()
        _ = try reader.nextKey()
    }

    private func readState(
        _ state: String, in envelope: String = #"{"id":"x","content":{"state":@,"r":1}}"#
    )
        -> (text: [UInt8], nesting: Int, shape: [UInt8])?
    {
        read(envelope.replacingOccurrences(of: "@", with: state)) { (reader: inout JSONReader) throws(JSONReader.Mismatch) in
            var found: (text: [UInt8], nesting: Int, shape: [UInt8])?
            try reader.enterObject()
            while let key = try reader.nextKey() {
                switch key {
                case "id": _ = try reader.readString()
                case "content":
                    try reader.enterObject()
                    while let inner = try reader.nextKey() {
                        switch inner {
                        case "state": found = try reader.readObjectText()
                        case "r": _ = try reader.readNumber()
                        default: throw JSONReader.Mismatch()
                        }
                    }
                default: throw JSONReader.Mismatch()
                }
            }
            try reader.finish()
            guard let found else { throw JSONReader.Mismatch() }
            return found
        }
    }

    @Test func readsAnObjectAsTheTextTheTreeWouldBeWrittenAs() throws {
        // Written as `serialized()` writes them: taken as they are, without a tree.
        let canonical = [
            #"{}"#, #"{"a":1}"#, #"{"seq":-12,"t":"x y","ok":true,"n":null,"f":false}"#,
            #"{"a":{"b":[1,{"c":[]},"é"]},"d":[]}"#, #"{"big":-9223372036854775808}"#,
            #"{"ünï":"cödé","":0}"#, #"{"k":[[[[]]]],"z":{"":{}}}"#,
            // Keys of one length ending in one byte, which the duplicate check compares in full.
            #"{"ab":1,"cb":2,"b":3,"xcb":4}"#,
            // Keys copied into the shape as one word, as two, and whole (past sixteen bytes).
            #"{"seq":1,"twelve_bytes":"v","a_key_longer_than_sixteen":[2],"k":{"end_of_the_text":0}}"#,
        ]
        // Written otherwise, or left to the parser (many members): made a tree and written so.
        let rewritten = [
            #"{ }"#, #"{"a": 1}"#, #"{"a":1 }"#, #"{"a":"\u0041"}"#, #"{"a":"\""}"#, #"{"a":1.5}"#, #"{"a":1e2}"#,
            #"{"a":-0}"#, #"{"a":9223372036854775808}"#, #"{"a":{"b":[1, 2]}}"#, #"{"\u0061":1}"#,
            #"{"a":[1E2]}"#, #"{"a":-0.0}"#, "{" + (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}",
        ]
        for state in canonical + rewritten {
            let tree = try JSONParser.parse(state)
            let found = try #require(readState(state), "\(state)")
            #expect(found.text == tree.serialized(), "\(state)")
            #expect(found.nesting == tree.nestingDepth, "\(state)")
            #expect(found.shape == JSON.objectShape(ofText: found.text), "\(state)")
            if canonical.contains(state) { #expect(found.text == Array(state.utf8)) }
        }
        // The members around it may be written any way.
        let spaced = try #require(readState(#"{"a":[1]}"#, in: #" { "content" : { "r" : 1 , "state" : @ } , "id" : "x" } "#))
        #expect(spaced.text == Array(#"{"a":[1]}"#.utf8) && spaced.nesting == 2 && spaced.shape == Array(#""a"a"#.utf8))
        // Not an object where one is asked for.
        for state in [#"[1,2]"#, #""s""#, #"0"#, "null"] {
            #expect(readState(state) == nil, "\(state)")
        }
    }

    /// Generated states, most written as `serialized()` writes them and the rest mangled — a
    /// byte dropped, added or changed to one that means something in JSON or is not UTF-8 —
    /// get the parser's verdict from the reader, and when read, the text, nesting and shape
    /// the parser's tree gives. The one-pass check of canonical text is compared so with the
    /// general path on inputs nobody wrote by hand.
    @Test func readsGeneratedAndMangledStatesAsTheParserDoes() throws {
        var random = SplitMix(seed: 42)
        let hostile: [UInt8] = Array(#"{}[],:"\-+.eE0159 tfnx"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xFF]
        var (accepted, refused) = (0, 0)
        for round in 0..<4000 {
            var state = Self.generatedObject(&random, depth: 0)
            if round % 3 != 0 {
                for _ in 0...Int.random(in: 0...1, using: &random) {
                    let at = Int.random(in: 0..<state.count, using: &random)
                    switch Int.random(in: 0...2, using: &random) {
                    case 0: state.remove(at: at)
                    case 1: state.insert(hostile.randomElement(using: &random)!, at: at)
                    default: state[at] = hostile.randomElement(using: &random)!
                    }
                    if state.isEmpty { state = Array("{}".utf8) }
                }
            }
            let message = Array(#"{"id":"x","content":{"state":"#.utf8) + state + Array(#","r":1}}"#.utf8)
            let tree = try? JSONParser.parse(message)
            let found = read(message) { (reader: inout JSONReader) throws(JSONReader.Mismatch) in
                try Self.enterState(&reader)
                let found = try reader.readObjectText()
                _ = try reader.nextKey()
                _ = try reader.readNumber()
                _ = try reader.nextKey()
                _ = try reader.nextKey()
                try reader.finish()
                return found
            }
            let text = String(decoding: state, as: UTF8.self)
            // Two changes can move a brace and keep the message valid with other members
            // around the state (which this reading, by position, does not follow): left out.
            if let tree, tree.objectValue?.keys.elements != ["id", "content"] || tree["content"]?.objectValue?.keys.elements != ["state", "r"] {
                continue
            }
            let stateTree = tree?["content"]?["state"]
            // Read when the parser reads it, and as an object only.
            #expect((found != nil) == (stateTree?.objectValue != nil), "\(text)")
            guard let found, let stateTree else {
                refused += 1
                continue
            }
            accepted += 1
            #expect(found.text == stateTree.serialized(), "\(text)")
            #expect(found.nesting == stateTree.nestingDepth, "\(text)")
            #expect(found.shape == JSON.objectShape(ofText: found.text), "\(text)")
        }
        // Both verdicts are tried often.
        #expect(accepted > 1000 && refused > 1000, "\(accepted) read, \(refused) refused")
    }

    /// A seeded generator (SplitMix64): the same states on every run.
    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// An object's text as `serialized()` writes it, mostly: keys drawn from few, so that some
    /// repeat, up to past the members compared one by one; now and then a value written
    /// otherwise (a fraction, an exponent, `-0`, a leading zero, an escape, an integer at
    /// and past `Int`'s bounds).
    private static func generatedObject(_ random: inout SplitMix, depth: Int) -> [UInt8] {
        let keys = ["a", "b", "ab", "cb", "seq", "title", "twelve_bytes", "é", "", "a_key_longer_than_sixteen", "k1", "k2"]
        let count = Int.random(in: 0...(depth == 0 ? 18 : 4), using: &random)
        var members: [String] = []
        for _ in 0..<count {
            var key = keys.randomElement(using: &random)!
            // Unique keys most of the time: a duplicate refuses the whole state.
            if Int.random(in: 0..<4, using: &random) != 0 { key += "\(members.count)" }
            members.append("\"\(key)\":" + generatedValue(&random, depth: depth + 1))
        }
        return Array(("{" + members.joined(separator: ",") + "}").utf8)
    }

    private static func generatedValue(_ random: inout SplitMix, depth: Int) -> String {
        let scalars = [
            "0", "1", "-1", "123456789", "1000000000123", "-0", "01", "1.5", "1e2", "-12E-1", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "12345678901234567890", "true",
            "false", "null", #""x""#, #""Some Title""#, #""cödé""#, #"" ""#, #""\u0041""#, #""a\"b""#, #""""#,
            "\"" + String(repeating: "x", count: 110) + "\"",
        ]
        switch Int.random(in: 0..<10, using: &random) {
        case 0 where depth < 4: return String(decoding: generatedObject(&random, depth: depth), as: UTF8.self)
        case 1 where depth < 4:
            let elements = (0..<Int.random(in: 0...3, using: &random)).map { _ in generatedValue(&random, depth: depth + 1) }
            return "[" + elements.joined(separator: ",") + "]"
        default: return scalars.randomElement(using: &random)!
        }
    }

    /// Whatever the parser refuses — in the state or around it — the reader does not read.
    @Test func acceptsNothingTheParserRefuses() {
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        let invalid: [String] = [
            #"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":1}}"#, #"{"":1,"":2}"#, #"{"a":[1,]}"#, #"{"a":1,}"#,
            #"{"a":01}"#, #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":"x"#, #"{"a""#, #"{"a":-}"#, #"{"a":1.}"#,
            #"{"a"1}"#, #"{"a":{"b":[1,{"c":[}]}}"#, #"{1:2}"#, "{\"a\":\"\u{01}\"}", #"{"a":["# + deep + "]}",
            #"{"a":1"#, #"{"#,
            // Duplicates apart, and among keys of one length ending in one byte.
            #"{"a":1,"b":2,"c":3,"a":4}"#, #"{"ab":1,"cb":2,"ab":3}"#, #"{"x":{"ab":1,"cb":2,"b":0,"cb":3}}"#,
        ]
        for state in invalid {
            let message = #"{"id":"x","content":{"state":"# + state + "}}"
            #expect(throws: JSONParseError.self, "\(state)") { try JSONParser.parse(message) }
            #expect(readState(state) == nil, "\(state)")
        }
        // Invalid UTF-8 in a key and in a value of the state, and in a string around it.
        let bytes: [[UInt8]] = [[0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D], [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x22, 0x7D]]
        for state in bytes {
            let message = Array(#"{"id":"x","content":{"state":"#.utf8) + state + Array("}}".utf8)
            #expect(throws: JSONParseError.self) { try JSONParser.parse(message) }
            let found = read(message) { (reader: inout JSONReader) throws(JSONReader.Mismatch) in
                try Self.enterState(&reader)
                return try reader.readObjectText()
            }
            #expect(found == nil)
        }
        // Around the state: a duplicate of a member the decoder counts, trailing data, a
        // missing brace, a string with a bad escape.
        for envelope in [
            #"{"id":"x","id":"y","content":{"state":@,"r":1}}"#, #"{"id":"x","content":{"state":@,"r":1}} x"#,
            #"{"id":"x","content":{"state":@,"r":1}"#, #"{"id":"\x","content":{"state":@,"r":1}}"#,
            #"{"id":"x","content":{"state":@,"r":1},}"#,
        ] {
            #expect(throws: (any Error).self, "\(envelope)") { try JSONParser.parse(envelope.replacingOccurrences(of: "@", with: "{}")) }
            #expect(!readDuplicateChecked(envelope), "\(envelope)")
        }
    }

    /// Whether the envelope of `acceptsNothingTheParserRefuses` is read, counting its members.
    private func readDuplicateChecked(_ envelope: String) -> Bool {
        let found: Bool? = read(envelope.replacingOccurrences(of: "@", with: "{}")) { (reader: inout JSONReader) throws(JSONReader.Mismatch) -> Bool in
            var seen = JSONReader.MembersSeen()
            try reader.enterObject()
            while let key = try reader.nextKey() {
                switch key {
                case "id": try seen.insert(0); _ = try reader.readString()
                case "content": try seen.insert(1); _ = try reader.readObject()
                default: throw JSONReader.Mismatch()
                }
            }
            try reader.finish()
            return true
        }
        return found != nil
    }

    /// The reader stops at the same depth as the parser: a state nested to just under, at and
    /// just over the limit, in objects and in arrays, gets the same verdict.
    @Test func meetsTheDepthLimitWhereTheParserDoes() throws {
        let limit = JSONParser.defaultMaximumDepth
        var verdicts: [Bool] = []
        for depth in (limit - 5)...(limit + 1) {
            for (open, close) in [(#"{"a":"#, "}"), ("[", "]")] {
                let nested = String(repeating: open, count: depth - 1) + "1" + String(repeating: close, count: depth - 1)
                let state = #"{"x":"# + nested + "}"
                let parsed = (try? JSONParser.parse(#"{"id":"x","content":{"state":"# + state + #","r":1}}"#)) != nil
                #expect(parsed == (readState(state) != nil), "depth \(depth), \(open)")
                verdicts.append(parsed)
            }
        }
        // The range crosses the limit: some are accepted, some refused.
        #expect(verdicts.contains(true) && verdicts.contains(false))
    }

    /// A string's end and whether it is ASCII are found in one pass, eight bytes at a time: a
    /// byte that is not ASCII — valid UTF-8 or not — and the quote that ends the string, at
    /// every position of a word, are told apart as byte by byte.
    /// Keys and names are compared a word, or two overlapping shorter loads, at a time: a
    /// difference at any position of any length is found.
    @Test func comparesBytesOfEveryLengthAtEveryPosition() {
        for count in 0...40 {
            let a = (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            a.withUnsafeBytes { x in
                let same = a
                same.withUnsafeBytes { y in #expect(JSONBytes.equal(x, y), "\(count)") }
                for position in 0..<count {
                    var other = a
                    other[position] ^= 0x20
                    other.withUnsafeBytes { y in #expect(!JSONBytes.equal(x, y), "\(count) \(position)") }
                }
                let longer = a + [UInt8(ascii: "a")]
                longer.withUnsafeBytes { y in #expect(!JSONBytes.equal(x, y), "\(count)") }
            }
        }
    }

    /// A key is matched with a name as one or two pairs of words chosen by the name's length:
    /// a key of every length up to past sixteen bytes matches its name, and no key that
    /// differs from it in one byte, at any position, or in its length does.
    @Test func matchesKeysWithNamesOfEveryLengthAtEveryPosition() throws {
        let names: [StaticString] = [
            "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghij",
            "abcdefghijk", "abcdefghijkl", "abcdefghijklm", "abcdefghijklmn", "abcdefghijklmno", "abcdefghijklmnop",
            "abcdefghijklmnopq", "abcdefghijklmnopqr",
        ]
        func matches(_ name: StaticString, _ key: [UInt8]) throws -> Bool {
            let text = Array(#"{""#.utf8) + key + Array(#"":1}"#.utf8)
            return try text.withUnsafeBytes { bytes in
                var reader = JSONReader(bytes)
                try reader.enterObject()
                guard let found = try reader.nextKey() else { return false }
                return name ~= found
            }
        }
        for name in names {
            let bytes = Array(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            #expect(try matches(name, bytes), "\(name)")
            for position in bytes.indices {
                var other = bytes
                other[position] ^= 0x20
                #expect(try !matches(name, other), "\(name) \(position)")
            }
            #expect(try !matches(name, bytes + [UInt8(ascii: "x")]), "\(name)")
            #expect(try !matches(name, Array(bytes.dropLast())), "\(name)")
        }
    }

    @Test func findsNonASCIIBytesAtEveryPositionOfAWord() throws {
        for length in 0..<20 {
            for position in 0..<max(length, 1) {
                for (inserted, valid) in [([0xC3, 0xA9] as [UInt8], true), ([0xFF], false), ([0x80], false)] {
                    var string = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    if length > 0 { string.replaceSubrange(position...position, with: inserted) }
                    let text = Array(#"{"s":""#.utf8) + string + Array(#"","t":{"u":""#.utf8) + string + Array(#""}}"#.utf8)
                    let parsed = try? JSONParser.parse(text)
                    #expect((parsed != nil) == (valid || length == 0), "\(length) \(position) \(inserted)")
                    let read = read(text) { (reader: inout JSONReader) throws(JSONReader.Mismatch) -> (String, [UInt8]) in
                        try reader.enterObject()
                        _ = try reader.nextKey()
                        let s = try reader.readString()
                        _ = try reader.nextKey()
                        let t = try reader.readObjectText().text
                        _ = try reader.nextKey()
                        try reader.finish()
                        return (s, t)
                    }
                    #expect((read != nil) == (parsed != nil), "\(length) \(position) \(inserted)")
                    if let parsed, let read {
                        #expect(read.0 == parsed["s"]?.stringValue && read.1 == parsed["t"]?.serialized())
                    }
                }
            }
        }
    }

    @Test func readsScalarsAsTheTreeHoldsThem() throws {
        let text = #"{"s":"a\u00e9\n","n":-12,"d":1.5e3,"big":9223372036854775808,"t":true,"f":false,"z":null}"#
        let tree = try JSONParser.parse(text)
        let values = read(text) { (reader: inout JSONReader) throws(JSONReader.Mismatch) -> [String: JSON] in
            var values: [String: JSON] = [:]
            try reader.enterObject()
            while let key = try reader.nextKey() {
                switch key {
                case "s": values["s"] = .string(try reader.readString())
                case "n": values["n"] = .double(try reader.readNumber())
                case "d": values["d"] = .double(try reader.readNumber())
                case "big": values["big"] = .double(try reader.readNumber())
                case "t": values["t"] = .bool(try reader.readBool())
                case "f": values["f"] = .bool(try reader.readBool())
                case "z": values["z"] = reader.readNull() ? .null : .string("not null")
                default: throw JSONReader.Mismatch()
                }
            }
            try reader.finish()
            return values
        }
        #expect(values?["s"]?.stringValue == tree["s"]?.stringValue)
        for key in ["n", "d", "big"] { #expect(values?[key]?.doubleValue == tree[key]?.doubleValue, "\(key)") }
        #expect(values?["t"] == true && values?["f"] == false && values?["z"] == .null)
        // A value of another kind than asked for is a mismatch, as is a key with an escape
        // (left to the parser).
        for (text, kind) in [(#"{"a":1}"#, 0), (#"{"a":"1"}"#, 1), (#"{"a":null}"#, 2), (#"{"\u0061":1}"#, 1)] {
            let value: Bool? = read(text) { (reader: inout JSONReader) throws(JSONReader.Mismatch) -> Bool in
                try reader.enterObject()
                guard let key = try reader.nextKey(), case "a" = key else { throw JSONReader.Mismatch() }
                switch kind {
                case 0: _ = try reader.readString()
                case 1: _ = try reader.readNumber()
                default: _ = try reader.readBool()
                }
                return true
            }
            #expect(value == nil, "\(text)")
        }
    }
}
