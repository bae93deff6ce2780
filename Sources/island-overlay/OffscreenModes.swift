import FreeDesktop
import Foundation
import IslandOverlay
import IslandPresenter

/// The modes that draw off-screen and exit: neither initialises GTK's display.
extension IslandOverlayCommand {
    func render(to directory: String, environment: [String: String]) throws {
        // Times of day in the default layout: the same images wherever they are drawn, unless a
        // zone is asked for.
        let timeZone = environment["TZ"] == nil ? OverlayGallery.timeZone : .current
        do {
            let files = try OverlayGallery.render(
                to: directory, layoutsDirectory: layouts ?? OverlayGallery.defaultLayoutsDirectory(), scale: scale, timeZone: timeZone)
            for file in files { print(file) }
        } catch {
            throw fail("cannot render the gallery: \(error)", status: 1)
        }
    }

    /// The island as SVG from presenter updates on standard input: the overlay's layout and
    /// painter on a cairo SVG surface (OverlaySnapshot), so the core binaries draw SVG without
    /// linking cairo, and the package carries no second binary for it.
    func drawSVG(to path: String, environment: [String: String]) throws {
        guard let input = readStandardInput(limit: SVGDrawing.maximumRequestBytes),
            let request = SVGDrawing.parseRequest(input)
        else {
            throw fail("--draw-svg: standard input is not {\"now\": number, \"updates\": [objects]} within \(SVGDrawing.maximumRequestBytes) bytes", status: 65)
        }
        var model = PresenterModel()
        for update in request.updates { model.apply(update) }
        guard model.hasSnapshot else { throw fail("--draw-svg: the updates hold no snapshot", status: 65) }
        // GTK's icon theme needs GTK initialised: the theme ISLAND_ICON_THEME names is searched
        // on disk first, then Adwaita and hicolor.
        var themes = IconThemeSearch.defaultThemes
        if let theme = environment["ISLAND_ICON_THEME"], IconName.isValid(theme) { themes.insert(theme, at: 0) }
        let painter = OverlayPainter(icons: ThemeIconSource(themes: themes, environment: environment))
        guard let document = OverlaySnapshot.svg(IslandScene(model: model, now: request.now), painter: painter) else {
            throw fail("--draw-svg: cairo could not draw the SVG", status: 1)
        }
        if path == "-" {
            guard writeAll(document) else { throw fail("--draw-svg: cannot write to standard output", status: 1) }
        } else {
            do {
                try document.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw fail("--draw-svg: cannot write \(path): \(error.localizedDescription)", status: 1)
            }
        }
    }

    /// Standard input, or nil past `limit` bytes.
    func readStandardInput(limit: Int) -> [UInt8]? {
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
}
