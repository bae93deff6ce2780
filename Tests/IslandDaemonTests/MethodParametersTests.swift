import Foundation
import IslandCore
import OrderedJSON
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
    func refused<P: VarlinkParameters>(_: P.Type, _ parameters: JSONObject) -> String? {
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
        let p = try RequestParameters(
            call(
                "org.island.Producer.Request",
                [
                    "app": "org.example.Coffee", "type": "Coffee", "attributes": ["size": "L"], "content": content,
                    "key": "order-1", "ownerGone": "end",
                ]))
        #expect(p.app == "org.example.Coffee")
        #expect(p.type == "Coffee")
        #expect(p.attributes == ["size": "L"])
        #expect(p.content == ActivityContent(state: ["stage": "brewing"], staleDate: 5, relevanceScore: 2))
        #expect(p.key == "order-1")
        #expect(p.ownerGone == .end)

        let minimal = try RequestParameters(
            call(
                "org.island.Producer.Request",
                [
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
        #expect(
            refused(EndParameters.self, ["id": "a1", "dismissalPolicy": ["kind": "after"]]) == "dismissalPolicy.date",
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

        let desktop = try SetDesktopLockScreenParameters(
            call(
                "org.island.Admin.SetDesktopLockScreen",
                [
                    "everyAppSecret": false, "privateApps": ["org.gnome.Nautilus", "a-b_c.d"], "secretApps": ["a-b_c.d"],
                ]))
        #expect(
            desktop.desktopLockScreen == DesktopLockScreen(perApp: ["org.gnome.Nautilus": .private, "a-b_c.d": .secret]),
            "named both, an app is secret")
        let tooMany = JSON.array(Array(repeating: "a", count: DesktopLockScreenApps.maximumCount + 1))
        #expect(refused(SetDesktopLockScreenParameters.self, ["everyAppSecret": false, "privateApps": [], "secretApps": tooMany]) == "secretApps")
        for hostile: JSON in ["", "a/b", "\u{1B}[2J", .string(String(repeating: "x", count: 256)), "caf\u{E9}", 7] {
            #expect(
                refused(SetDesktopLockScreenParameters.self, ["everyAppSecret": false, "privateApps": ["ok", hostile], "secretApps": []])
                    == "privateApps[1]")
        }
    }

    /// A call written the usual way is read straight from its text: its state kept as the
    /// text it came in, nothing made a tree.
    @Test func anUpdateWrittenTheUsualWayIsReadFromItsText() throws {
        let frame = #"{"method":"org.island.Producer.Update","parameters":{"id":"a1","content":{"state":{"a":1,"b":[true]}}}}"#
        let call = try ProducerCalls.reader.call(frame: Array(frame.utf8))
        let p = try #require(call.readParameters?.value(as: UpdateParameters.self))
        #expect(p.content.stateText == Array(#"{"a":1,"b":[true]}"#.utf8))
        #expect(p.content.stateNesting == 2)
        #expect(p.content.state == ["a": 1, "b": [true]])
        #expect(p == (try UpdateParameters(call)))
    }

    /// The producer's mutations read from text are what the tree makes of them, and nothing
    /// that its validation refuses is read: over the fuzz corpus, and over calls made to differ
    /// from valid ones in every member.
    @Test func whatIsReadFromTextIsWhatTheTreeAccepts() throws {
        var frames = try ProducerCalls.corpusFrames()
        #expect(frames.count > 50)
        frames += ProducerCalls.variants()
        var read = 0, left = 0
        for frame in frames {
            let tree = try? VarlinkCall(frame: frame)
            guard let call = try? ProducerCalls.reader.call(frame: frame) else {
                #expect(tree == nil, "refused as a message only when read from text: \(String(decoding: frame, as: UTF8.self))")
                continue
            }
            #expect(tree != nil, "\(String(decoding: frame, as: UTF8.self))")
            guard let tree, call.readParameters != nil else {
                left += 1
                continue
            }
            read += 1
            let text = String(decoding: frame, as: UTF8.self)
            #expect(call.method == tree.method && call.more == tree.more && call.oneway == tree.oneway && call.upgrade == tree.upgrade, "\(text)")
            let signature = try #require(ProducerCalls.interface.methods[String(tree.methodName)])
            #expect(
                ProducerCalls.interface.firstInvalidField(in: tree.parameters, of: signature.input) == nil,
                "read from text, refused by validation: \(text)")
            switch tree.method {
            case "org.island.Producer.Request":
                #expect(call.readParameters?.value(as: RequestParameters.self) == (try RequestParameters(tree)), "\(text)")
            case "org.island.Producer.Update":
                #expect(call.readParameters?.value(as: UpdateParameters.self) == (try UpdateParameters(tree)), "\(text)")
            case "org.island.Producer.End":
                #expect(call.readParameters?.value(as: EndParameters.self) == (try EndParameters(tree)), "\(text)")
            default: Issue.record("read as something else: \(text)")
            }
        }
        // Both ways were taken, many times.
        #expect(read > 20 && left > 20, "\(read) read, \(left) left to the tree")
    }
}

/// The producer's interface with the daemon's readers of its mutations, and calls to read.
enum ProducerCalls {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let interface = try! VarlinkInterface(
        parsing: String(
            decoding: try! Data(contentsOf: repository.appendingPathComponent("Protocol/org.island.Producer.varlink")), as: UTF8.self))

    static let reader: VarlinkCallReader = {
        let none = VarlinkMethodHandler.responding { _, _ in }
        let service = VarlinkService(
            info: VarlinkServiceInfo(vendor: "test", product: "test", version: "0", url: "https://example.invalid"),
            implementations: [
                VarlinkImplementation(
                    interface: interface,
                    handlers: [
                        "Request": none.reading(RequestParameters.self), "Update": none.reading(UpdateParameters.self),
                        "End": none.reading(EndParameters.self),
                    ])
            ],
            connectionErrors: .silent)
        return service.callReader
    }()

    /// Every frame of Fuzz/Corpus/fuzz-varlink-message.
    static func corpusFrames() throws -> [[UInt8]] {
        let corpus = repository.appendingPathComponent("Fuzz/Corpus/fuzz-varlink-message")
        return try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted().flatMap { file in
            try Array(Data(contentsOf: corpus.appendingPathComponent(file))).split(separator: 0, omittingEmptySubsequences: false)
                .dropLast().map(Array.init)
        }
    }

    /// Valid calls of each mutation, and each changed member by member: left out, repeated,
    /// null, of another kind, spelled otherwise, moved; and the envelope around them changed.
    static func variants() -> [[UInt8]] {
        let state = #"{"seq":1,"t_ns":2,"kind":"x","ok":true,"n":null,"list":[1,{"a":[]}]}"#
        let content = #"{"state":\#(state),"staleDate":5,"relevanceScore":0.5}"#
        let valid: [(method: String, members: [(String, String)])] = [
            (
                "Update",
                [
                    ("app", #""org.example.A""#), ("id", #""a1""#), ("content", content),
                    ("alert", #"{"title":"T","body":"B"}"#), ("timestamp", "7.25"),
                ]
            ),
            (
                "Request",
                [
                    ("app", #""org.example.A""#), ("type", #""Coffee""#), ("attributes", #"{"size":"L","n":[1,2]}"#),
                    ("content", content), ("key", #""k1""#), ("ownerGone", #""end""#),
                ]
            ),
            (
                "End",
                [
                    ("app", #""org.example.A""#), ("id", #""a1""#), ("content", content),
                    ("dismissalPolicy", #"{"kind":"after","date":9}"#), ("timestamp", "8"),
                ]
            ),
        ]
        let others = [
            #"null"#, #"1"#, #"-0"#, #"1.5e300"#, #""s""#, #""\u0041\n""#, #"true"#, #"[]"#, #"{}"#, #"{"a":1}"#,
            #"{"state":{}}"#, #"{"state":{"a":1.5}}"#, #"{"state":{ "a" : 1 }}"#, #"{"state":{},"x":1}"#,
            #"{"state":{},"staleDate":null,"relevanceScore":null}"#, #"{"state":{"a":1,"a":2}}"#,
            #"{"state":[]}"#, #"{"title":"T"}"#, #"{"title":"T","body":"B","x":0}"#, #"{"kind":"after"}"#,
            #"{"kind":"immediate","date":null}"#, #"{"kind":"later"}"#, #""keep""#, #""explode""#, #""é\u00e9""#,
        ]
        func frame(_ method: String, _ members: [(String, String)], envelope: String = #"{"method":"@M","parameters":@P}"#) -> [UInt8] {
            let parameters = "{" + members.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",") + "}"
            return Array(
                envelope.replacingOccurrences(of: "@M", with: "org.island.Producer." + method)
                    .replacingOccurrences(of: "@P", with: parameters).utf8)
        }
        var frames: [[UInt8]] = []
        for (method, members) in valid {
            frames.append(frame(method, members))
            frames.append(frame(method, members.reversed()))
            for index in members.indices {
                var without = members
                without.remove(at: index)
                frames.append(frame(method, without))
                frames.append(frame(method, members + [members[index]]))
                for other in others {
                    var changed = members
                    changed[index].1 = other
                    frames.append(frame(method, changed))
                }
            }
            frames.append(frame(method, members + [("extra", "1")]))
            frames.append(frame(method, [(#"\u0069d"#, #""a1""#)] + members.dropFirst(2)))
            for envelope in [
                #"{"parameters":@P,"method":"@M"}"#, #" { "method" : "@M" , "parameters" : @P , "oneway" : true } "#,
                #"{"method":"@M","parameters":@P,"more":true,"upgrade":false}"#, #"{"method":"@M","parameters":@P,"more":1}"#,
                #"{"method":"@M","parameters":@P,"x":[]}"#, #"{"method":"@M","parameters":@P}x"#,
                #"{"method":"@M","parameters":@P,"parameters":{}}"#, #"{"method":"@M","parameters":null}"#,
            ] {
                frames.append(frame(method, members, envelope: envelope))
            }
        }
        return frames
    }
}
