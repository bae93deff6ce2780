import OrderedJSON
import OrderedCollections
import Testing

@Suite struct JSONShapeTests {
    /// The same question asked of trees: keys in order, and kinds with every number one kind.
    private func sameShape(_ a: JSONObject, _ b: JSONObject) -> Bool {
        func kind(_ value: JSON) -> Int {
            switch value {
            case .null: 0
            case .bool: 1
            case .int, .double: 2
            case .string: 3
            case .array: 4
            case .object: 5
            }
        }
        return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && kind($0.value) == kind($1.value) }
    }

    @Test func agreesWithTheTreesOnEveryPair() {
        let objects: [JSONObject] = [
            [:], ["a": 1], ["a": 2.5], ["a": -7], ["a": "1"], ["a": true], ["a": false], ["a": nil], ["a": [1]], ["a": [:]],
            ["b": 1], ["a": 1, "b": 1], ["b": 1, "a": 1], ["a": 1, "b": "x"],
            // Values whose text holds what ends a value elsewhere: commas, braces, quotes, escapes.
            ["a": "x,\"}y", "b": 2], ["a": "\\", "b": 2], ["a": ["s": "]}", "t": [1, [2, "],"]]], "b": 2],
            ["a": [["x": "{"]], "b": 2], ["a\"q": 1], ["a\\": 1], ["ü": "é", "b": nil], ["": 0],
            ["a": "x,\"}y", "b": "two"], ["a": [:], "b": [1, 2, 3]],
            // Keys past a word of eight bytes, differing in the first word or in the tail.
            ["a_long_key_name_1": 1], ["a_long_key_name_2": 1], ["b_long_key_name_1": 1], ["a_long_key_name_1x": 1],
        ]
        var same = 0
        for a in objects {
            for b in objects {
                let expected = sameShape(a, b)
                if expected { same += 1 }
                let (shapeA, shapeB) = (
                    JSON.objectShape(ofText: JSON.object(a).serialized()),
                    JSON.objectShape(ofText: JSON.object(b).serialized())
                )
                #expect(
                    shapeA != nil && shapeB != nil && (shapeA == shapeB) == expected,
                    "\(JSON.object(a)) / \(JSON.object(b))")
            }
        }
        // Not only the pairs of an object with itself.
        #expect(same > objects.count)
    }

    @Test func textThatIsNotACompactObjectHasNoShape() {
        #expect(JSON.objectShape(ofText: Array("{}".utf8)) == [])
        #expect(JSON.objectShape(ofText: Array(#"{"a":1}"#.utf8)) != nil)
        for text in [
            #"{"a":1"#, #"{"a":1}x"#, #"{"a" :1}"#, #"[1]"#, #""a""#, "", #"{"a":"1}"#, #"{"a":{"b":1}"#, #"{"a"}"#,
            #"{"a":1,}"#, #"{"a":x}"#, #"{"a": 1}"#, #"{"a":1]"#, #"{"a"#, "{", "{}}", #"{"a":1}}"#, #"{"a":[1}"#,
            #"{"a":}"#, #"{"a":"#,
        ] {
            #expect(JSON.objectShape(ofText: Array(text.utf8)) == nil, "\(text)")
        }
    }
}
