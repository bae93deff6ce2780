import OrderedCollections
import OrderedJSON
import Testing
import VarlinkCore
@testable import IslandPresenter

/// What the TUI's status line and `click` say of a failure: words for a person, the daemon's
/// reason where it gives one, never the refusal's JSON.
@Suite struct DescribeErrorTests {
    @Test func aRefusalWithAReasonIsItsNameAndReason() {
        let locked = VarlinkError(
            "org.island.PermissionDenied", ["role": "presenter", "reason": "the session is locked: nothing acts on the lock screen until it is unlocked"])
        #expect(SubscriptionLoop.describe(locked) == "PermissionDenied: the session is locked: nothing acts on the lock screen until it is unlocked")
    }

    @Test func otherRefusalsAreAsTheyCame() {
        #expect(SubscriptionLoop.describe(VarlinkError("org.island.NoSuchActivity", ["id": "x"])) == #"org.island.NoSuchActivity {"id":"x"}"#)
        #expect(SubscriptionLoop.describe(VarlinkError("org.island.Connection.ShuttingDown")) == "the daemon is shutting down")
    }
}
