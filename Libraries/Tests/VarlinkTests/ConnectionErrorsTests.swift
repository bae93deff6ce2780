import Foundation
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore

@Suite struct ConnectionErrorsTests {
    static let every: [VarlinkConnectionErrors.Condition] = [
        .messageTooLarge(limit: 4096), .invalidMessage(reason: "invalid JSON"),
        .tooManyConnections(limit: 2, scope: .user), .tooManyConnections(limit: 9, scope: .total), .shuttingDown,
    ]

    @Test func eachConditionIsTheErrorOfItsNameInTheInterface() {
        let errors = TestService.connectionErrors
        #expect(errors.interface?.name == "org.example.connection")
        #expect(
            Self.every.map { errors.error(for: $0) } == [
                VarlinkError("org.example.connection.MessageTooLarge", ["limit": 4096]),
                VarlinkError("org.example.connection.InvalidMessage", ["reason": "invalid JSON"]),
                VarlinkError("org.example.connection.TooManyConnections", ["limit": 2, "scope": "user"]),
                VarlinkError("org.example.connection.TooManyConnections", ["limit": 9, "scope": "total"]),
                VarlinkError("org.example.connection.ShuttingDown"),
            ])
    }

    @Test func aConditionTheInterfaceDoesNotDeclareIsNotTold() throws {
        let errors = VarlinkConnectionErrors(
            declaredBy: try VarlinkInterface(
                parsing: """
                    interface org.example.partial
                    error ShuttingDown ()
                    """))
        #expect(Self.every.map { errors.error(for: $0)?.name } == [nil, nil, nil, nil, "org.example.partial.ShuttingDown"])
    }

    @Test func silentTellsNothing() {
        #expect(VarlinkConnectionErrors.silent.interface == nil)
        #expect(Self.every.allSatisfy { VarlinkConnectionErrors.silent.error(for: $0) == nil })
    }

    // The child process traps on purpose; under scripts/sanitize.sh the sanitizer reports every
    // trap, so this one would read as a finding.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["ISLAND_SANITIZER"] != nil, "its trap is intended; a sanitizer reports it"))
    func anErrorDeclaredWithOtherParametersIsRefused() async {
        await #expect(processExitsWith: .failure) {
            _ = VarlinkConnectionErrors(
                declaredBy: try! VarlinkInterface(
                    parsing: """
                        interface org.example.wrong
                        error MessageTooLarge (size: int)
                        """))
        }
    }

    /// islandd's `org.island.Connection` names every condition, as the daemon's clients expect.
    @Test func islandsConnectionInterfaceDeclaresEveryCondition() throws {
        let errors = VarlinkConnectionErrors(declaredBy: try VarlinkInterface(parsing: try RepositoryFiles.interface("org.island.Connection.varlink")))
        #expect(
            Self.every.map { errors.error(for: $0)?.name } == [
                "org.island.Connection.MessageTooLarge", "org.island.Connection.InvalidMessage",
                "org.island.Connection.TooManyConnections", "org.island.Connection.TooManyConnections",
                "org.island.Connection.ShuttingDown",
            ])
    }
}
