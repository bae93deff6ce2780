import ArgumentParser
import Foundation
import IslandPaths
import IslandPresenter
import OrderedJSON
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct Snapshot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw the current island and lock-screen list once, as SVG, and exit.",
        discussion: """
            The drawing is island-overlay's: its geometry and painter, through island-overlay \
            --draw-svg from the island-overlay package (the core package has no cairo or Pango), \
            found beside this program, else as /usr/bin/island-overlay, else on PATH. Without it \
            the command says which package to install and exits with status 69.
            """)
    @OptionGroup var options: CommonOptions

    @Option(help: ArgumentHelp("Write the SVG here ('-' for standard output).", valueName: "file"))
    var svg: String

    func run() async throws {
        guard SVGDrawing.drawerPath() != nil else { throw Self.unavailable() }
        let updates = try await Self.firstSnapshot(socketPath: options.socketPath)
        do {
            try SVGDrawing.draw(updates: updates, now: now(), to: svg)
        } catch {
            writeAll("island-presenter: \(error)\n", to: 2)
            throw ExitCode(64)
        }
    }

    static func unavailable() -> ExitCode {
        writeAll("island-presenter: \(SVGDrawing.Failure.drawerMissing)\n", to: 2)
        return ExitCode(69)
    }

    static func firstSnapshot(socketPath: String) async throws -> [JSONObject] {
        do {
            return try await fetchSnapshotUpdates(socketPath: socketPath)
        } catch {
            // In the CLI's words: SwiftNIO's name a syscall's parameters, not the problem.
            throw ValidationError("no snapshot from \(socketPath): \(ConnectFailure.describe("\(error)", socket: socketPath))")
        }
    }
}
