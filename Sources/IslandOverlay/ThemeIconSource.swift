import CPangoCairo
import Foundation
import FreeDesktop
import SmallFiles

/// Icons from the freedesktop icon theme's PNG directories, with no display and no GTK: what
/// off-screen rendering (golden images, the gallery) uses. The overlay itself asks GtkIconTheme.
/// Symbolic icons (`…-symbolic`) are drawn in the text colour.
package final class ThemeIconSource: OverlayIconSource {
    private let search: IconThemeSearch
    private var surfaces: [String: OpaquePointer?] = [:]

    package init(themes: [String] = IconThemeSearch.defaultThemes, environment: [String: String] = ProcessInfo.processInfo.environment) {
        search = IconThemeSearch(roots: IconThemeSearch.roots(BaseDirectories(environment: environment)), themes: themes)
    }

    deinit {
        for case let surface? in surfaces.values { cairo_surface_destroy(surface) }
    }

    package func draw(icon name: String, cairo cr: OpaquePointer, rect: OverlayRect, color: OverlayColor, scale: Int) -> Bool {
        guard IconName.isValid(name), let surface = surface(name, pixels: Int((rect.height * Double(scale)).rounded())) else { return false }
        let width = Double(cairo_image_surface_get_width(surface)), height = Double(cairo_image_surface_get_height(surface))
        guard width > 0, height > 0 else { return false }
        // A symbolic icon is recoloured into a picture of its own, then painted as any other:
        // cairo 1.16's SVG surface writes a mask drawn with cairo_mask_surface without its
        // matrix, at the page's origin and outside the icon's clip, so a masked icon vanished
        // from every SVG (snapshot, preview) while the PNGs showed it.
        let symbolic = name.hasSuffix("-symbolic")
        guard let picture = symbolic ? Self.recoloured(surface, color) : surface else { return false }
        cairo_save(cr)
        cairo_translate(cr, rect.x, rect.y)
        cairo_scale(cr, rect.width / width, rect.height / height)
        cairo_set_source_surface(cr, picture, 0, 0)
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD)
        cairo_paint(cr)
        cairo_restore(cr)
        if symbolic { cairo_surface_destroy(picture) }
        return true
    }

    /// `mask`'s shape in `color`: an image surface of its size (the caller destroys it), or nil
    /// when cairo could not make one.
    static func recoloured(_ mask: OpaquePointer, _ color: OverlayColor) -> OpaquePointer? {
        guard let image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, cairo_image_surface_get_width(mask), cairo_image_surface_get_height(mask))
        else { return nil }
        guard cairo_surface_status(image) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(image)
            return nil
        }
        let context = cairo_create(image)
        cairo_set_source_rgba(context, color.red, color.green, color.blue, color.alpha)
        cairo_mask_surface(context, mask, 0, 0)
        cairo_destroy(context)
        return image
    }

    /// The most of an icon file read: a 256-pixel PNG is a few hundred KiB at most.
    static let maximumIconBytes = 2 << 20

    private func surface(_ name: String, pixels: Int) -> OpaquePointer? {
        let sizes = [16, 24, 32, 48, 64, 96, 128, 256]
        let size = sizes.first { $0 >= pixels } ?? 256
        let key = "\(name)@\(size)"
        if let known = surfaces[key] { return known }
        var found: OpaquePointer?
        let files = name.hasSuffix("-symbolic") ? [name + ".symbolic.png", name + ".png"] : [name + ".png"]
        // Cairo reads PNG only: the scalable directories hold nothing it can draw.
        lookup: for theme in search.themeDirectories {
            let directories = IconThemeSearch.iconDirectories(ofTheme: theme, size: size) { try? FileManager.default.contentsOfDirectory(atPath: $0) }
            for directory in directories {
                for file in files {
                    let path = "\(directory)/\(file)"
                    // Any program of the user's can write ~/.local/share/icons, which comes first:
                    // only a regular file (links followed: themes link their aliases) of at most
                    // `maximumIconBytes` is read, and decoded only if no larger than
                    // `ArtworkLoader.maximumSide` a side. cairo's own loader opened anything, and
                    // a FIFO there held the overlay's drawing for good.
                    guard let bytes = try? readRegularFile(path, limit: Self.maximumIconBytes, followingLinks: true),
                        case .success(let surface) = ArtworkLoader.pngSurface(bytes)
                    else { continue }
                    found = surface
                    break lookup
                }
            }
        }
        // Icon names come from producers: the cache is bounded, and what it drops is freed.
        if surfaces.count > 256 {
            for case let surface? in surfaces.values { cairo_surface_destroy(surface) }
            surfaces.removeAll()
        }
        surfaces[key] = found
        return found
    }
}
