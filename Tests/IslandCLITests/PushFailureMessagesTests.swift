import ArgumentParser
import Testing
@testable import island

/// What `island push` and `island channel` say when they fail. A broker that refuses MQTT 5
/// (NATS's listener) will refuse it at every retry: they stop at once and say to ask for 3.1.1,
/// where they waited 10 s and said only "Unsupported Protocol Version".
@Suite struct PushFailureMessagesTests {
    @Test(arguments: [
        "the broker refused the connection: Unsupported Protocol Version",
        "the broker refused the connection: Connection Refused: unacceptable protocol version.",
    ])
    func aRefusedProtocolVersionIsRecognized(_ reason: String) {
        #expect(PushCommand.refusesTheProtocolVersion(reason))
    }

    @Test(arguments: ["The connection was lost.", "no answer", "the broker refused the connection: Not authorized"])
    func otherReasonsAreNot(_ reason: String) {
        #expect(!PushCommand.refusesTheProtocolVersion(reason))
    }

    /// A rotated token's activity lives on: the hint sends the server to the new token, not to
    /// "a dismissed activity's token is dead", which it said for both.
    @Test func aRotatedTokensHintPointsToTheNewToken() {
        #expect(PushCommand.revokedHint(reason: "rotated").contains("new token"))
        #expect(!PushCommand.revokedHint(reason: "rotated").contains("dismissed"))
        #expect(PushCommand.revokedHint(reason: "dismissed").contains("dismissed"))
    }

    /// A TLS file that cannot be read is named with its option, where libmosquitto said only
    /// "TLS files: Invalid function arguments provided"; a certificate needs its key.
    @Test(arguments: [
        (["--cafile", "/nonexistent/ca.pem"], "--cafile /nonexistent/ca.pem: No such file or directory"),
        (["--cert", "/nonexistent/c.pem", "--key", "/nonexistent/k.pem"], "--cert /nonexistent/c.pem: No such file"),
        (["--cert", "/nonexistent/c.pem"], "--cert and --key go together"),
        (["--key", "/nonexistent/k.pem"], "--cert and --key go together"),
    ])
    func aTLSFileThatCannotBeReadIsNamed(_ arguments: [String], _ message: String) throws {
        let options = try BackendBrokerOptions.parse(["--broker", "mqtts://localhost:8883"] + arguments)
        #expect {
            _ = try options.configuration(json: false)
        } throws: { error in
            (error as? CLIFailure)?.message.contains(message) == true
        }
    }
}
