import Foundation
import OrderedCollections
package import OrderedJSON

#if canImport(Glibc)
import Glibc
#endif

/// `snapshot --svg` and `preview --svg` without cairo in the core package: the drawing is the
/// overlay's (one geometry, one painter: docs/design.md §10), made by `island-overlay --draw-svg`
/// from the island-overlay package, which these core binaries start with the presenter updates
/// the scene comes from. The overlay's own executable does it, off-screen, so drawing SVG costs
/// that package no second statically linked binary. A headless machine with the core package
/// alone has no cairo, Pango or X11 libraries, and is told which package draws SVG.
package enum SVGDrawing {
    /// The program that draws, where the island-overlay package installs it, and its option.
    package static let drawerName = "island-overlay"
    package static let installedDrawer = "/usr/bin/island-overlay"
    package static let drawOption = "--draw-svg"
    /// The most a request may hold: a snapshot is one Varlink message, bounded below this.
    package static let maximumRequestBytes = 64 << 20

    package struct Failure: Error, CustomStringConvertible {
        package var description: String

        package static let drawerMissing = Failure(
            description: """
                SVG is drawn by \(drawerName) from the island-overlay package, which is not installed \
                (no \(drawerName) beside this program, in /usr/bin or on PATH); install it: \
                apt install island-overlay
                """)
    }

    /// The overlay beside this executable (a build directory, or one install prefix), else the
    /// package's, else the first on PATH (another prefix); nil when none is executable.
    /// `executable` and `environment` default to this process's.
    package static func drawerPath(executable: String? = nil, environment: [String: String]? = nil) -> String? {
        let executable = executable ?? Bundle.main.executablePath
        let environment = environment ?? ProcessInfo.processInfo.environment
        let beside = executable.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(drawerName).path }
        let onPath = (environment["PATH"] ?? "").split(separator: ":").filter { $0.hasPrefix("/") }.map { "\($0)/\(drawerName)" }
        return ([beside, installedDrawer].compactMap { $0 } + onPath).first(where: isExecutableFile)
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    /// What the drawer reads on standard input: the updates a presenter received (a snapshot,
    /// perhaps deltas after it) and the instant to draw timers at.
    package static func request(updates: [JSONObject], now: Double) -> String {
        JSON.object(["now": .double(now), "updates": .array(updates.map(JSON.object))]).description
    }

    /// A request read back: nil unless it is {"now": a finite number, "updates": [objects, at
    /// least one]} within `maximumRequestBytes`.
    package static func parseRequest(_ bytes: [UInt8]) -> (now: Double, updates: [JSONObject])? {
        guard bytes.count <= maximumRequestBytes,
            let request = try? JSONParser.parse(bytes).objectValue,
            let now = request["now"]?.doubleValue, now.isFinite,
            let updates = request["updates"]?.arrayValue?.compactMap(\.objectValue), !updates.isEmpty
        else { return nil }
        return (now, updates)
    }

    /// Draws the scene the updates make at `now` to `path` ('-': standard output) with the
    /// overlay; throws with a message naming the package when it is not installed, or with the
    /// drawer's status.
    package static func draw(updates: [JSONObject], now: Double, to path: String) throws {
        guard let drawer = drawerPath() else { throw Failure.drawerMissing }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: drawer)
        // One argument, so a path that starts with "-" is not read as an option.
        process.arguments = ["\(drawOption)=\(path)"]
        let input = Pipe()
        process.standardInput = input
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot start \(drawer): \(error)")
        }
        // A drawer that exits early closes the pipe; its status says why, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        try? input.fileHandleForWriting.write(contentsOf: Data(request(updates: updates, now: now).utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw Failure(description: "\(drawer) \(drawOption) failed (status \(process.terminationStatus))")
        }
    }
}
