import IslandCore
import IslandJSON
import OrderedCollections
import Testing
import VarlinkCore
@testable import IslandDaemon

/// Each method's parameters are read once, into values; a field that is missing or of the
/// wrong type — which the service's validation should never let through — is refused as
/// `InvalidParameter` naming it.
@Suite struct MethodParametersTests {
    func call(_ method: String, _ parameters: JSONObject) -> VarlinkCall {
        VarlinkCall(method: method, parameters: parameters)
    }

    /// The parameter a decoder refuses, or nil if it reads the call.
    func refused<P: MethodParameters>(_: P.Type, _ parameters: JSONObject) -> String? {
        do {
            _ = try P(call("org.island.Test.Method", parameters))
            return nil
        } catch {
            #expect(error.name == "org.varlink.service.InvalidParameter")
            return error.parameters["parameter"]?.stringValue
        }
    }

    let content: JSON = ["state": ["stage": "brewing"], "staleDate": 5.0, "relevanceScore": 2.0]

    @Test func aRequestIsReadWhole() throws {
        let p = try RequestParameters(call("org.island.Producer.Request", [
            "app": "org.example.Coffee", "type": "Coffee", "attributes": ["size": "L"], "content": content,
            "key": "order-1", "ownerGone": "end",
        ]))
        #expect(p.app == "org.example.Coffee")
        #expect(p.type == "Coffee")
        #expect(p.attributes == ["size": "L"])
        #expect(p.content == ActivityContent(state: ["stage": "brewing"], staleDate: 5, relevanceScore: 2))
        #expect(p.key == "order-1")
        #expect(p.ownerGone == .end)

        let minimal = try RequestParameters(call("org.island.Producer.Request", [
            "type": "Coffee", "attributes": [:], "content": ["state": [:]], "key": nil,
        ]))
        #expect(minimal.app == nil && minimal.key == nil, "absent and null are alike")
        #expect(minimal.ownerGone == .keep)
        #expect(minimal.content.relevanceScore == 0)
    }

    @Test func aRequestMissingOrMistypingAFieldIsRefusedByName() {
        let valid: JSONObject = ["type": "Coffee", "attributes": [:], "content": content]
        func without(_ key: String) -> JSONObject { valid.filter { $0.key != key } }
        func with(_ key: String, _ value: JSON) -> JSONObject { valid.merging([key: value]) { $1 } }

        #expect(refused(RequestParameters.self, valid) == nil)
        #expect(refused(RequestParameters.self, without("type")) == "type")
        #expect(refused(RequestParameters.self, with("type", 3)) == "type")
        #expect(refused(RequestParameters.self, without("attributes")) == "attributes")
        #expect(refused(RequestParameters.self, with("attributes", "none")) == "attributes")
        #expect(refused(RequestParameters.self, without("content")) == "content")
        #expect(refused(RequestParameters.self, with("content", ["staleDate": 1.0])) == "content.state")
        #expect(refused(RequestParameters.self, with("content", ["state": [:], "staleDate": "soon"])) == "content.staleDate")
        #expect(refused(RequestParameters.self, with("app", true)) == "app")
        #expect(refused(RequestParameters.self, with("ownerGone", "explode")) == "ownerGone")
    }

    @Test func anUpdatesAlertIsReadFieldByField() throws {
        let valid: JSONObject = ["id": "a1", "content": content, "alert": ["title": "Ready", "body": "Come"], "timestamp": 7.5]
        let p = try UpdateParameters(call("org.island.Producer.Update", valid))
        #expect(p.id == "a1" && p.alert == Alert(title: "Ready", body: "Come") && p.timestamp == 7.5)
        #expect(refused(UpdateParameters.self, valid.merging(["alert": ["title": "Ready"]]) { $1 }) == "alert.body")
        #expect(refused(UpdateParameters.self, valid.merging(["alert": ["title": 1, "body": ""]]) { $1 }) == "alert.title")
        #expect(refused(UpdateParameters.self, valid.merging(["timestamp": "now"]) { $1 }) == "timestamp")
        #expect(refused(UpdateParameters.self, valid.filter { $0.key != "id" }) == "id")
    }

    @Test func anEndsPolicyAndOptionalContent() throws {
        let bare = try EndParameters(call("org.island.Producer.End", ["id": "a1"]))
        #expect(bare.content == nil && bare.dismissal == .default)
        let after = try EndParameters(call("org.island.Producer.End", ["id": "a1", "dismissalPolicy": ["kind": "after", "date": 9.0]]))
        #expect(after.dismissal == .after(9))
        #expect(refused(EndParameters.self, ["id": "a1", "dismissalPolicy": ["kind": "after"]]) == "dismissalPolicy.date",
                "after without its date is not read as now")
        #expect(refused(EndParameters.self, ["id": "a1", "dismissalPolicy": ["kind": "later"]]) == "dismissalPolicy.kind")
        #expect(refused(EndParameters.self, ["id": "a1", "content": "done"]) == "content")
    }

    @Test func listsAndWatchesNameTheElementThatIsWrong() throws {
        let list = try ListParameters(call("org.island.Producer.List", ["states": ["active", "ended"]]))
        #expect(list.states == [.active, .ended])
        #expect(try ListParameters(call("org.island.Producer.List", [:])).states == nil)
        #expect(refused(ListParameters.self, ["states": ["active", "sleeping"]]) == "states[1]")
        #expect(refused(ListParameters.self, ["states": "active"]) == "states")
        #expect(try WatchParameters(call("org.island.Producer.Watch", ["ids": ["a", "b"]])).ids == ["a", "b"])
        #expect(refused(WatchParameters.self, ["ids": [3]]) == "ids[0]")
    }

    @Test func theOtherRolesMethods() throws {
        let interact = try InteractParameters(call("org.island.Presenter.Interact", ["action": "button", "id": "a1", "button": "pause"]))
        #expect(interact.action == .button && interact.id == "a1" && interact.button == "pause")
        #expect(refused(InteractParameters.self, ["action": "wiggle"]) == "action")
        #expect(refused(InteractParameters.self, [:]) == "action")

        let register = try RegisterLayoutParameters(call("org.island.Extension.RegisterLayout", ["type": "T", "layout": ["chip": "C"]]))
        #expect(register.layout == ["chip": "C"])
        #expect(refused(RegisterLayoutParameters.self, ["type": "T", "layout": ["chip"]]) == "layout")
        #expect(refused(RemoveLayoutParameters.self, [:]) == "type")

        #expect(try SetEnabledParameters(call("org.island.Admin.SetEnabled", ["enabled": false])).app == nil)
        #expect(refused(SetEnabledParameters.self, ["app": "a"]) == "enabled")
        #expect(refused(SetFrequentUpdatesParameters.self, ["enabled": true]) == "app")
        #expect(refused(AppClaimParameters.self, ["app": 1]) == "app")
    }

    /// A state written in canonical form is taken as the text it came in (the fast path of
    /// every update), not rebuilt from a tree.
    @Test func aCanonicalStateIsTakenAsItsText() throws {
        let frame = #"{"method":"org.island.Producer.Update","parameters":{"id":"a1","content":{"state":{"a":1,"b":[true]}}}}"#
        let call = try VarlinkCall(frame: Array(frame.utf8), canonicalTextAt: ["parameters"] + Wire.stateTextPath)
        try #require(call.canonicalText != nil)
        let p = try UpdateParameters(call)
        #expect(p.content.stateText == Array(#"{"a":1,"b":[true]}"#.utf8))
        #expect(p.content.state == ["a": 1, "b": [true]])
    }
}
