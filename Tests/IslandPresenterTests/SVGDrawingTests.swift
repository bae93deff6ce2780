import Foundation
import OrderedJSON
import OrderedCollections
import Testing
@testable import IslandPresenter

#if canImport(Glibc)
import Glibc
#endif

/// Where the core binaries find the program that draws their SVG, and the request they hand it.
@Suite struct SVGDrawingTests {
    typealias F = Fixtures

    /// A directory of its own, removed after `body`.
    private func withDirectory(_ body: (String) throws -> Void) rethrows {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("svg-drawing-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    private func makeDrawer(in directory: String, mode: mode_t = 0o755) {
        let path = directory + "/" + SVGDrawing.drawerName
        #expect(FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8)))
        #expect(chmod(path, mode) == 0)
    }

    @Test func theOverlayBesideTheProgramComesFirst() {
        withDirectory { directory in
            let beside = directory + "/beside", onPath = directory + "/path"
            for made in [beside, onPath] {
                try? FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
                makeDrawer(in: made)
            }
            let found = SVGDrawing.drawerPath(executable: beside + "/island", environment: ["PATH": onPath])
            #expect(found == beside + "/" + SVGDrawing.drawerName)
        }
    }

    @Test func elsePathFindsItAfterThePackagesPath() {
        withDirectory { directory in
            makeDrawer(in: directory)
            let found = SVGDrawing.drawerPath(executable: "/nonexistent/island", environment: ["PATH": "relative:/nonexistent:" + directory])
            // The package's /usr/bin/island-overlay comes before PATH, where it is installed.
            let installed = access(SVGDrawing.installedDrawer, X_OK) == 0
            #expect(found == (installed ? SVGDrawing.installedDrawer : directory + "/" + SVGDrawing.drawerName))
        }
    }

    @Test func neitherADirectoryNorAFileThatIsNotExecutableIsTheDrawer() throws {
        try withDirectory { directory in
            guard access(SVGDrawing.installedDrawer, X_OK) != 0 else { return }
            let notExecutable = directory + "/plain", named = directory + "/dir"
            try FileManager.default.createDirectory(atPath: notExecutable, withIntermediateDirectories: true)
            makeDrawer(in: notExecutable, mode: 0o644)
            try FileManager.default.createDirectory(atPath: named + "/" + SVGDrawing.drawerName, withIntermediateDirectories: true)
            // Relative PATH entries are not searched: they depend on where the command was run.
            let found = SVGDrawing.drawerPath(
                executable: notExecutable + "/island",
                environment: ["PATH": "\(named):\(notExecutable):.:"])
            #expect(found == nil)
            #expect(SVGDrawing.Failure.drawerMissing.description.contains("apt install island-overlay"))
        }
    }

    @Test func aRequestReadsBackAsItWasWritten() throws {
        let updates = [F.snapshot(sequence: 3, island: F.island("compact", attached: "c1", lockScreen: ["c1"]), items: [F.coffee()])]
        let request = SVGDrawing.request(updates: updates, now: 1_700_000_000.5)
        let parsed = try #require(SVGDrawing.parseRequest(Array(request.utf8)))
        #expect(parsed.now == 1_700_000_000.5)
        #expect(parsed.updates == updates)
    }

    @Test func whatIsNotARequestIsRefused() {
        let snapshot = JSON.object(F.snapshot(sequence: 0, island: F.island("none"), items: [])).description
        for text in [
            "", "{", "[]", #"{"now": 1}"#, #"{"now": 1, "updates": []}"#, #"{"now": "1", "updates": [\#(snapshot)]}"#,
            #"{"now": 1, "updates": [1, 2]}"#, #"{"updates": [\#(snapshot)]}"#,
        ] {
            #expect(SVGDrawing.parseRequest(Array(text.utf8)) == nil, "\(text)")
        }
        let oversized = [UInt8](repeating: UInt8(ascii: " "), count: SVGDrawing.maximumRequestBytes + 1)
        #expect(SVGDrawing.parseRequest(oversized) == nil)
    }
}
