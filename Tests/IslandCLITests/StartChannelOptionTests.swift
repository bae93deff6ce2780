import ArgumentParser
import Testing
@testable import island

/// `island start --channel ID --push-token`: an activity listens to a channel or has a token,
/// not both. The daemon's refusal (InvalidChannel) called the id no channel and hinted at
/// `island channel create`; the CLI says what is wrong before asking.
@Suite struct StartChannelOptionTests {
    @Test func aChannelAndAPushTokenAreRefusedTogether() {
        do {
            _ = try Start.parse(["Queue", "--channel", "UQW2RaDMa7PJg7SvLuqc6A", "--push-token"])
            Issue.record("--channel with --push-token was taken")
        } catch {
            #expect(Start.message(for: error).contains("not both"))
        }
    }

    @Test func eitherAloneIsTaken() throws {
        #expect(try Start.parse(["Queue", "--channel", "UQW2RaDMa7PJg7SvLuqc6A"]).channel == "UQW2RaDMa7PJg7SvLuqc6A")
        #expect(try Start.parse(["Queue", "--push-token"]).pushToken)
    }
}
