public import Foundation
public import FreeDesktop
import Synchronization

/// Freedesktop icon-theme lookup for the drawings that can show images (SVG): a symbol's icon
/// name becomes the theme's file, searched in the given themes (hicolor and Adwaita as the
/// fallbacks) under every icon directory, scalable first, then the bitmap nearest above 48 px
/// (`IconThemeSearch`).
///
/// Symbol names come from producers: only an icon name (`IconName`, never a path) is looked up. An absolute path to a `.png` or `.svg` is
/// read only for an app's icon (`Icon=` of its desktop entry, which producers cannot set). A
/// file is read only when it is a regular file of at most `maximumFileSize` bytes.
public struct IconTheme: Sendable {
    public struct Icon: Sendable, Hashable {
        public var data: [UInt8]
        public var mimeType: String
        /// A symbolic icon is drawn in the colour of the text beside it.
        public var isSymbolic: Bool

        /// The icon as a `data:` URI for an SVG `<image>`.
        public var dataURI: String { "data:\(mimeType);base64,\(Data(data).base64EncodedString())" }
    }

    /// Where themes are searched, and which.
    public var search: IconThemeSearch
    public static let maximumFileSize = 256 * 1024
    /// The size a drawing's icons are wanted at: bitmaps nearest above it are preferred.
    static let pixels = 48

    public init(roots: [String], themes: [String] = IconThemeSearch.defaultThemes) {
        search = IconThemeSearch(roots: roots, themes: themes)
    }

    /// The icon directories of the XDG base directories (`IconThemeSearch.roots`), with the
    /// theme `ISLAND_ICON_THEME` names searched before the default ones.
    public static func system(environment: [String: String] = ProcessInfo.processInfo.environment) -> IconTheme {
        var themes = IconThemeSearch.defaultThemes
        if let theme = environment["ISLAND_ICON_THEME"], IconName.isValid(theme) { themes.insert(theme, at: 0) }
        return IconTheme(roots: IconThemeSearch.roots(BaseDirectories(environment: environment)), themes: themes)
    }

    /// An app's icon: `Icon=` is an icon name or an absolute path to an image.
    public func appIcon(_ icon: String) -> Icon? {
        guard icon.hasPrefix("/") else { return self.icon(named: icon) }
        let isSVG = icon.hasSuffix(".svg")
        guard isSVG || icon.hasSuffix(".png"), !icon.split(separator: "/").contains(".."), let data = Self.read(icon) else { return nil }
        return Icon(data: data, mimeType: isSVG ? "image/svg+xml" : "image/png", isSymbolic: false)
    }

    /// The icon for `name`, or nil when no theme has it (or it is not an icon name).
    public func icon(named name: String) -> Icon? {
        guard IconName.isValid(name) else { return nil }
        let symbolic = name.hasSuffix("-symbolic")
        let other = symbolic ? String(name.dropLast("-symbolic".count)) : name + "-symbolic"
        // The name asked for first, then its symbolic (or full-colour) twin.
        let files = [name + ".svg", name + ".png", name + ".symbolic.png", other + ".svg", other + ".png", other + ".symbolic.png"]
        for theme in search.themeDirectories {
            let directories = Self.directories(of: theme)
            for file in files {
                for directory in directories {
                    let path = directory + "/" + file
                    guard let data = Self.read(path) else { continue }
                    let isSVG = file.hasSuffix(".svg")
                    return Icon(data: data, mimeType: isSVG ? "image/svg+xml" : "image/png",
                                isSymbolic: file.hasSuffix("-symbolic.svg") || file.hasSuffix("-symbolic.png") || file.hasSuffix(".symbolic.png"))
                }
            }
        }
        return nil
    }

    /// A theme's icon directories in `IconThemeSearch`'s order; listed once per process.
    static func directories(of theme: String) -> [String] {
        if let known = listed.withLock({ $0[theme] }) { return known }
        let directories = IconThemeSearch.iconDirectories(ofTheme: theme, size: pixels) { try? FileManager.default.contentsOfDirectory(atPath: $0) }
        listed.withLock { cache in
            if cache.count > 64 { cache.removeAll() }
            cache[theme] = directories
        }
        return directories
    }

    private static let listed = Mutex<[String: [String]]>([:])

    /// The file's bytes when it is a regular file within the size bound.
    static func read(_ path: String) -> [UInt8]? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              attributes[.type] as? FileAttributeType == .typeRegular,
              let size = attributes[.size] as? Int, size > 0, size <= maximumFileSize,
              let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maximumFileSize + 1), data.count <= maximumFileSize else { return nil }
        return [UInt8](data)
    }
}
