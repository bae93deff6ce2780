import IslandCore
import IslandProtocol
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon

/// One wire contract on both sides: what the daemon makes is read by the structs its clients
/// read replies with (generated from Protocol/Replies.varlinkmap), and a reply that is not what
/// the interface says is refused, naming the method, where, and what was expected.
@Suite struct ReplyContractTests {
    // MARK: What the daemon makes, as the clients read it

    @Test func theAdminStatesReadAsTheClientsReadThem() throws {
        let shared = try AdminReplies.GetSharing([
            AdminNames.GetSharing.sharing: Wire.sharing(ScreenSharing(since: 1_700_000_000, source: .portal), contentHidden: true)
        ]).sharing
        #expect(shared.on && shared.contentHidden && shared.since == 1_700_000_000 && shared.source == "portal")
        let unshared = try AdminReplies.SetSharing([AdminNames.SetSharing.sharing: Wire.sharing(nil, contentHidden: false)]).sharing
        #expect(!unshared.on && unshared.since == nil && unshared.source == nil)

        let locked = try AdminReplies.GetLock([AdminNames.GetLock.lock: Wire.lock(SessionLock(since: 5, source: .logind))]).lock
        #expect(locked.on && locked.since == 5 && locked.source == "logind")
        #expect(try !AdminReplies.SetLock([AdminNames.SetLock.lock: Wire.lock(nil)]).lock.on)

        let focus = try AdminReplies.SetFocus([AdminNames.SetFocus.focus: Wire.focus(since: 7)]).focus
        #expect(focus.on && focus.since == 7)
        #expect(try AdminReplies.GetFocus([AdminNames.GetFocus.focus: Wire.focus(since: nil)]).focus == AdminReplies.Focus(reply: ["on": false]))
    }

    @Test func theStatusAndItsLimitsReadWithEveryMemberOfItsType() throws {
        let engine = EngineStatus(activities: 3, liveActivities: 2, presenters: 1, producers: 4, uptime: 12.5, limits: .defaults)
        var reply = Wire.status(engine, version: "1.2.3", scope: .user, connections: 6)
        reply[AdminNames.Status.push] = [
            AdminNames.PushStatus.broker: "mqtt://localhost", AdminNames.PushStatus.device: "d", AdminNames.PushStatus.connected: true,
            AdminNames.PushStatus.tokens: 9,
        ]
        let status = try AdminReplies.Status(reply)
        #expect(status.version == "1.2.3" && status.scope == "user" && status.connections == 6 && status.producers == 4)
        #expect(status.limits.maxActivities == ActivityLimits.defaults.maximumActivities)
        #expect(status.limits.startBudget == ActivityLimits.defaults.startBudget)
        #expect(status.push?.tokens == 9 && status.push?.connected == true)
        // The limits as the producer interface has them, too.
        let limits = try ProducerReplies.Limits(reply: Wire.limits(.defaults, frequent: true))
        #expect(limits.maxPayloadBytes == ActivityLimits.defaults.maximumPayloadBytes)
    }

    @Test func anActivityReadsAsIslandKitReadsIt() throws {
        var maker = ActivityMaker()
        let activity = try maker.start(state: ["n": 1]).0
        let read = try ProducerReplies.Activity(reply: Wire.activity(activity, pushToken: "tok"))
        #expect(read.id == activity.id && read.app == activity.app && read.type == activity.type)
        #expect(read.content.state == ["n": 1])
        #expect(read.state == "active" && read.pushToken == "tok" && read.createdAt == activity.createdAt)
        let list = try ProducerReplies.List([ProducerNames.List.activities: .array([Wire.activity(activity)])])
        #expect(list.activities.map(\.id) == [activity.id])
    }

    // MARK: A reply that is not what the interface says

    func refusal<Reply>(_ read: () throws(UnexpectedReply) -> Reply) -> UnexpectedReply? {
        do throws(UnexpectedReply) {
            _ = try read()
            return nil
        } catch {
            return error
        }
    }

    @Test func aMissingMemberIsNamedWithItsPathAndType() {
        let error = refusal { () throws(UnexpectedReply) in try AdminReplies.GetFocus(["focus": ["since": 1.5]]) }
        #expect(error == UnexpectedReply(method: "org.island.Admin.GetFocus", path: "focus.on", expected: "bool", found: nil))
        #expect(
            error?.description
                == "the reply to org.island.Admin.GetFocus lacks focus.on (bool): islandd's interface differs from this client's")
        // Null is no value of a member that is not optional.
        #expect(
            refusal { () throws(UnexpectedReply) in try AdminReplies.GetFocus(["focus": ["on": nil]]) }
                == UnexpectedReply(method: "org.island.Admin.GetFocus", path: "focus.on", expected: "bool", found: "null"))
        #expect(
            refusal { () throws(UnexpectedReply) in try AdminReplies.GetFocus([:]) }
                == UnexpectedReply(method: "org.island.Admin.GetFocus", path: "focus", expected: "Focus", found: nil))
    }

    @Test func aMistypedMemberIsNamedWithWhatWasThere() {
        let error = refusal { () throws(UnexpectedReply) in try AdminReplies.GetSharing(["sharing": ["on": true, "contentHidden": "yes"]]) }
        #expect(error == UnexpectedReply(method: "org.island.Admin.GetSharing", path: "sharing.contentHidden", expected: "bool", found: "string"))
        #expect(
            error?.description
                == "in the reply to org.island.Admin.GetSharing, sharing.contentHidden is a string, not bool: islandd's interface differs from this client's"
        )
        // An int is no float's mistype, a float is an int's.
        #expect(refusal { () throws(UnexpectedReply) in try AdminReplies.GetFocus(["focus": ["on": true, "since": 3]]) } == nil)
        #expect(
            refusal { () throws(UnexpectedReply) in try AdminReplies.Reload(["skippedLayouts": "none"]) }
                == UnexpectedReply(method: "org.island.Admin.Reload", path: "skippedLayouts", expected: "[]SkippedLayout", found: "string"))
    }

    @Test func anElementOfAnArrayIsNamedByItsIndex() {
        let skipped: JSON = ["path": "/a", "reason": "not JSON"]
        let error = refusal { () throws(UnexpectedReply) in try AdminReplies.Reload(["skippedLayouts": [skipped, ["path": 1, "reason": "x"]]]) }
        #expect(error == UnexpectedReply(method: "org.island.Admin.Reload", path: "skippedLayouts[1].path", expected: "string", found: "int"))
    }

    @Test func aMemberTheInterfaceDoesNotDeclareIsKeptAndNotRead() throws {
        let reply: JSONObject = ["focus": ["on": true, "mood": "calm"], "later": 1]
        let focus = try AdminReplies.GetFocus(reply)
        #expect(focus.focus.on)
        #expect(focus.json == reply)
        #expect(focus.focus.json == ["on": true, "mood": "calm"])
        // An enum's value a newer daemon adds still reads, as its name.
        #expect(try AdminReplies.GetLock(["lock": ["on": true, "source": "smartcard"]]).lock.source == "smartcard")
    }
}
