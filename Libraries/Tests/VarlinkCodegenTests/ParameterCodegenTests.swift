import Foundation
import Testing
import VarlinkCodegen
import VarlinkCore

/// The Swift written for a map over its interfaces, whole for a small interface (Goldens/: after
/// a deliberate change, `.build/debug/varlink-codegen shop.varlinkmap shop.swift.golden shop.varlink`
/// there rewrites it), and what cannot be written refused with its reason.
@Suite struct ParameterCodegenTests {
    static let goldens = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens")

    static func text(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: goldens.appendingPathComponent(name)), as: UTF8.self)
    }

    @Test func theShopIsWrittenAsItsGolden() throws {
        let interface = try VarlinkInterface(parsing: try Self.text("shop.varlink"))
        let map = try ParameterMap(parsing: try Self.text("shop.varlinkmap"))
        let swift = try ParameterCodegen(map: map, interfaces: [interface]).generate()
        let golden = try Self.text("shop.swift.golden")
        // Line by line, so a difference is shown where it is.
        let (written, expected) = (
            swift.split(separator: "\n", omittingEmptySubsequences: false),
            golden.split(separator: "\n", omittingEmptySubsequences: false)
        )
        for (index, (line, goldenLine)) in zip(written, expected).enumerated() where line != goldenLine {
            Issue.record("line \(index + 1): \(line)\n  golden: \(goldenLine)")
            break
        }
        #expect(written.count == expected.count)
    }

    static let shop = """
        interface org.example.Shop
        type Price (amount: float, currency: ?(eur, usd))
        method Buy(item: string, price: Price, count: ?int, tags: []string, member: ?bool) -> ()
        method Look() -> ()
        """

    func refusal(_ map: String) throws -> String? {
        let interface = try VarlinkInterface(parsing: Self.shop)
        do throws(CodegenError) {
            _ = try ParameterCodegen(map: try ParameterMap(parsing: map), interfaces: [interface]).generate()
            return nil
        } catch {
            return error.description
        }
    }

    @Test func whatCannotBeWrittenIsRefusedWithItsReason() throws {
        let buy = "method org.example.Shop.Buy\n  tags: [String]\n  member as isMember = false\n"
        #expect(try refusal("type org.example.Shop.Price: Money\n  currency: Currency\n" + buy) == nil)
        #expect(try refusal(buy) == "org.example.Shop.Buy.price is a 'Price': map 'type org.example.Shop.Price: <Swift type>'")
        #expect(
            try refusal("type org.example.Shop.Price: Money\n" + buy)
                == "org.example.Shop.Price.currency needs its Swift type in the map")
        let price = "type org.example.Shop.Price: Money\n  currency: Currency\n"
        #expect(
            try refusal(price + "method org.example.Shop.Buy\n  member as isMember = false\n")
                == "org.example.Shop.Buy.tags needs its Swift type in the map")
        #expect(try refusal(price + buy + "  item = \"\"\n") == "org.example.Shop.Buy.item is never absent: it has no value for when it is")
        #expect(try refusal(price + buy + "  colour: String\n") == "org.example.Shop.Buy has no member 'colour'")
        #expect(
            try refusal(price + "method org.example.Shop.Buy\n  tags: [String]\n")
                == "org.example.Shop.Buy.member: 'member' is a name the generated code uses; map it 'as' another")
        #expect(try refusal(price + "method org.example.Shop.Sell\n") == "no method 'org.example.Shop.Sell'")
        #expect(try refusal(price + "method org.example.Shop.Look\n") == "org.example.Shop.Look has no parameters to decode")
        #expect(try refusal("method org.example.Till.Open\n") == "no interface 'org.example.Till' among the .varlink files")
        #expect(try refusal("type org.example.Shop.Cost: Money\n") == "no struct type 'org.example.Shop.Cost'")
    }

    @Test func aMemberWhoseValuesEnumSwiftWouldRefuseIsRefused() throws {
        // `Route.Type` is the metatype: no nested type may be named so.
        let interface = try VarlinkInterface(
            parsing: """
                interface org.example.Router
                type Route (type: (fast, slow))
                """)
        let map = try ParameterMap(parsing: "names org.example.Router as RouterNames\n")
        #expect(throws: CodegenError("org.example.Router.Route.type: its names' enum would be named 'Type', which Swift reserves")) {
            try ParameterCodegen(map: map, interfaces: [interface]).generate()
        }
    }

    @Test func aMemberThatWouldHideAQualifiedNameIsRefused() throws {
        let interface = try VarlinkInterface(
            parsing: """
                interface org.example.Router
                method Route(method: string) -> ()
                """)
        let map = try ParameterMap(parsing: "names org.example.Router as RouterNames\n")
        #expect(throws: CodegenError("org.example.Router.Route: a member named 'method' would hide the qualified name")) {
            try ParameterCodegen(map: map, interfaces: [interface]).generate()
        }
    }
}
