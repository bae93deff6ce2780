import IslandCore
import IslandProtocol
import Testing
import VarlinkCore
@testable import IslandDaemon

/// The daemon's Swift enums whose raw values are an interface's enum (they decode calls and are
/// written in replies) have exactly the values Protocol/*.varlink declares: a value
/// renamed, added or dropped there is found here rather than by a call refused at run time.
@Suite struct EnumContractTests {
    /// The values of `member` of a struct type, or of a method's parameters, through `?` and a named enum type.
    static func values(_ text: String, _ owner: String, _ member: String) throws -> Set<String>? {
        let interface = try VarlinkInterface(parsing: text)
        let fields: [VarlinkField]
        if case .struct(let members)? = interface.types[owner] {
            fields = members
        } else if let method = interface.methods[owner] {
            fields = method.input + method.output
        } else {
            return nil
        }
        guard var type = fields.first(where: { $0.name == member })?.type else { return nil }
        if case .nullable(let inner) = type { type = inner }
        if case .named(let name) = type, let declared = interface.types[name] { type = declared }
        guard case .enum(let values) = type else { return nil }
        return Set(values)
    }

    @Test func theActivitysEnumsAreTheInterfaces() throws {
        let states = Set(ActivityState.allCases.map(\.rawValue))
        #expect(try Self.values(IslandInterfaces.producer, "Activity", "state") == states)
        #expect(try Self.values(IslandInterfaces.presenter, "Item", "state") == states)
        let reasons = Set(EndReason.allCases.map(\.rawValue))
        #expect(try Self.values(IslandInterfaces.producer, "Activity", "endReason") == reasons)
        #expect(try Self.values(IslandInterfaces.presenter, "Item", "endReason") == reasons)
        #expect(try Self.values(IslandInterfaces.producer, "Activity", "ownerGone") == Set(OwnerGonePolicy.allCases.map(\.rawValue)))
        #expect(try Self.values(IslandInterfaces.producer, "DismissalPolicy", "kind") == Set(DismissalKind.allCases.map(\.rawValue)))
    }

    @Test func thePresentersAndAdminsEnumsAreTheInterfaces() throws {
        #expect(try Self.values(IslandInterfaces.presenter, "Interact", "action") == Set(PresenterAction.allCases.map(\.rawValue)))
        #expect(try Self.values(IslandInterfaces.admin, "SetSharing", "source") == Set(SharingSource.allCases.map(\.rawValue)))
        #expect(try Self.values(IslandInterfaces.admin, "SetLock", "source") == Set(LockSource.allCases.map(\.rawValue)))
    }
}
