import IslandCore
import OrderedJSON
import OrderedCollections
import Testing
import VarlinkCore
@testable import IslandDaemon

/// The decoders varlink-codegen writes from MethodParameters.varlinkmap, at their edges: what
/// an absent, a null and a repeated member make, a number of either kind for a `float`, and
/// which call's text is read and which is left to the tree.
@Suite struct GeneratedParametersTests {
    func call(_ parameters: JSONObject) -> VarlinkCall {
        VarlinkCall(method: "org.island.Test.Method", parameters: parameters)
    }

    /// The parameter a decoder refuses, or nil if it reads the call.
    func refused<P: VarlinkParameters>(_: P.Type, _ parameters: JSONObject) -> String? {
        do {
            _ = try P(call(parameters))
            return nil
        } catch {
            return error.parameters["parameter"]?.stringValue
        }
    }

    /// The parameters read from `frame`'s text, or nil when it is left to the tree.
    func readFromText<P: VarlinkParameters>(_ method: String, _ parameters: String, as _: P.Type) throws -> P? {
        let frame = #"{"method":"org.island.Producer.\#(method)","parameters":\#(parameters)}"#
        return try ProducerCalls.reader.call(frame: Array(frame.utf8)).readParameters?.value(as: P.self)
    }

    @Test func nullIsAbsentAndAnAbsentMemberIsItsDefault() throws {
        let tree = try RequestParameters(
            call([
                "type": "T", "attributes": [:], "content": ["state": [:]],
                "ownerGone": nil, "pushToken": nil, "app": nil,
            ]))
        #expect(tree.ownerGone == .keep && tree.pushToken == false && tree.app == nil)
        let text = try #require(
            try readFromText(
                "Request", #"{"type":"T","attributes":{},"content":{"state":{}},"ownerGone":null,"pushToken":null,"app":null}"#,
                as: RequestParameters.self))
        #expect(text == tree)

        #expect(try PushTokenParameters(call(["id": "a1"])).rotate == false)
        #expect(try PushTokenParameters(call(["id": "a1", "rotate": nil])).rotate == false)
        #expect(try PushToStartTokenParameters(call(["type": "T", "rotate": true])).rotate == true)
        #expect(refused(PushTokenParameters.self, ["id": "a1", "rotate": "yes"]) == "rotate")

        let end = try #require(
            try readFromText(
                "End", #"{"id":"a1","content":null,"dismissalPolicy":{"kind":"immediate","date":null}}"#, as: EndParameters.self))
        #expect(end.content == nil && end.dismissal == .immediate)
    }

    @Test func aRequiredMemberThatIsNullIsRefusedByName() throws {
        #expect(refused(SetFrequentUpdatesParameters.self, ["app": nil, "enabled": true]) == "app")
        #expect(refused(UpdateParameters.self, ["id": nil, "content": ["state": [:]]]) == "id")
        #expect(refused(UpdateParameters.self, ["id": "a1", "content": ["state": nil]]) == "content.state")
        // From text, it is left to the tree, which refuses it so.
        #expect(try readFromText("Update", #"{"id":null,"content":{"state":{}}}"#, as: UpdateParameters.self) == nil)
    }

    @Test func aFloatIsANumberOfEitherKind() throws {
        let tree = try UpdateParameters(
            call([
                "id": "a1", "content": ["state": [:], "relevanceScore": 3, "staleDate": 1.5],
                "timestamp": 7,
            ]))
        #expect(tree.content.relevanceScore == 3 && tree.content.staleDate == 1.5 && tree.timestamp == 7)
        let text = try #require(
            try readFromText(
                "Update", #"{"id":"a1","content":{"state":{},"relevanceScore":3,"staleDate":1.5},"timestamp":7}"#, as: UpdateParameters.self))
        #expect(text == tree)
        #expect(refused(UpdateParameters.self, ["id": "a1", "content": ["state": [:], "relevanceScore": "high"]]) == "content.relevanceScore")
    }

    @Test func nestedMembersAreNamedByTheirPath() {
        #expect(refused(UpdateParameters.self, ["id": "a1", "content": ["state": [:]], "alert": ["title": "T", "body": 2]]) == "alert.body")
        #expect(refused(UpdateParameters.self, ["id": "a1", "content": ["state": [:]], "alert": "loud"]) == "alert")
        #expect(refused(EndParameters.self, ["id": "a1", "dismissalPolicy": ["date": 1.0]]) == "dismissalPolicy.kind")
        #expect(refused(EndParameters.self, ["id": "a1", "dismissalPolicy": ["kind": "after", "date": "soon"]]) == "dismissalPolicy.date")
        #expect(refused(ListParameters.self, ["states": ["active", 3]]) == "states[1]")
    }

    @Test func membersTheInterfaceDoesNotDeclare() throws {
        // The tree's validation refuses them before a decoder runs, which reads only its own.
        #expect(try WatchParameters(call(["ids": ["a", "a"], "extra": 1])).ids == ["a"])
        // From text, they are left to the tree.
        #expect(try readFromText("Update", #"{"id":"a1","content":{"state":{}},"extra":1}"#, as: UpdateParameters.self) == nil)
        #expect(try readFromText("Update", #"{"id":"a1","content":{"state":{},"x":1}}"#, as: UpdateParameters.self) == nil)
        // So is a repeated member, at any depth; the tree's parser refuses the message.
        #expect(throws: VarlinkMessageError.self) {
            try readFromText("Update", #"{"id":"a1","id":"a2","content":{"state":{}}}"#, as: UpdateParameters.self)
        }
        #expect(throws: VarlinkMessageError.self) {
            try readFromText(
                "Update", #"{"id":"a1","content":{"state":{}},"alert":{"title":"T","body":"B","body":"C"}}"#,
                as: UpdateParameters.self)
        }
        // What no member's type refuses is read.
        #expect(try readFromText("Update", #"{"id":"a1","content":{"state":{}}}"#, as: UpdateParameters.self)?.alert == nil)
    }
}
