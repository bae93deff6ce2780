/// Where the Icon Theme Specification looks for a theme's icons, and in which order, without
/// touching the file system itself: directory listings come from the caller, so the order is
/// tested without a theme installed and every reader (the SVG presenter, the overlay's
/// off-screen painter) searches the same places the same way.
///
/// Themes are searched in `themes` order, each under every root; inside a theme, its icon
/// directories (`48x48/apps` or `apps/48`) are tried best first: `scalable` and `symbolic`,
/// then the sizes from the one wanted upwards (scaling down looks better than up), then the
/// smaller ones from the largest down, then anything else. `index.theme` is not read: the
/// directories themselves say their size.
public struct IconThemeSearch: Sendable, Hashable {
    /// Directories holding themes (`…/icons`), searched in order.
    public var roots: [String]
    /// Theme names, searched in order.
    public var themes: [String]

    /// The themes searched when the user names none: hicolor is the spec's fallback; Adwaita
    /// has the symbolic icons every GNOME-style name expects.
    public static let defaultThemes = ["Adwaita", "hicolor"]

    public init(roots: [String], themes: [String] = defaultThemes) {
        self.roots = roots
        self.themes = themes
    }

    /// The spec's base directories: `$XDG_DATA_HOME/icons`, `$HOME/.icons` ("for backwards
    /// compatibility"), then `icons` in each of `$XDG_DATA_DIRS`.
    public static func roots(_ directories: BaseDirectories) -> [String] {
        var roots = [directories.dataHome + "/icons"]
        if !directories.home.isEmpty { roots.append(directories.home + "/.icons") }
        return roots + directories.dataDirectories.map { $0 + "/icons" }
    }

    /// `root/theme` for every theme and root, in search order.
    public var themeDirectories: [String] {
        themes.flatMap { theme in roots.map { $0 + "/" + theme } }
    }

    /// A theme's icon directories (two levels below `theme`, hidden entries skipped), best for
    /// an icon of `size` pixels first; `listing` gives a directory's entries, nil when it is
    /// not a readable directory.
    public static func iconDirectories(ofTheme theme: String, size: Int, listing: (String) -> [String]?) -> [String] {
        var found: [(rank: Int, path: String)] = []
        for first in listing(theme) ?? [] where !first.hasPrefix(".") {
            for second in listing(theme + "/" + first) ?? [] where !second.hasPrefix(".") {
                let path = theme + "/" + first + "/" + second
                guard listing(path) != nil else { continue }
                found.append((rank(first, second, size: size), path))
            }
        }
        return found.sorted { ($0.rank, $0.path) < ($1.rank, $1.path) }.map(\.path)
    }

    /// Lower is better: 0 for scalable, then by how far the directory's size is above the
    /// wanted one, then (after every larger size) how far below; unknown names last.
    static func rank(_ first: String, _ second: String, size: Int) -> Int {
        for part in [first, second] {
            if part == "scalable" || part == "symbolic" { return 0 }
            // `48x48`, `48x48@2`, or just `48`.
            if let pixels = part.split(separator: "x").first.flatMap({ Int($0.split(separator: "@").first ?? "") }), pixels > 0 {
                return pixels >= size ? 1 + (pixels - size) : 100_000 + (size - pixels)
            }
        }
        return 1_000_000
    }
}
