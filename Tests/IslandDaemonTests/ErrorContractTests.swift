import IslandCore
import IslandProtocol
import OrderedCollections
import OrderedJSON
import Testing
import VarlinkCore
@testable import IslandDaemon

/// One wire contract for the refusals: every error the daemon answers with, and every error a
/// push's feedback names, is one Protocol/org.island.varlink declares, with exactly the
/// parameters it declares, of their types; and every error it declares is one of them. The
/// names come from the interface (IslandCore's ErrorNames, the daemon's IslandErrorNames), so a
/// renamed error does not compile; this finds a parameter added, dropped or retyped there, and
/// an error declared that nothing sends.
@Suite struct ErrorContractTests {
    /// Each case of the rules' refusals, once.
    static let refusals: [IslandError] = [
        .attributesTooLarge(limit: 4096, size: 5000, part: .attributes),
        .attributesTooLarge(limit: 4096, size: 5000, part: .state),
        .nestingTooDeep(limit: 32, depth: 33),
        .typeTooLong(limit: 64, size: 65),
        .keyTooLong(limit: 128, size: 129),
        .alertTooLarge(limit: 512, size: 513),
        .denied(app: "a"),
        .unentitled(app: "a"),
        .globalMaximumExceeded(limit: 32),
        .targetMaximumExceeded(app: "a", limit: 5),
        .noSuchActivity(id: "x"),
        .activityEnded(id: "x", state: .ended),
        .staleTimestamp(id: "x", last: 2.5, given: 1),
        .implausibleTimestamp(id: "x", given: 1.8e12, latest: 1.7e9),
        .implausibleStaleDate(given: 1.8e12, latest: 1e11),
        .startBudgetExceeded(app: "a", limit: 10, window: 60, retryAfter: 12.5),
        .tooManyPushTokens(app: "a", limit: 8),
        .startAlertRequired(start: 1.7e9),
        .implausibleStartDate(given: 1.8e12, latest: 1e11),
        .pushBudgetExceeded(app: "a", limit: 10, window: 3600, retryAfter: 30),
        .invalidChannel(channel: "c", reason: "no such channel"),
        .broadcastStart(channel: "c"),
        .channelMessageExpired(channel: "c", expiration: 1.7e9),
    ]

    /// What a push's feedback names besides the rules' refusals.
    static let pushRefusals: [PushRefusal] = [
        .payloadTooLarge(limit: 4096, size: 5000), .invalidPayload(reason: "aps.event is missing"), .noSuchToken,
        .expired(expiration: 1.7e9, receivedAt: 1.7e9 + 1),
    ]

    /// The engine's own refusals, as the daemon answers them (`buttonMissing` is
    /// org.varlink.service's InvalidParameter).
    static let engineErrors: [EngineError] = [
        .invalidLayout(type: "T", path: "expanded.center", reason: "unknown view"), .tooManyLayouts(app: "a", limit: 64),
        .persistenceFailure(reason: "disk full"), .unknownApp(app: "a"), .frequentUpdatesUndeclared(app: "a"), .sharedActivity,
        .locked, .noSuchButton(id: "x", button: "b"), .pushUnavailable(reason: "no broker"),
        .speaksOnlyForItself(reason: "r"), .noSuchSourceApp(app: "a"),
    ]

    struct NotAConfiguration: Error {}

    /// Every error of org.island the daemon or a push's feedback sends, as (name, parameters).
    static var sent: [(name: String, parameters: JSONObject)] {
        refusals.map { ($0.name, $0.parameters) } + pushRefusals.map { ($0.name, $0.parameters) }
            + engineErrors.map { VarlinkError($0) }.map { ($0.name, $0.parameters) }
            + [InvalidConfiguration(NotAConfiguration(), mainFile: "/etc/island/islandd.conf").reply].map { ($0.name, $0.parameters) }
    }

    static func errorsInterface() throws -> VarlinkInterface { try VarlinkInterface(parsing: IslandInterfaces.errors) }

    @Test func everyErrorSentIsDeclaredWithItsParameters() throws {
        let interface = try Self.errorsInterface()
        for (name, parameters) in Self.sent {
            let prefix = interface.name + "."
            #expect(name.hasPrefix(prefix), "\(name) is not an error of \(interface.name)")
            guard let fields = interface.errors[String(name.dropFirst(prefix.count))] else {
                Issue.record("\(name) is not declared in Protocol/org.island.varlink")
                continue
            }
            // Every declared parameter present (none is optional) and none undeclared.
            #expect(Set(parameters.keys) == Set(fields.map(\.name)), "\(name)'s parameters")
            #expect(interface.firstInvalidField(in: parameters, of: fields) == nil, "\(name) \(JSON.object(parameters))")
        }
    }

    @Test func everyErrorDeclaredIsSent() throws {
        let interface = try Self.errorsInterface()
        let sent = Set(Self.sent.map(\.name))
        for error in interface.errors.keys.sorted() {
            #expect(sent.contains("\(interface.name).\(error)"), "nothing sends \(error)")
        }
    }

    @Test func aPayloadPartIsOneTheInterfaceDeclares() throws {
        let parts = Self.refusals.compactMap { $0.parameters[IslandErrorNames.AttributesTooLarge.part]?.stringValue }
        #expect(parts == [IslandErrorNames.AttributesTooLarge.Part.attributes, IslandErrorNames.AttributesTooLarge.Part.state])
    }
}
