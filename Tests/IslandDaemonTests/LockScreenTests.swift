import Foundation
import IslandCore
import OrderedCollections
import OrderedJSON
import Testing
@testable import IslandDaemon

/// The session lock through the engine: while locked, every presenter is sent of each activity
/// only what its lock-screen visibility allows, whatever the presenter; nothing acts; a
/// producer cannot raise its level while locked; and everything is back once unlocked.
extension IslandEngineTests {
    /// A layout showing everything a producer can: its text, a picture, a button, a link, a URL
    /// and progress, at the lock-screen level `visibility`, with `publicLayout` when given.
    static func lockLayout(_ visibility: String, publicLayout: JSON? = nil) -> JSON {
        var layout: JSONObject = [
            "lockScreenVisibility": .string(visibility),
            "url": "https://example.org/{{state.secret}}",
            "compactLeading": ["type": "text", "template": "{{attributes.title}}"],
            "compactTrailing": ["type": "progress", "value": "{{state.progress}}", "total": 1],
            "minimal": ["type": "image", "source": "{{state.artwork}}", "fallback": ["type": "symbol", "name": "audio-x-generic"]],
            "lockScreen": [
                "type": "vstack",
                "children": [
                    ["type": "text", "template": "{{attributes.title}}: {{state.secret}}"],
                    ["type": "button", "action": "reveal", "label": "Reveal {{state.secret}}"],
                    ["type": "link", "url": "https://example.org/link", "child": ["type": "text", "template": "open"]],
                ],
            ],
            "expanded": ["center": ["type": "text", "template": "{{state.secret}}", "priority": 1]],
        ]
        if let publicLayout { layout["publicLayout"] = publicLayout }
        return .object(layout)
    }

    static let publicVersion: JSON = ["lockScreen": ["type": "text", "template": "A transfer is on its way"]]

    /// Starts one activity of type `type` (with layout `layout`) whose every string says `word`.
    func startLocked(_ engine: IslandEngine, type: String, layout: JSON, word: String) async throws -> Activity {
        _ = try await engine.registerLayout(app: Self.app, uid: nil, type: type, layout: layout)
        return try await engine.request(
            app: Self.app, type: type, attributes: ["title": .string("Title-\(word)")],
            content: ActivityContent(state: [
                "secret": .string(word), "progress": 0.5,
                "artwork": .string("/tmp/art-\(word).png"),
            ]),
            key: nil, ownerGone: .keep, uid: nil
        ).0
    }

    func item(_ update: JSONObject, _ id: String) -> JSONObject? {
        update["items"]?.arrayValue?.first { $0["id"]?.stringValue == id }?.objectValue
    }

    func lockUpdate(_ engine: IslandEngine, _ id: String, word: String, alert: Alert?) async throws -> UpdateOutcome {
        try await withCheckedThrowingContinuation { continuation in
            engine.perform { engine in
                engine.update(
                    app: Self.app, uid: nil, id: id, content: ActivityContent(state: ["secret": .string(word)]), alert: alert,
                    timestamp: nil, prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
    }

    func refusal(_ body: () async throws(EngineError) -> Void) async -> EngineError? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func whileLockedEachLevelShowsOnlyWhatItAllows() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let open = try await startLocked(engine, type: "Public", layout: Self.lockLayout("public"), word: "OPEN-1")
        fixture.clock.advance(by: 10)
        let hidden = try await startLocked(engine, type: "Private", layout: Self.lockLayout("private"), word: "PRIVATE-2")
        fixture.clock.advance(by: 10)
        let versioned = try await startLocked(
            engine, type: "Versioned", layout: Self.lockLayout("private", publicLayout: Self.publicVersion),
            word: "VERSIONED-3")
        fixture.clock.advance(by: 10)
        let secret = try await startLocked(engine, type: "Secret", layout: Self.lockLayout("secret"), word: "SECRET-4")
        let (presenterSide, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterSide)
        #expect(await eventually { presenter.replies.count == 1 })
        #expect(updates(presenter)[0]["lock"] == ["on": false], "a snapshot always says")

        fixture.clock.advance(by: 10)
        let since = fixture.clock.now
        #expect(await engine.setLock(true, source: .logind) == SessionLock(since: since, source: .logind))
        #expect(await eventually { updates(presenter).count == 2 })
        let locked = try #require(updates(presenter).last)
        #expect(locked["kind"] == "snapshot", "every item is drawn anew")
        #expect(locked["lock"] == ["on": true, "since": .double(since)], "who said so is no presenter's business")

        // Public: everything.
        let shown = try #require(item(locked, open.id))
        #expect(shown["content"]?["state"]?["secret"] == "OPEN-1")
        #expect(shown["layout"]?["lockScreen"] == Self.lockLayout("public")["lockScreen"])
        // Private: the app, and its icon and name, or its public version; nothing the producer wrote.
        let plain = try #require(item(locked, hidden.id))
        #expect(plain["appName"] == "Coffee")
        #expect(plain["attributes"] == [:])
        #expect(plain["content"] == ["state": [:]])
        #expect(plain["layout"] == Wire.privateLayout(app: Wire.AppLabel(name: "Coffee"), appID: Self.app))
        let version = try #require(item(locked, versioned.id))
        #expect(version["layout"] == Self.publicVersion)
        #expect(version["content"] == ["state": [:]])
        // Secret: not there at all, nor on the island.
        #expect(item(locked, secret.id) == nil)
        let island = try #require(locked["island"]?.objectValue)
        #expect(Set(island["lockScreen"]?.arrayValue?.compactMap(\.stringValue) ?? []) == [open.id, hidden.id, versioned.id])
        #expect(!text(island).contains(secret.id))
        let lockedText = text(locked)
        #expect(!text(plain).contains("button") && !text(plain).contains("example.org"), "nothing acts on a private card")
        for word in ["PRIVATE-2", "VERSIONED-3", "SECRET-4", secret.id, "art-PRIVATE", "example.org/PRIVATE"] {
            #expect(!lockedText.contains(word), "\(word) reached a presenter while locked")
        }

        // Alerts: the public one whole, the private one with no words, the secret one not at all.
        fixture.clock.advance(by: 10)
        _ = try await lockUpdate(engine, open.id, word: "OPEN-5", alert: Alert(title: "OPEN-5 arrived", body: "b"))
        #expect(await eventually { updates(presenter).count == 3 })
        #expect(updates(presenter)[2]["alert"]?["title"] == "OPEN-5 arrived")
        fixture.clock.advance(by: 10)
        _ = try await lockUpdate(engine, hidden.id, word: "PRIVATE-6", alert: Alert(title: "PRIVATE-6 arrived", body: "PRIVATE-6"))
        // Found by its alert, not by its place: the engine's timer for the first alert's
        // expansion is set for 5 s of real time, and when a slow machine makes them pass before
        // this update, the timer finds the clock advanced and the island's collapse comes first.
        let privateAt = try #require(await eventuallyValue { updates(presenter).firstIndex { $0["alert"]?["id"] == .string(hidden.id) } })
        let privateDelta = updates(presenter)[privateAt]
        for update in updates(presenter)[3..<privateAt] { #expect(update["alert"] == nil, "only the island's collapse comes between") }
        #expect(privateDelta["alert"] == ["id": .string(hidden.id), "title": "", "body": ""])
        #expect(item(privateDelta, hidden.id)?["content"] == ["state": [:]])
        #expect(!text(privateDelta).contains("PRIVATE-6"))
        fixture.clock.advance(by: 10)
        let secretOutcome = try await lockUpdate(engine, secret.id, word: "SECRET-7", alert: Alert(title: "SECRET-7 arrived", body: "x"))
        #expect(secretOutcome.alerted, "the producer's alert applies; presenters just do not hear of it")
        // A later public update comes through; of the secret one, no item, alert or id (the island
        // may meanwhile rest again, as the private alert's expansion times out).
        fixture.clock.advance(by: 10)
        try await update(engine, open.id, n: 8)
        #expect(await eventually { updates(presenter).contains { item($0, open.id)?["content"]?["state"] == ["n": 8] } })
        for update in updates(presenter).dropFirst(privateAt + 1) {
            #expect(update["alert"] == nil)
            #expect(!text(update).contains(secret.id))
        }
        // Since the lock (the first snapshot was before it), no word of the secret one.
        for update in updates(presenter).dropFirst() { #expect(!text(update).contains("SECRET-")) }

        // Nothing acts while locked: no tap, button or dismissal; the island may still expand.
        for action in [PresenterAction.tap, .button, .dismiss] {
            #expect(
                await refusal { () async throws(EngineError) in
                    _ = try await engine.interact(uid: 1000, action: action, id: open.id, button: "reveal")
                } == .locked)
        }
        #expect(
            await refusal { () async throws(EngineError) in
                _ = try await engine.interact(uid: 1000, action: .expand, id: secret.id, button: nil)
            } == .noSuchActivity(secret.id), "a secret activity is not there to expand")
        _ = try await engine.interact(uid: 1000, action: .expand, id: hidden.id, button: nil)

        // Unlocked: everything again, and taps act.
        #expect(await engine.setLock(false, source: .logind) == nil)
        let unlocked = try #require(await eventuallyValue { updates(presenter).dropFirst().last { $0["lock"] == ["on": false] } })
        #expect(unlocked["kind"] == "snapshot")
        #expect(item(unlocked, secret.id)?["content"]?["state"]?["secret"] == "SECRET-7")
        #expect(item(unlocked, hidden.id)?["attributes"] == ["title": "Title-PRIVATE-2"])
        // The public activity's state is {"n": 8} by now: its URL renders without the word.
        #expect(try await engine.interact(uid: 1000, action: .tap, id: open.id, button: nil) == "https://example.org/")
    }

    func eventuallyValue<T>(_ value: () async -> T?) async -> T? {
        var found: T?
        _ = await eventually {
            found = await value()
            return found != nil
        }
        return found
    }

    @Test func aProducerCannotRaiseItsLevelWhileLocked() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await startLocked(engine, type: "T", layout: Self.lockLayout("private"), word: "WORD-1")
        let (presenterSide, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterSide)
        _ = await engine.setLock(true, source: .gnome)
        #expect(await eventually { updates(presenter).count == 2 })

        // The extension registers the same type as public while locked: it stays private.
        _ = try await engine.registerLayout(app: Self.app, uid: nil, type: "T", layout: Self.lockLayout("public"))
        fixture.clock.advance(by: 10)
        try await update(engine, activity.id, n: 2)
        #expect(await eventually { updates(presenter).count >= 3 })
        for update in updates(presenter).dropFirst() {
            if let shown = item(update, activity.id) { #expect(shown["content"] == ["state": [:]], "\(text(update))") }
        }
        // As secret: stricter, so at once.
        _ = try await engine.registerLayout(app: Self.app, uid: nil, type: "T", layout: Self.lockLayout("secret"))
        let gone = try #require(await eventuallyValue { updates(presenter).last { $0["kind"] == "snapshot" && item($0, activity.id) == nil } })
        #expect(gone["island"]?["lockScreen"] == [])
        // And back to public again: still secret until the session unlocks.
        _ = try await engine.registerLayout(app: Self.app, uid: nil, type: "T", layout: Self.lockLayout("public"))
        let count = updates(presenter).count
        fixture.clock.advance(by: 10)
        try await update(engine, activity.id, n: 3)
        #expect(await engine.snapshotUpdate(uid: 1000, resync: false)["items"] == [])
        #expect(updates(presenter).dropFirst(count).allSatisfy { item($0, activity.id) == nil })

        _ = await engine.setLock(false, source: .gnome)
        let back = try #require(await eventuallyValue { updates(presenter).dropFirst().last { $0["lock"] == ["on": false] } })
        #expect(item(back, activity.id)?["content"]?["state"] == ["n": 3])
    }

    @Test func theUsersLevelIsTheCeilingForAllAppsAndPerApp() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await startLocked(engine, type: "T", layout: Self.lockLayout("public"), word: "WORD-1")
        _ = await engine.setLock(true, source: .manual)
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id)?["content"]?["state"]?["secret"] == "WORD-1")

        // For every app: private.
        await engine.reload(
            registry: engine.registry, installedLayouts: [:], limits: nil, hideWhileSharing: nil,
            lockScreen: LockScreenPolicy(visibility: .private))
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id)?["content"] == ["state": [:]])
        // This app: secret.
        await engine.reload(
            registry: engine.registry, installedLayouts: [:], limits: nil, hideWhileSharing: nil,
            lockScreen: LockScreenPolicy(visibility: .private, perApp: [Self.app: .secret]))
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id) == nil)
        // Loosened while locked: not until the session unlocks.
        await engine.reload(
            registry: engine.registry, installedLayouts: [:], limits: nil, hideWhileSharing: nil,
            lockScreen: LockScreenPolicy(visibility: .public))
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id) == nil)
        _ = await engine.setLock(false, source: .manual)
        _ = await engine.setLock(true, source: .manual)
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id)?["content"]?["state"]?["secret"] == "WORD-1")
    }

    @Test func theDesktopsLevelsAndIslanddConfsTheStricterWins() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        let activity = try await startLocked(engine, type: "T", layout: Self.lockLayout("public"), word: "WORD-1")
        _ = await engine.setLock(true, source: .manual)
        await engine.setDesktopLockScreen(DesktopLockScreen(perApp: [Self.app: .private]))
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id)?["content"] == ["state": [:]])
        // islandd.conf's secret is stricter than the desktop's private.
        await engine.reload(
            registry: engine.registry, installedLayouts: [:], limits: nil, hideWhileSharing: nil,
            lockScreen: LockScreenPolicy(perApp: [Self.app: .secret]))
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id) == nil)
        // A reload of islandd.conf keeps what the desktop said.
        await engine.reload(
            registry: engine.registry, installedLayouts: [:], limits: nil, hideWhileSharing: nil,
            lockScreen: LockScreenPolicy())
        _ = await engine.setLock(false, source: .manual)
        _ = await engine.setLock(true, source: .manual)
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id)?["content"] == ["state": [:]])
        // The desktop's setting is replaced whole; an app it does not name is left as islandd.conf says.
        await engine.setDesktopLockScreen(DesktopLockScreen(perApp: ["org.example.Other": .secret]))
        _ = await engine.setLock(false, source: .manual)
        _ = await engine.setLock(true, source: .manual)
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id)?["content"]?["state"]?["secret"] == "WORD-1")
        // Every app hidden by the desktop, even one islandd.conf makes public.
        await engine.reload(
            registry: engine.registry, installedLayouts: [:], limits: nil, hideWhileSharing: nil,
            lockScreen: LockScreenPolicy(perApp: [Self.app: .public]))
        await engine.setDesktopLockScreen(DesktopLockScreen(everyAppSecret: true))
        #expect(item(await engine.snapshotUpdate(uid: 1000, resync: false), activity.id) == nil)
    }

    @Test func theDesktopsLevelsForTheAppAnActivityIsShownAs() {
        let desktop = DesktopLockScreen(perApp: ["org.gnome.Nautilus": .secret, "org.island.Bridge": .private])
        #expect(desktop.visibility(app: "org.island.Bridge", sourceApp: "org.gnome.Nautilus") == .secret)
        #expect(desktop.visibility(app: "org.island.Bridge", sourceApp: "org.example.Unnamed") == .private)
        #expect(desktop.visibility(app: "org.example.Coffee", sourceApp: nil) == .public)
        let policy = LockScreenPolicy(visibility: .private, perApp: ["org.gnome.Nautilus": .public], desktop: desktop)
        #expect(policy.visibility(app: "org.island.Bridge", sourceApp: "org.gnome.Nautilus") == .secret)
        #expect(policy.visibility(app: "org.example.Coffee", sourceApp: nil) == .private)
    }

    @Test func anActivityStartedWhileLockedShowsAtItsLevelAndASecretOnesEndIsNotTold() async throws {
        let fixture = try await makeEngine()
        defer { fixture.close() }
        let engine = fixture.engine
        _ = await engine.setLock(true, source: .freedesktop)
        let (presenterSide, presenter) = presenterResponder()
        await engine.subscribe(uid: 1000, responder: presenterSide)
        #expect(await eventually { presenter.replies.count == 1 })
        let secret = try await startLocked(engine, type: "S", layout: Self.lockLayout("secret"), word: "SECRET-1")
        let hidden = try await startLocked(engine, type: "P", layout: Self.lockLayout("private"), word: "PRIVATE-2")
        #expect(await eventually { updates(presenter).contains { item($0, hidden.id) != nil } })
        let _: Activity = try await withCheckedThrowingContinuation { continuation in
            engine.perform { engine in
                engine.end(
                    app: Self.app, uid: nil, id: secret.id, content: nil, dismissal: .immediate,
                    timestamp: nil, prepare: { $0 }
                ) { continuation.resume(with: $0) }
            }
        }
        fixture.clock.advance(by: 10)
        try await update(engine, hidden.id, n: 3)
        #expect(await eventually { updates(presenter).filter { item($0, hidden.id) != nil }.count == 2 })
        for update in updates(presenter) {
            #expect(!text(update).contains(secret.id), "\(text(update))")
            #expect(!text(update).contains("PRIVATE-2"))
        }
    }

    @Test func aPublicLayoutHasNothingThatActsAndNoPictures() throws {
        let acting: [(JSON, String)] = [
            (["type": "button", "action": "a", "label": "A"], "button"),
            (["type": "link", "url": "https://example.org", "child": ["type": "text", "template": "x"]], "link"),
            (["type": "image", "source": "/tmp/a.png"], "image"),
        ]
        for (view, kind) in acting {
            let layout: JSON = ["lockScreenVisibility": "private", "publicLayout": ["lockScreen": ["type": "hstack", "children": [view]]]]
            #expect(throws: LayoutError.self, "a \(kind) in a public layout") { try Layout(json: layout) }
        }
        #expect(throws: LayoutError.self) { try Layout(json: ["publicLayout": ["url": "https://example.org"]]) }
        #expect(throws: LayoutError.self) { try Layout(json: ["publicLayout": ["lockScreenVisibility": "public"]]) }
        #expect(throws: LayoutError.self) { try Layout(json: ["lockScreenVisibility": "public", "hideContentOnLockScreen": true]) }
        #expect(throws: LayoutError.self) { try Layout(json: ["lockScreenVisibility": "hidden"]) }
        #expect(try Layout(json: ["hideContentOnLockScreen": true]).lockScreenVisibility == .private)
        #expect(try Layout(json: [:]).lockScreenVisibility == .public)
        let versioned = try Layout(json: ["lockScreenVisibility": "private", "publicLayout": Self.publicVersion])
        #expect(versioned.publicLayout?.lockScreen != nil)
        // The daemon's private layout is a layout with nothing that acts, and no template in the name.
        let label = Wire.AppLabel(name: "Chat {{state.secret}}", icon: "/tmp/x.png")
        let own = try Layout(json: Wire.privateLayout(app: label, appID: "org.example.Chat"))
        let rendered = LayoutRenderer(attributes: [:], state: ["secret": "S"], now: 0).render(own)
        #expect(
            rendered.lockScreen?.view.plainText == "application-x-executable-symbolic Chat state.secret",
            "the name as written, braces and all taken out: nothing of the state")
        #expect(rendered.minimal?.view == .symbol("application-x-executable-symbolic"))
        #expect(own.buttonActions.isEmpty && own.url == nil)
    }
}
