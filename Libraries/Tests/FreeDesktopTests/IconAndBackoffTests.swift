import FreeDesktop
import Testing

@Suite struct IconNameTests {
    @Test func themeNamesAreIconNames() {
        for name in ["battery-good-symbolic", "org.gnome.Nautilus", "0ad", "spotify_client", "a"] {
            #expect(IconName.isValid(name), "\(name)")
        }
    }

    @Test func nothingThatCouldLeaveTheThemeIsAnIconName() {
        for name in [
            "", "a/b", "/usr/share/icons/x.png", "..", "a..b", ".hidden", "file:///x.png", "tab\there", "nul\u{0}",
            "esc\u{1B}[31m", "caf\u{E9}", "emoji\u{1F600}", "back\\slash", String(repeating: "a", count: 256),
        ] {
            #expect(!IconName.isValid(name), "\(name.debugDescription)")
        }
        #expect(IconName.isValid(String(repeating: "a", count: 255)))
    }
}

@Suite struct IconThemeSearchTests {
    @Test func rootsFollowTheSpec() {
        let base = BaseDirectories(environment: ["HOME": "/h", "XDG_DATA_DIRS": "/a:/b"])
        #expect(IconThemeSearch.roots(base) == ["/h/.local/share/icons", "/h/.icons", "/a/icons", "/b/icons"])
        #expect(
            IconThemeSearch(roots: ["/r1", "/r2"], themes: ["T", "hicolor"]).themeDirectories
                == ["/r1/T", "/r2/T", "/r1/hicolor", "/r2/hicolor"])
    }

    @Test func scalableFirstThenLargerThenSmaller() {
        let tree: [String: [String]] = [
            "/t": ["16x16", "48x48", "64x64", "scalable", ".hidden", "apps", "index.theme"],
            "/t/16x16": ["apps"], "/t/48x48": ["apps", "status"], "/t/64x64": ["apps"], "/t/scalable": ["apps"],
            "/t/apps": ["32"], "/t/.hidden": ["x"],
            "/t/16x16/apps": [], "/t/48x48/apps": [], "/t/48x48/status": [], "/t/64x64/apps": [], "/t/scalable/apps": [],
            "/t/apps/32": [],
        ]
        let directories = IconThemeSearch.iconDirectories(ofTheme: "/t", size: 40) { tree[$0] }
        #expect(directories == ["/t/scalable/apps", "/t/48x48/apps", "/t/48x48/status", "/t/64x64/apps", "/t/apps/32", "/t/16x16/apps"])
    }
}

@Suite struct BackoffTests {
    @Test func doublesFromTheFirstStepToTheMaximum() {
        let backoff = Backoff(first: .milliseconds(50), maximum: .seconds(2))
        #expect(
            (0...7).map { backoff.delay(attempt: $0) } == [
                .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400),
                .milliseconds(800), .milliseconds(1600), .seconds(2), .seconds(2),
            ])
        #expect(backoff.delay(attempt: 10_000) == .seconds(2))
        #expect(backoff.delay(attempt: -1) == .milliseconds(50))
        #expect(backoff.delay(attempt: 3, random: 0) == .milliseconds(400), "no jitter ignores the draw")
    }

    @Test func equalJitterDrawsBetweenHalfAndAllOfTheStep() {
        let backoff = Backoff(first: .seconds(2), maximum: .seconds(60), jitter: .equal)
        #expect(backoff.delay(attempt: 2, random: 0) == .seconds(4))
        #expect(backoff.delay(attempt: 2, random: 0.5) == .seconds(6))
        #expect(backoff.delay(attempt: 2, random: 1) == .seconds(8))
        #expect(backoff.delay(attempt: 0, random: -3) == .seconds(1), "out-of-range draws are clamped")
        #expect(backoff.delay(attempt: 0, random: 7) == .seconds(2))
    }

    @Test func theSameWaitInSeconds() {
        let backoff = Backoff(first: .milliseconds(250), maximum: .seconds(60), jitter: .equal)
        #expect(backoff.seconds(attempt: 0) == 0.25)
        #expect(backoff.seconds(attempt: 3, random: 0.5) == 1.5)
        #expect(backoff.seconds(attempt: 100) == 60)
    }

    @Test func theRandomSourceIsInjected() {
        struct Fixed: RandomNumberGenerator {
            var value: UInt64
            mutating func next() -> UInt64 { value }
        }
        let backoff = Backoff(first: .seconds(2), maximum: .seconds(60), jitter: .equal)
        var lowest = Fixed(value: 0)
        #expect(backoff.delay(attempt: 1, using: &lowest) == .seconds(2))
        var middle = Fixed(value: 1 << 63)
        #expect(backoff.delay(attempt: 1, using: &middle) == .seconds(3))
        var none = Fixed(value: 0)
        #expect(Backoff(first: .seconds(2), maximum: .seconds(60)).delay(attempt: 1, using: &none) == .seconds(4))
    }
}
