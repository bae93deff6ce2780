import OrderedJSON
import OrderedCollections
import Testing
@testable import VarlinkCore

@Suite struct IDLTests {
    static let example = """
        # An interface for tests.
        interface org.example.test

        type Item (name: string, count: int, tags: ?[]string)

        # Echoes.
        method Echo(text: string) -> (text: string)
        method Nested(item: Item, map: [string]int, set: [string](), mode: (fast, slow), any: object) -> ()
        method Add(a: int, b: float) -> (sum: float)
        error Boom (why: string, code: ?int)
        """

    @Test func parsesMembersAndTypes() throws {
        let interface = try VarlinkInterface(parsing: Self.example)
        #expect(interface.name == "org.example.test")
        #expect(interface.description == Self.example)
        #expect(
            interface.types["Item"]
                == .struct([
                    VarlinkField("name", .string), VarlinkField("count", .int), VarlinkField("tags", .nullable(.array(.string))),
                ]))
        #expect(
            interface.methods["Nested"]?.input.map(\.type) == [
                .named("Item"), .dictionary(.int), .dictionary(.struct([])), .enum(["fast", "slow"]), .object,
            ])
        #expect(interface.methods["Nested"]?.output == [])
        #expect(interface.errors["Boom"]?.count == 2)
    }

    @Test func parsesTheServiceInterface() throws {
        #expect(VarlinkService.serviceInterface.methods.keys.sorted() == ["GetInfo", "GetInterfaceDescription"])
        #expect(
            VarlinkService.serviceInterface.errors.keys.sorted() == [
                "ExpectedMore", "InterfaceNotFound", "InvalidParameter", "MethodNotFound", "MethodNotImplemented", "PermissionDenied",
            ])
    }

    @Test(arguments: [
        "method Foo() -> ()",
        "interface org.example\nmethod Foo() -> ()\nmethod Foo() -> ()",
        "interface org.example\nmethod Foo(a: int, a: int) -> ()",
        "interface org.example\nmethod Foo(a: Missing) -> ()",
        "interface org.example\nmethod foo() -> ()",
        "interface example\nmethod Foo() -> ()",
        "interface org..example\nmethod Foo() -> ()",
        "interface org.example\nmethod Foo(a: ??int) -> ()",
        "interface org.example\nmethod Foo(a: [int]string) -> ()",
        "interface org.example\nmethod Foo(a: int) -> ",
        "interface org.example\nmethod Foo(a__b: int) -> ()",
        "interface org.example\ntype T (a, a)",
        "interface org.example\n",
        "interface org.example\nfunction Foo() -> ()",
    ])
    func rejectsInvalidDefinitions(text: String) {
        #expect(throws: VarlinkIDLError.self) { try VarlinkInterface(parsing: text) }
    }

    @Test func reportsWhereTheProblemIs() {
        do {
            _ = try VarlinkInterface(parsing: "interface org.example\n\nmethod Foo(a: int,) -> ()")
            Issue.record("accepted a trailing comma")
        } catch {
            #expect(error.line == 3)
            #expect(error.column == 19)
        }
    }
}

@Suite struct ValidationTests {
    let interface = try! VarlinkInterface(parsing: IDLTests.example)

    func check(_ method: String, _ parameters: JSON) -> String? {
        interface.firstInvalidField(in: parameters.objectValue!, of: interface.methods[method]!.input)
    }

    @Test func acceptsConformingParameters() {
        #expect(check("Echo", ["text": "hi"]) == nil)
        #expect(check("Add", ["a": 1, "b": 2]) == nil, "an int is a valid float")
        #expect(
            check(
                "Nested",
                [
                    "item": ["name": "x", "count": 1], "map": ["k": 1], "set": ["a": [:]], "mode": "fast", "any": ["x": [1]],
                ]) == nil)
        #expect(
            check(
                "Nested",
                [
                    "item": ["name": "x", "count": 1, "tags": nil], "map": [:], "set": [:], "mode": "slow", "any": [:],
                ]) == nil)
    }

    @Test func namesTheFirstBadField() {
        #expect(check("Echo", [:]) == "text")
        #expect(check("Echo", ["text": 1]) == "text")
        #expect(check("Echo", ["text": nil]) == "text")
        #expect(check("Echo", ["text": "a", "extra": 1]) == "extra")
        #expect(check("Add", ["a": 1.5, "b": 1]) == "a", "a float is not an int")
        let base: JSONObject = ["item": ["name": "x", "count": 1], "map": [:], "set": [:], "mode": "fast", "any": [:]]
        func with(_ key: String, _ value: JSON) -> JSON {
            var p = base
            p[key] = value
            return .object(p)
        }
        #expect(check("Nested", with("item", ["name": "x"])) == "item.count")
        #expect(check("Nested", with("item", ["name": "x", "count": 1, "tags": ["a", 2]])) == "item.tags[1]")
        #expect(check("Nested", with("item", ["name": "x", "count": 1, "bogus": true])) == "item.bogus")
        #expect(check("Nested", with("map", ["k": "v"])) == "map[k]")
        #expect(check("Nested", with("set", ["a": ["b": 1]])) == "set[a].b")
        #expect(check("Nested", with("mode", "medium")) == "mode")
        #expect(check("Nested", with("any", [1])) == "any")
    }

    /// A refusal names the culprit in the caller's own terms: the path is the caller's, and the
    /// refusal says what belongs there.
    @Test func saysWhatIsExpectedWhereTheCallerWentWrong() {
        let base: JSONObject = ["item": ["name": "x", "count": 1], "map": [:], "set": [:], "mode": "fast", "any": [:]]
        func invalid(_ key: String, _ value: JSON?) -> (path: String, expected: String)? {
            var p = base
            p[key] = value
            return interface.firstInvalidMember(in: p, of: interface.methods["Nested"]!.input)
        }
        let item = "Item (name: string, count: int, tags: ?[]string)"
        #expect(invalid("item", "x")! == ("item", item), "a string for a struct names the struct, not its first member")
        #expect(invalid("item", nil)! == ("item", item))
        #expect(invalid("item", ["name": "x"])! == ("item.count", "int"))
        #expect(invalid("item", ["name": "x", "count": 1, "tags": [1]])! == ("item.tags[0]", "string"))
        #expect(invalid("item", ["name": "x", "count": 1, "bogus": 1])! == ("item.bogus", "no such member"))
        #expect(invalid("mode", "medium")! == ("mode", "(fast, slow)"))
        #expect(invalid("map", ["k": "v"])! == ("map[k]", "int"))
        #expect(invalid("mode", "fast") == nil)
    }

    @Test func repliesMayCarryMembersANewerServerAdded() {
        let output = interface.methods["Add"]!.output
        #expect(interface.firstInvalidField(in: ["sum": 1.0, "new": true], of: output, allowingUnknownFields: true) == nil)
        #expect(interface.firstInvalidField(in: ["new": true], of: output, allowingUnknownFields: true) == "sum")
    }
}

/// Island's interfaces, as real-world IDL.
@Suite struct ProtocolFilesTests {
    @Test func theProtocolDirectoryHoldsInterfaces() {
        #expect(RepositoryFiles.interfaceFiles.count >= 6, "\(RepositoryFiles.interfaceFiles)")
    }

    @Test(arguments: RepositoryFiles.interfaceFiles)
    func everyInterfaceOfTheDaemonParses(file: String) throws {
        let interface = try VarlinkInterface(parsing: try RepositoryFiles.interface(file))
        #expect(interface.name + ".varlink" == file)
    }
}
