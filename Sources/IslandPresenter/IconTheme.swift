public import Foundation
import IslandCore
import Synchronization

/// Freedesktop icon-theme lookup for the drawings that can show images (SVG): a symbol's icon
/// name becomes the theme's file, searched in the given themes (hicolor and Adwaita as the
/// fallbacks) under every icon directory, scalable first, then the bitmap nearest 48 px.
///
/// Symbol names come from producers: only an icon name (letters, digits, `-`, `_`, `.`, no
/// leading dot, so never a path) is looked up. An absolute path to a `.png` or `.svg` is
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

    /// Directories holding themes (`…/icons`), searched in order.
    public var roots: [String]
    /// Theme names, searched in order.
    public var themes: [String]
    public static let maximumFileSize = 256 * 1024

    public init(roots: [String], themes: [String] = ["Adwaita", "hicolor"]) {
        self.roots = roots
        self.themes = themes
    }

    /// The icon directories of the XDG base directories: `$XDG_DATA_HOME/icons`, `~/.icons`,
    /// then `icons` in each of `$XDG_DATA_DIRS`.
    public static func system(environment: [String: String] = ProcessInfo.processInfo.environment) -> IconTheme {
        var roots: [String] = []
        let home = environment["HOME"] ?? ""
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            roots.append(dataHome + "/icons")
        } else if !home.isEmpty {
            roots.append(home + "/.local/share/icons")
        }
        if !home.isEmpty { roots.append(home + "/.icons") }
        let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").filter { $0.hasPrefix("/") }
        roots += dataDirs.map { $0 + "/icons" }
        var themes = ["Adwaita", "hicolor"]
        if let theme = environment["ISLAND_ICON_THEME"], RenderedView.isIconName(theme) { themes.insert(theme, at: 0) }
        return IconTheme(roots: roots, themes: themes)
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
        guard RenderedView.isIconName(name) else { return nil }
        let symbolic = name.hasSuffix("-symbolic")
        let other = symbolic ? String(name.dropLast("-symbolic".count)) : name + "-symbolic"
        // The name asked for first, then its symbolic (or full-colour) twin.
        let files = [name + ".svg", name + ".png", name + ".symbolic.png", other + ".svg", other + ".png", other + ".symbolic.png"]
        for theme in themes {
            for root in roots {
                let directories = Self.directories(of: root + "/" + theme)
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
        }
        return nil
    }

    /// A theme's icon directories (`size/context` or `context/size`), scalable first, then by
    /// distance from 48 px; listed once per process.
    static func directories(of theme: String) -> [String] {
        if let known = listed.withLock({ $0[theme] }) { return known }
        let manager = FileManager.default
        var found: [(score: Int, path: String)] = []
        for first in (try? manager.contentsOfDirectory(atPath: theme)) ?? [] where !first.hasPrefix(".") {
            for second in (try? manager.contentsOfDirectory(atPath: theme + "/" + first)) ?? [] where !second.hasPrefix(".") {
                let path = theme + "/" + first + "/" + second
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
                found.append((score(first, second), path))
            }
        }
        let directories = found.sorted { ($0.score, $0.path) < ($1.score, $1.path) }.map(\.path)
        listed.withLock { cache in
            if cache.count > 64 { cache.removeAll() }
            cache[theme] = directories
        }
        return directories
    }

    private static let listed = Mutex<[String: [String]]>([:])

    private static func score(_ first: String, _ second: String) -> Int {
        for part in [first, second] {
            if part == "scalable" || part == "symbolic" { return 0 }
            let size = part.split(separator: "x").first.flatMap { Int($0.split(separator: "@").first ?? "") }
            if let size { return 1 + abs(size - 48) }
        }
        return 1000
    }

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
