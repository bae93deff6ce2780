import Testing
import VarlinkCore

/// A connection's attachments: one value per type, kept apart, replaced, removed, and the first
/// of two concurrent bindings kept.
@Suite struct ConnectionContextTests {
    struct Role: Sendable, Equatable { let name: String }
    struct Standing: Sendable, Equatable { let refused: Bool }
    struct Count: Sendable, Equatable { let value: Int }

    @Test func eachTypeHasItsOwnValue() {
        let connection = VarlinkConnectionContext(id: 1, peer: nil)
        #expect(connection.attachment(Role.self) == nil)
        connection.setAttachment(Role(name: "producer"))
        connection.setAttachment(Standing(refused: true))
        connection.setAttachment(Count(value: 3))
        #expect(connection.attachment(Role.self) == Role(name: "producer"))
        #expect(connection.attachment(Standing.self) == Standing(refused: true))
        #expect(connection.attachment(Count.self) == Count(value: 3))
    }

    @Test func aValueIsReplacedAndRemoved() {
        let connection = VarlinkConnectionContext(id: 2, peer: nil)
        connection.setAttachment(Role(name: "producer"))
        connection.setAttachment(Count(value: 1))
        connection.setAttachment(Role(name: "presenter"))
        #expect(connection.attachment(Role.self) == Role(name: "presenter"))
        connection.setAttachment(Role?.none)
        #expect(connection.attachment(Role.self) == nil)
        #expect(connection.attachment(Count.self) == Count(value: 1), "removing one type leaves the others")
        connection.setAttachment(Role(name: "extension"))
        #expect(connection.attachment(Role.self) == Role(name: "extension"))
    }

    @Test func attachIfAbsentKeepsTheFirstBinding() {
        let connection = VarlinkConnectionContext(id: 3, peer: nil)
        #expect(connection.attachIfAbsent(Role(name: "producer")) == Role(name: "producer"))
        #expect(connection.attachIfAbsent(Role(name: "presenter")) == Role(name: "producer"))
        #expect(connection.attachment(Role.self) == Role(name: "producer"))
        #expect(connection.attachIfAbsent(Count(value: 7)) == Count(value: 7))
    }
}
