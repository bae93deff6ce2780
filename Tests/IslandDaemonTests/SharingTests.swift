import Foundation
import IslandCore
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon

/// Screen sharing through the engine: while the screen is shared, presenters are sent no
/// activity content whatever the producer's layout says, and all of it again afterwards.
extension IslandEngineTests {
    /// A producer's layout that asks for everything to show: its own text, a button, a link,
    /// and `hideContentOnLockScreen` false.
    static let showingLayout: JSON = [
        "hideContentOnLockScreen": false,
        "url": "https://example.org/{{state.secret}}",
        "compactLeading": ["type": "text", "template": "{{attributes.title}}"],
        "compactTrailing": ["type": "progress", "value": "{{state.progress}}", "total": 1],
        "minimal": ["type": "text", "template": "{{state.secret}}"],
        "lockScreen": [
            "type": "vstack",
            "children": [
                ["type": "text", "template": "{{attributes.title}}: {{state.secret}}"],
                ["type": "button", "action": "reveal", "label": "Reveal {{state.secret}}"],
            ],
        ],
        "expanded": ["center": ["type": "text", "template": "{{state.secret}}", "priority": 1]],
    ]

    func startSecret(_ engine: IslandEngine) async throws -> Activity {
        try await engine.registerLayout(app: Self.app, uid: nil, type: "T", layout: Self.showingLayout)
        return try await engine.request(
            app: Self.app, type: "T", attributes: ["title": "Bank transfer"],
            content: ActivityContent(state: ["secret": "SECRET-4711", "progress": 0.5]),
            key: nil, ownerGone: .keep, uid: nil
        ).0
    }

    func text(_ update: JSONObject) -> String {
        String(decoding: JSON.object(update).serialized(), as: UTF8.self)
    }

    @Test func whileSharedPresentersAreSentTheAppAndTheShapeOnly() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await startSecret(engine)
        let (presenterSide, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterSide)
        #expect(await eventually { presenter.replies.count == 1 })
        let before = try #require(updates(presenter).first)
        #expect(before["sharing"] == ["on": false, "contentHidden": false], "a snapshot always says")
        #expect(text(before).contains("SECRET-4711"))
        let island = before["island"]

        fixture.clock.advance(by: 1)
        let since = fixture.clock.now
        let answer = await engine.setSharing(true, source: .portal)
        #expect(answer.state == ScreenSharing(since: since, source: .portal))
        #expect(answer.contentHidden)
        #expect(await eventually { updates(presenter).count == 2 })
        let hidden = try #require(updates(presenter).last)
        #expect(hidden["kind"] == "snapshot", "every item is drawn anew")
        #expect(hidden["resync"] == false)
        #expect(hidden["sharing"] == ["on": true, "since": .double(since), "contentHidden": true])
        #expect(hidden["island"] == island, "the island keeps its shape")
        let item = try #require(hidden["items"]?.arrayValue?.first)
        #expect(item["id"] == .string(activity.id))
        #expect(item["appName"] == "Coffee", "which app it is stays")
        #expect(item["attributes"] == [:])
        #expect(item["content"] == ["state": [:]])
        #expect(item["layout"] == Wire.hiddenLayout(icon: nil))
        #expect(item["defaultLayout"] == false)
        for word in ["SECRET-4711", "Bank transfer", "reveal", "example.org", "button", "progress"] {
            #expect(!text(hidden).contains(word), "\(word) reached a presenter while shared")
        }

        // Saying it again (another source) keeps `since` and tells presenters nothing new.
        #expect(await engine.setSharing(true, source: .manual).state == ScreenSharing(since: since, source: .manual))

        // An alerting update: the island expands as it would, with no word of the alert.
        fixture.clock.advance(by: 1)
        let outcome = try await update(engine, activity.id, n: 1, alert: Alert(title: "SECRET-4711 arrived", body: "Bank transfer"))
        #expect(outcome.alerted)
        #expect(await eventually { updates(presenter).count == 3 })
        let delta = try #require(updates(presenter).last)
        #expect(delta["kind"] == "delta")
        #expect(delta["alert"] == ["id": .string(activity.id), "title": "", "body": ""])
        #expect(delta["island"]?["mode"] == "expanded")
        #expect(delta["items"]?.arrayValue?.first?["content"] == ["state": [:]])
        #expect(delta["items"]?.arrayValue?.first?["layout"] == Wire.hiddenLayout(icon: nil))
        #expect(!text(delta).contains("SECRET"), "\(text(delta))")
        #expect(!text(await engine.snapshotUpdate(uid: 1000, resync: false)).contains("SECRET"))

        // No longer shared: a snapshot with everything, layouts included.
        #expect(await engine.setSharing(false, source: .portal).state == nil)
        #expect(await eventually { updates(presenter).count == 4 })
        let shown = try #require(updates(presenter).last)
        #expect(shown["kind"] == "snapshot")
        #expect(shown["sharing"] == ["on": false, "contentHidden": false])
        let back = try #require(shown["items"]?.arrayValue?.first)
        #expect(back["content"]?["state"] == ["n": 1])
        #expect(back["attributes"] == ["title": "Bank transfer"])
        #expect(back["layout"]?["minimal"] == Self.showingLayout["minimal"])
    }

    @Test func hideWhileSharingNoKeepsContentShownButStillSaysShared() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        _ = try await startSecret(engine)
        await engine.reload(registry: engine.registry, installedLayouts: [:], limits: LimitsPolicy(), hideWhileSharing: false)
        let (presenterSide, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterSide)
        #expect(await eventually { presenter.replies.count == 1 })

        let answer = await engine.setSharing(true, source: .gnome)
        #expect(!answer.contentHidden)
        #expect(await eventually { updates(presenter).count == 2 })
        let shared = try #require(updates(presenter).last)
        #expect(shared["sharing"]?["on"] == true)
        #expect(shared["sharing"]?["contentHidden"] == false)
        #expect(text(shared).contains("SECRET-4711"))

        // The user turns hiding back on while shared: presenters hear at once.
        await engine.reload(registry: engine.registry, installedLayouts: [:], limits: LimitsPolicy(), hideWhileSharing: true)
        #expect(await eventually { updates(presenter).last?["sharing"]?["contentHidden"] == true })
        #expect(!text(try #require(updates(presenter).last)).contains("SECRET"))
    }

    @Test func theHiddenLayoutIsALayoutWithTheAppsIconAndNoButtons() throws {
        let withIcon = try Layout(json: Wire.hiddenLayout(icon: "org.example.Coffee"))
        let rendered = LayoutRenderer(attributes: [:], state: [:], now: 0).render(withIcon)
        #expect(rendered.compactLeading?.view == .symbol("org.example.Coffee"))
        #expect(rendered.minimal?.view == .symbol("org.example.Coffee"))
        #expect(rendered.lockScreen?.view.plainText.contains(Wire.hiddenText) == true)
        #expect(withIcon.url == nil)
        #expect(rendered.compactTrailing?.view == .symbol("view-conceal-symbolic"))
        // A path or anything but a theme icon name is not drawn: a generic program's icon stands in.
        let withPath = LayoutRenderer(attributes: [:], state: [:], now: 0).render(try Layout(json: Wire.hiddenLayout(icon: "/tmp/{{x}}.png")))
        #expect(withPath.compactLeading?.view == .symbol("application-x-executable-symbolic"))
        #expect(!String(decoding: Wire.hiddenLayout(icon: nil).serialized(), as: UTF8.self).contains("button"))
    }
}
