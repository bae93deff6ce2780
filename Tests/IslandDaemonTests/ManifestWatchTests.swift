import Foundation
import Testing
@testable import IslandDaemon

@Suite struct ManifestWatchTests {
    @Test func anExistingApplicationsFolderIsWatchedItself() {
        let existing: Set<String> = ["/", "/usr", "/usr/share", "/usr/share/applications", "/home", "/home/u"]
        let targets = ManifestWatch.targets(dataDirectories: ["/usr/share/", "/home/u/.local/share"]) { existing.contains($0) }
        #expect(
            targets.filter { $0.kind == .applications } == [
                .init(directory: "/usr/share/applications", awaiting: nil),
                // ~/.local/share/applications does not exist yet: ~ waits for `.local`.
                .init(directory: "/home/u", awaiting: ".local"),
            ])
    }

    @Test func theRootIsTheLastAncestorAndRelativeDirectoriesAreIgnored() {
        #expect(
            ManifestWatch.targets(dataDirectories: ["/nowhere", "relative/share"]) { $0 == "/" }
                == [.init(directory: "/", awaiting: "nowhere"), .init(directory: "/", awaiting: "nowhere", kind: .layouts)])
        #expect(ManifestWatch.targets(dataDirectories: ["/nowhere"]) { _ in false } == [])
    }

    @Test func watchesAreDeduplicatedAndBounded() {
        let many = (0..<100).map { "/data\($0)" } + ["/data0"]
        let targets = ManifestWatch.targets(dataDirectories: many) { _ in true }
        #expect(targets.filter { $0.kind == .applications }.count == ManifestWatch.maximumTargets)
        #expect(targets.filter { $0.kind == .layouts }.count == ManifestWatch.maximumTargets)
        #expect(targets.first == .init(directory: "/data0/applications", awaiting: nil))
        #expect(ManifestWatch.targets(dataDirectories: ["/a", "/a/", "/a"]) { _ in true }.count == 2)
    }

    @Test func onlyEntriesAndFoldersMatterInAnApplicationsFolder() {
        #expect(ManifestWatch.relevant(name: "org.example.App.desktop", isDirectory: false, targets: [.init(directory: "/a", awaiting: nil)]))
        #expect(ManifestWatch.relevant(name: "kde", isDirectory: true, targets: [.init(directory: "/a", awaiting: nil)]))
        #expect(!ManifestWatch.relevant(name: "mimeinfo.cache", isDirectory: false, targets: [.init(directory: "/a", awaiting: nil)]))
        #expect(!ManifestWatch.relevant(name: ".goutputstream-X1", isDirectory: false, targets: [.init(directory: "/a", awaiting: nil)]))
        #expect(ManifestWatch.relevant(name: nil, isDirectory: false, targets: [.init(directory: "/a", awaiting: nil)]), "the folder itself went")
    }

    @Test func onlyTheAwaitedFolderMattersInAnAncestor() {
        let local = ManifestWatch.Target(directory: "/home/u", awaiting: ".local")
        #expect(ManifestWatch.relevant(name: ".local", isDirectory: true, targets: [local]))
        #expect(!ManifestWatch.relevant(name: "notes.txt", isDirectory: false, targets: [local]))
        #expect(!ManifestWatch.relevant(name: "x.desktop", isDirectory: false, targets: [local]))
        #expect(ManifestWatch.relevant(name: "share", isDirectory: true, targets: [local, .init(directory: "/home/u", awaiting: "share")]))
    }

    @Test func layoutFoldersAreWatchedAfterTheApplicationsFolders() {
        let existing: Set<String> = [
            "/", "/usr", "/usr/share", "/usr/share/applications", "/usr/share/island",
            "/usr/share/island/layouts", "/home", "/home/u",
        ]
        let targets = ManifestWatch.targets(
            dataDirectories: ["/usr/share", "/home/u/.local/share"], isDirectory: { existing.contains($0) },
            subfolders: { $0 == "/usr/share/island/layouts" ? ["org.b.App", "org.a.App"] : [] })
        #expect(
            targets == [
                .init(directory: "/usr/share/applications", awaiting: nil),
                .init(directory: "/home/u", awaiting: ".local"),
                .init(directory: "/usr/share/island/layouts", awaiting: nil, kind: .layouts),
                .init(directory: "/home/u", awaiting: ".local", kind: .layouts),
                .init(directory: "/usr/share/island/layouts/org.a.App", awaiting: nil, kind: .appLayouts),
                .init(directory: "/usr/share/island/layouts/org.b.App", awaiting: nil, kind: .appLayouts),
            ])
        let many = ManifestWatch.targets(
            dataDirectories: ["/d"], isDirectory: { _ in true },
            subfolders: { _ in (0..<500).map { "app\($0)" } })
        #expect(many.filter { $0.kind == .appLayouts }.count == ManifestWatch.maximumAppLayoutFolders)
    }

    @Test func onlyAppFoldersAndLayoutFilesMatterInTheLayoutFolders() {
        let layouts = ManifestWatch.Target(directory: "/d/island/layouts", awaiting: nil, kind: .layouts)
        let app = ManifestWatch.Target(directory: "/d/island/layouts/org.a.App", awaiting: nil, kind: .appLayouts)
        #expect(ManifestWatch.relevant(name: "org.a.App", isDirectory: true, targets: [layouts]))
        #expect(!ManifestWatch.relevant(name: "README", isDirectory: false, targets: [layouts]))
        #expect(ManifestWatch.relevant(name: "Order.json", isDirectory: false, targets: [app]))
        #expect(!ManifestWatch.relevant(name: "Order.json~", isDirectory: false, targets: [app]))
        #expect(!ManifestWatch.relevant(name: "x.desktop", isDirectory: false, targets: [app]))
    }
}

@Suite struct WatchRetryTests {
    @Test func failedWatchesAreTriedAgainBackingOffToAMinute() {
        var retry = WatchRetry()
        #expect(!retry.isDue(at: 0))
        var beginsRun = retry.failed(at: 10)
        #expect(beginsRun, "the first failure is the one worth a warning")
        #expect(retry.deadline == 11)
        #expect(!retry.isDue(at: 10.5))
        #expect(retry.isDue(at: 11))
        var deadlines: [Double] = []
        var now = 11.0
        for _ in 0..<8 {
            beginsRun = retry.failed(at: now)
            #expect(!beginsRun)
            deadlines.append(retry.deadline! - now)
            now = retry.deadline!
        }
        #expect(deadlines == [2, 4, 8, 16, 32, 60, 60, 60])
        var ended = retry.succeeded()
        #expect(ended, "a run of failures ends: rescan")
        #expect(retry.deadline == nil)
        ended = retry.succeeded()
        #expect(!ended)
        beginsRun = retry.failed(at: now)
        #expect(beginsRun, "a new run begins at the first step again")
        #expect(retry.deadline == now + 1)
    }
}

@Suite struct ReloadCoalescerTests {
    @Test func aBurstReloadsOnceAfterItsLastEvent() {
        var coalescer = ReloadCoalescer(quiet: 0.2, patience: 2)
        #expect(coalescer.deadline == nil)
        var due = coalescer.takeDue(at: 100)
        #expect(!due)
        for step in 0..<5 { coalescer.eventArrived(at: 10 + Double(step) / 10) }
        #expect(coalescer.deadline == 10.4 + 0.2)
        due = coalescer.takeDue(at: 10.5)
        #expect(!due)
        due = coalescer.takeDue(at: 10.6)
        #expect(due)
        #expect(coalescer.deadline == nil)
        due = coalescer.takeDue(at: 11)
        #expect(!due, "taken once")
    }

    @Test func aSteadyTrickleStillReloadsWithinThePatience() {
        var coalescer = ReloadCoalescer(quiet: 0.2, patience: 2)
        var reloads: [Double] = []
        for step in 0..<50 {
            let now = Double(step) / 10
            coalescer.eventArrived(at: now)
            if coalescer.takeDue(at: now) { reloads.append(now) }
        }
        #expect(reloads == [2.0, 4.1])
    }

    @Test func aFloodRescansAtMostOnceASpacing() {
        // Events every 10 ms for 10 s, a rescan looked for after each: the quiet never comes,
        // the patience and the spacing decide.
        var coalescer = ReloadCoalescer(quiet: 0.2, patience: 0.5, spacing: 1)
        var reloads: [Double] = []
        for step in 0..<1000 {
            let now = Double(step) / 100
            coalescer.eventArrived(at: now)
            if coalescer.takeDue(at: now) { reloads.append(now) }
        }
        #expect(reloads.count == 10)
        #expect(zip(reloads, reloads.dropFirst()).allSatisfy { $1 - $0 >= 1 })
        // The last burst is still rescanned once it ends.
        #expect(coalescer.deadline != nil)
    }
}

@Suite struct AppRegistryRefusalTests {
    @Test func aRefusalSaysWhereItLookedOrWhichFileItFound() throws {
        let tree = try TemporaryTree()
        defer { tree.remove() }
        try tree.write("home/applications/org.example.Plain.desktop", desktopEntry([("Name", "Plain")]))
        try tree.write("home/applications/org.example.Live.desktop", liveEntry())
        try tree.write("home/applications/org.example.Broken.desktop", "Name=No group\n")
        try tree.write("home/applications/org.example.Gone.desktop", "[Desktop Entry]\nHidden=true\n")
        let registry = AppRegistry.scan(dataDirectories: [tree.path("home"), tree.path("usr")])

        #expect(registry.refusal(for: "org.example.Live") == nil)
        #expect(
            registry.refusal(for: "org.example.Plain")
                == "its desktop entry \(tree.path("home/applications/org.example.Plain.desktop")) does not declare X-Island-LiveActivities=true")
        #expect(
            registry.refusal(for: "org.example.Broken")
                == "its desktop entry \(tree.path("home/applications/org.example.Broken.desktop")) has no [Desktop Entry] group")
        #expect(
            registry.refusal(for: "org.example.Gone")
                == "its desktop entry \(tree.path("home/applications/org.example.Gone.desktop")) is hidden (Hidden=true)")
        #expect(
            registry.refusal(for: "org.example.Missing")
                == "no desktop entry org.example.Missing.desktop in \(tree.path("home/applications")), \(tree.path("usr/applications"))")
    }
}
