import IslandCore
import Testing

/// `[LockScreen]` and `[LockScreen:<app-id>]`: the user's lock-screen privacy, for all apps and
/// per app, the ceiling over what each layout allows.
@Suite struct LockScreenConfigurationTests {
    typealias Support = ConfigurationTestSupport

    @Test func publicByDefaultThenAllAppsThenPerAppWhichAnEmptyAssignmentUndoes() throws {
        #expect(IslandConfiguration.defaults.lockScreen == LockScreenPolicy())
        #expect(IslandConfiguration.defaults.lockScreen.visibility(app: "org.example.Chat", sourceApp: nil) == .public)
        let parsed = try IslandConfiguration.parse(files: [
            (
                path: Support.mainPath,
                contents: "[LockScreen]\nVisibility=private\n\n[LockScreen:org.example.Music]\nVisibility=public\n"
                    + "[LockScreen:org.example.Chat]\nVisibility=secret\n[LockScreen:org.example.Mail]\nVisibility=secret\n"
            ),
            (path: Support.mainPath + ".d/10.conf", contents: "[LockScreen:org.example.Mail]\nVisibility=\n"),
        ])
        let policy = parsed.lockScreen
        #expect(policy.visibility(app: "org.example.Other", sourceApp: nil) == .private)
        #expect(policy.visibility(app: "org.example.Music", sourceApp: nil) == .public)
        #expect(policy.visibility(app: "org.example.Chat", sourceApp: nil) == .secret)
        #expect(policy.visibility(app: "org.example.Mail", sourceApp: nil) == .private, "emptied: back to all apps'")
        // A bridge's activity counts as the app it speaks for, whose setting comes first.
        #expect(policy.visibility(app: "org.island.Bridge", sourceApp: "org.example.Chat") == .secret)
        #expect(policy.visibility(app: "org.example.Chat", sourceApp: "org.example.Nothing") == .secret)
        let reset = try IslandConfiguration.parse(files: [
            (path: Support.mainPath, contents: "[LockScreen]\nVisibility=secret\n"),
            (path: Support.mainPath + ".d/10.conf", contents: "[LockScreen]\nVisibility=\n"),
        ])
        #expect(reset.lockScreen.visibility == .public)
    }

    @Test func anythingElseIsRefused() {
        Support.expectError(
            "[LockScreen]\nVisibility=hidden\n",
            "\(Support.mainPath):2: invalid value 'hidden' for Visibility=: expected public, private or secret")
        Support.expectError(
            "[LockScreen:org.example.Chat]\nShow=no\n",
            "\(Support.mainPath):2: unknown key 'Show=' in [LockScreen:org.example.Chat]; it takes Visibility= only")
        Support.expectError(
            "[LockScreen:chat]\nVisibility=secret\n",
            "\(Support.mainPath):1: invalid app id 'chat' in [LockScreen:chat]: expected a reverse-DNS name such as org.example.App")
    }

    @Test func theStricterOfTheLayoutsAndTheUsersLevelWins() {
        #expect(LockScreenVisibility.public.stricter(.private) == .private)
        #expect(LockScreenVisibility.secret.stricter(.public) == .secret)
        #expect(LockScreenVisibility.private.stricter(nil) == .private)
    }
}
