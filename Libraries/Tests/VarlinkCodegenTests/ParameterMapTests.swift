import Testing
@testable import VarlinkCodegen

/// A `.varlinkmap` is read line by line; what it cannot mean is refused with its line.
@Suite struct ParameterMapTests {
    @Test func typesMethodsAndTheirMembers() throws {
        let map = try ParameterMap(
            parsing: """
                # A comment.
                import Shop
                names org.example.Shop as ShopNames
                access package

                type org.example.Shop.Price: Money
                  amount: Cents
                method org.example.Shop.Buy as Purchase readable: Claiming, Logged
                  # Inside a method, too.
                  count as quantity: Int = 1
                  note = ""
                method org.example.Shop.List
                """)
        #expect(map.imports == ["Shop"])
        #expect(map.names.count == 1 && map.names[0] == ("org.example.Shop", "ShopNames"))
        #expect(map.access == "package")
        #expect(
            map.types == [
                ParameterMap.TypeMapping(
                    interface: "org.example.Shop", name: "Price", swiftType: "Money",
                    members: [
                        ParameterMap.Member(name: "amount", property: nil, swiftType: "Cents", absent: nil)
                    ])
            ])
        #expect(map.methods.count == 2)
        let buy = map.methods[0]
        #expect(buy.interface == "org.example.Shop" && buy.name == "Buy" && buy.structName == "Purchase")
        #expect(buy.readable && buy.conformances == ["Claiming", "Logged"])
        #expect(
            buy.members == [
                ParameterMap.Member(name: "count", property: "quantity", swiftType: "Int", absent: "1"),
                ParameterMap.Member(name: "note", property: nil, swiftType: nil, absent: "\"\""),
            ])
        let list = map.methods[1]
        #expect(list.structName == "ListParameters" && !list.readable && list.conformances.isEmpty && list.members.isEmpty)
    }

    @Test func whatItCannotMeanIsRefusedByLine() {
        func refusal(_ text: String) -> String? {
            do {
                _ = try ParameterMap(parsing: text)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal("  count: Int") == "line 1: a member outside a type or method")
        #expect(refusal("method Buy") == "line 1: expected 'type' or 'method' and a qualified name")
        #expect(refusal("function org.example.Shop.Buy") == "line 1: expected 'type' or 'method'")
        #expect(refusal("type org.example.Shop.Price") == "line 1: a type needs its Swift type: 'type <interface>.<Type>: <Swift type>'")
        #expect(refusal("names org.example.Shop") == "line 1: expected 'names <interface> as <Swift enum>'")
        #expect(refusal("access open") == "line 1: expected 'access public', 'access package' or 'access internal'")
        #expect(refusal("method org.example.Shop.Buy quickly") == "line 1: unexpected 'quickly'")
        #expect(refusal("method org.example.Shop.Buy\n  count") == "line 2: 'count' says nothing the IDL does not")
        #expect(refusal("method org.example.Shop.Buy\n  count of: Int") == "line 2: expected '<member> [as <property>] [: <Swift type>] [= <value>]'")
        #expect(
            refusal("type org.example.Shop.Price: Money\n  amount = 0")
                == "line 2: a type's member has only a Swift type: '<member>: <Swift type>'")
    }
}
