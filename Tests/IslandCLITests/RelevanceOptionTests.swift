import ArgumentParser
import Testing
@testable import island

/// A relevance score may be negative (it only orders activities): `--relevance -1` gives it,
/// where the argument parser took "-1" for an option and said the value was missing.
@Suite struct RelevanceOptionTests {
    @Test func startTakesANegativeScore() throws {
        #expect(try Start.parse(["Delivery", "--relevance", "-1"]).relevance == -1)
    }

    @Test func updateTakesANegativeScore() throws {
        #expect(try Update.parse(["an-id", "--relevance", "-2.5", "--state", "{}"]).relevance == -2.5)
    }

    @Test func pushTakesANegativeScore() throws {
        #expect(try PushCommand.parse(["a-token", "--state", "{}", "--relevance", "-3"]).relevance == -3)
    }

    @Test func aChannelPushTakesANegativeScore() throws {
        #expect(try ChannelPush.parse(["a-channel", "--app", "org.example.Coffee", "--state", "{}", "--relevance", "-4"]).relevance == -4)
    }

    @Test func aScoreIsStillANumber() {
        #expect(throws: (any Error).self) { try Start.parse(["Delivery", "--relevance", "--state"]) }
    }
}
