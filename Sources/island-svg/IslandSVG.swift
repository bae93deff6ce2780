import ArgumentParser
import Foundation
import FreeDesktop
import IslandOverlay
import IslandPresenter
import OrderedCollections
import OrderedJSON

#if canImport(Glibc)
import Glibc
#endif

/// Draws the island as SVG for `island-presenter snapshot --svg` and `island preview --svg`,
/// which start it: the overlay's layout and painter on a cairo SVG surface. It lives in the
/// island-overlay package with the other user of cairo and Pango, so the core package needs
/// neither.
@main
struct IslandSVGCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "island-svg",
        abstract: "Draw the island as SVG (started by island-presenter snapshot --svg and island preview --svg).",
        discussion: """
            Reads on standard input a JSON object {"now": epoch seconds, "updates": [the updates of \
            org.island.Presenter.Subscribe, a snapshot first]}, and writes the island in the form \
            they show, with the list of Live Activities open under it, as an SVG document: the \
            shapes and glyph outlines island-overlay paints, a <title> with the form and a <desc> \
            with what each region says. Exit status 0, 65 for input that is not such an object \
            (or is larger than 64 MiB), 1 when the drawing could not be written.
            """)

    @Option(help: ArgumentHelp("Write the SVG here ('-' for standard output).", valueName: "file"))
    var output: String

    func run() throws {
        guard let input = readInput(limit: SVGDrawing.maximumRequestBytes),
              let request = try? JSONParser.parse(input).objectValue,
              let now = request["now"]?.doubleValue, now.isFinite,
              let updates = request["updates"]?.arrayValue?.compactMap(\.objectValue), !updates.isEmpty else {
            throw fail("the input is not {\"now\": number, \"updates\": [objects]} within \(SVGDrawing.maximumRequestBytes) bytes", status: 65)
        }
        var model = PresenterModel()
        for update in updates { model.apply(update) }
        guard model.hasSnapshot else { throw fail("the updates hold no snapshot", status: 65) }
        // The icon theme ISLAND_ICON_THEME names first, then Adwaita and hicolor.
        let environment = ProcessInfo.processInfo.environment
        var themes = IconThemeSearch.defaultThemes
        if let theme = environment["ISLAND_ICON_THEME"], IconName.isValid(theme) { themes.insert(theme, at: 0) }
        let painter = OverlayPainter(icons: ThemeIconSource(themes: themes, environment: environment))
        guard let document = OverlaySnapshot.svg(IslandScene(model: model, now: now), painter: painter) else {
            throw fail("cairo could not draw the SVG", status: 1)
        }
        if output == "-" {
            guard writeAll(document) else { throw fail("cannot write to standard output", status: 1) }
        } else {
            do {
                try document.write(toFile: output, atomically: true, encoding: .utf8)
            } catch {
                throw fail("cannot write \(output): \(error.localizedDescription)", status: 1)
            }
        }
    }

    /// Standard input, or nil past `limit` bytes.
    private func readInput(limit: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[..<count]
            if bytes.count > limit { return nil }
        }
        return bytes
    }

    private func fail(_ message: String, status: Int32) -> ExitCode {
        _ = writeAll("island-svg: \(message)\n", to: 2)
        return ExitCode(status)
    }
}
