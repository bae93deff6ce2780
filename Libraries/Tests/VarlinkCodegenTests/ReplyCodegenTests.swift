import Testing
import VarlinkCodegen
import VarlinkCore

/// What the replies' structs cannot be written for, refused with the reason (what they are
/// written as is in Goldens/shop.swift.golden, `ShopReplies`).
@Suite struct ReplyCodegenTests {
    func refusal(_ interface: String) throws -> String? {
        let parsed = try VarlinkInterface(parsing: "interface org.example.Till\n" + interface)
        do throws(CodegenError) {
            _ = try ParameterCodegen(map: try ParameterMap(parsing: "replies org.example.Till as TillReplies\n"), interfaces: [parsed])
                .generate()
            return nil
        } catch {
            return error.description
        }
    }

    @Test func everyTypeOfTheIDLIsWritten() throws {
        #expect(
            try refusal(
                """
                type Coin (value: int, kind: Kind)
                type Kind (gold, silver)
                method Count() -> (coins: []Coin, byKind: [string]int, note: ?object, open: bool, since: ?float, who: ?(name: string))
                """) == nil)
    }

    @Test func whatCannotBeWrittenIsRefusedWithItsReason() throws {
        #expect(try refusal("method Count() -> (json: int)\n") == "org.example.Till.Count: a member named 'json' would hide the object read")
        #expect(
            try refusal("type Coin (value: int)\nmethod Count() -> (coin: (value: int), other: Coin)\n")
                == "org.example.Till.Count.coin: its struct would hide the type 'Coin'")
        #expect(
            try refusal("method Count() -> (coins: []?int)\n")
                == "org.example.Till.Count.coins: a nullable value within an array or a dictionary is not read")
    }

    @Test func aMapLineOfRepliesIsRead() throws {
        let map = try ParameterMap(parsing: "replies org.example.Till as TillReplies\n")
        #expect(map.replies.map(\.interface) == ["org.example.Till"])
        #expect(map.replies.map(\.swiftEnum) == ["TillReplies"])
        #expect(throws: CodegenError("line 1: expected 'replies <interface> as <Swift enum>'")) {
            try ParameterMap(parsing: "replies org.example.Till\n")
        }
    }
}
