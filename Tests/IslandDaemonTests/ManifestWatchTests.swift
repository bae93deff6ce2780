import Foundation
import Testing
@testable import IslandDaemon

@Suite struct ManifestWatchTests {
    @Test func anExistingApplicationsFolderIsWatchedItself() {
        let existing: Set<String> = ["/", "/usr", "/usr/share", "/usr/share/applications", "/home", "/home/u"]
        let targets = ManifestWatch.targets(dataDirectories: ["/usr/share/", "/home/u/.local/share"]) { existing.contains($0) }
        #expect(targets == [
            .init(directory: "/usr/share/applications", awaiting: nil),
            // ~/.local/share/applications does not exist yet: ~ waits for `.local`.
            .init(directory: "/home/u", awaiting: ".local"),
        ])
    }

    @Test func theRootIsTheLastAncestorAndRelativeDirectoriesAreIgnored() {
        #expect(ManifestWatch.targets(dataDirectories: ["/nowhere", "relative/share"]) { $0 == "/" }
            == [.init(directory: "/", awaiting: "nowhere")])
        #expect(ManifestWatch.targets(dataDirectories: ["/nowhere"]) { _ in false } == [])
    }

    @Test func watchesAreDeduplicatedAndBounded() {
        let many = (0..<100).map { "/data\($0)" } + ["/data0"]
        let targets = ManifestWatch.targets(dataDirectories: many) { _ in true }
        #expect(targets.count == ManifestWatch.maximumTargets)
        #expect(targets.first == .init(directory: "/data0/applications", awaiting: nil))
        #expect(ManifestWatch.targets(dataDirectories: ["/a", "/a/", "/a"]) { _ in true }.count == 1)
    }

    @Test func onlyEntriesAndFoldersMatterInAnApplicationsFolder() {
        #expect(ManifestWatch.relevant(name: "org.example.App.desktop", isDirectory: false, awaiting: [nil]))
        #expect(ManifestWatch.relevant(name: "kde", isDirectory: true, awaiting: [nil]))
        #expect(!ManifestWatch.relevant(name: "mimeinfo.cache", isDirectory: false, awaiting: [nil]))
        #expect(!ManifestWatch.relevant(name: ".goutputstream-X1", isDirectory: false, awaiting: [nil]))
        #expect(ManifestWatch.relevant(name: nil, isDirectory: false, awaiting: [nil]), "the folder itself went")
    }

    @Test func onlyTheAwaitedFolderMattersInAnAncestor() {
        #expect(ManifestWatch.relevant(name: ".local", isDirectory: true, awaiting: [".local"]))
        #expect(!ManifestWatch.relevant(name: "notes.txt", isDirectory: false, awaiting: [".local"]))
        #expect(!ManifestWatch.relevant(name: "x.desktop", isDirectory: false, awaiting: [".local"]))
        #expect(ManifestWatch.relevant(name: "share", isDirectory: true, awaiting: [".local", "share"]))
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
        #expect(registry.refusal(for: "org.example.Plain")
            == "its desktop entry \(tree.path("home/applications/org.example.Plain.desktop")) does not declare X-Island-LiveActivities=true")
        #expect(registry.refusal(for: "org.example.Broken")
            == "its desktop entry \(tree.path("home/applications/org.example.Broken.desktop")) has no [Desktop Entry] group")
        #expect(registry.refusal(for: "org.example.Gone")
            == "its desktop entry \(tree.path("home/applications/org.example.Gone.desktop")) is hidden (Hidden=true)")
        #expect(registry.refusal(for: "org.example.Missing")
            == "no desktop entry org.example.Missing.desktop in \(tree.path("home/applications")), \(tree.path("usr/applications"))")
    }
}
