import Foundation
public import OrderedCollections
public import OrderedJSON

#if canImport(Glibc)
import Glibc
#endif

/// `snapshot --svg` and `preview --svg` without cairo in the core package: the drawing is the
/// overlay's (one geometry, one painter: DESIGN.md §10), made by `island-svg` from the
/// island-overlay package, which these core binaries start with the presenter updates the
/// scene comes from. A headless machine with the core package alone has no cairo, Pango or
/// X11 libraries, and is told which package draws SVG.
public enum SVGDrawing {
    /// The helper's name, and where the island-overlay package installs it.
    public static let helperName = "island-svg"
    public static let installedHelper = "/usr/libexec/island/island-svg"
    /// The most a request may hold: a snapshot is one Varlink message, bounded below this.
    public static let maximumRequestBytes = 64 << 20

    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public static let helperMissing = Failure(description: """
            SVG is drawn by \(helperName) from the island-overlay package, which is not installed \
            (no \(installedHelper)); install it: apt install island-overlay
            """)
    }

    /// The helper beside this executable (a build directory), else the installed one.
    public static func helperPath(executable: String? = nil) -> String? {
        let besides = (executable ?? Bundle.main.executablePath).map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(helperName).path }
        return [besides, installedHelper].compactMap { $0 }.first { access($0, X_OK) == 0 }
    }

    /// What the helper reads on standard input: the updates a presenter received (a snapshot,
    /// perhaps deltas after it) and the instant to draw timers at.
    public static func request(updates: [JSONObject], now: Double) -> String {
        JSON.object(["now": .double(now), "updates": .array(updates.map(JSON.object))]).description
    }

    /// Draws the scene the updates make at `now` to `path` ('-': standard output) with the
    /// helper; throws with a message naming the package when it is not installed, or with the
    /// helper's status.
    public static func draw(updates: [JSONObject], now: Double, to path: String) throws {
        guard let helper = helperPath() else { throw Failure.helperMissing }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = ["--output", path]
        let input = Pipe()
        process.standardInput = input
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot start \(helper): \(error)")
        }
        // A helper that exits early closes the pipe; its status says why, not SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        try? input.fileHandleForWriting.write(contentsOf: Data(request(updates: updates, now: now).utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw Failure(description: "\(helperName) failed (status \(process.terminationStatus))")
        }
    }
}
