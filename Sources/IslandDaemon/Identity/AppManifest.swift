import Foundation
import FreeDesktop
import IslandCore

/// An app's freedesktop desktop entry, read for the keys that make it a Live Activities app
/// — the Linux counterpart of `NSSupportsLiveActivities`.
package struct AppManifest: Sendable, Equatable {
    /// The desktop file id without `.desktop`, e.g. `org.gnome.Nautilus`.
    package var id: String
    /// `Name=`, what presenters head the app's activities with; at most `maximumTextBytes`.
    package var name: String?
    /// `Icon=`, a freedesktop icon name or an absolute path; at most `maximumTextBytes`.
    package var icon: String?
    /// `X-Island-LiveActivities=true`.
    package var supportsLiveActivities: Bool
    /// The value of `X-Island-LiveActivities=` when it is there but not `true` (`yes`, `True`,
    /// `1`), so the refusal can say what to write instead; at most `maximumTextBytes`.
    package var liveActivitiesMisspelt: String?
    /// `X-Island-FrequentUpdates=true`.
    package var supportsFrequentUpdates: Bool
    /// `X-Island-SourceApps=true`: a bridge, which may head its activities with the apps it
    /// verified as their senders (`RoleBinder.sourceAppRefusal`).
    package var speaksForOtherApps: Bool
    /// The program of `TryExec=`, or else the first word of `Exec=`; used to recognise the
    /// app's processes by their executable.
    package var executable: String?
    /// The URL schemes of its `MimeType=` key's `x-scheme-handler/<scheme>` types, lowercased:
    /// besides `http` and `https`, the only ones a tap on its activities may open.
    package var urlSchemes: Set<String>
    /// `X-Flatpak=`: the entry a Flatpak exports for its app, which runs sandboxed.
    package var isFlatpak: Bool
    package var path: String

    /// What a desktop file says about its app.
    enum Entry: Equatable {
        case manifest(AppManifest)
        /// `Hidden=true`: the entry is deleted, and hides same-id entries of later directories.
        case hidden
        /// No `[Desktop Entry]` group, or an empty one: not an entry at all (`DesktopFile`).
        case invalid
    }

    /// Reads the `[Desktop Entry]` group of a desktop file. Returns nil when the text has no
    /// such group or the entry is hidden.
    package init?(id: String, path: String, contents: String) {
        guard case .manifest(let manifest) = Self.entry(id: id, path: path, contents: contents) else { return nil }
        self = manifest
    }

    static func entry(id: String, path: String, contents: String) -> Entry {
        guard let file = DesktopFile(parsing: contents) else { return .invalid }
        guard !file.isHidden else { return .hidden }
        var manifest = AppManifest(
            id: id, name: file.string("Name").flatMap(bounded), icon: file.string("Icon").flatMap(bounded),
            supportsLiveActivities: file.boolean("X-Island-LiveActivities"),
            supportsFrequentUpdates: file.boolean("X-Island-FrequentUpdates"),
            speaksForOtherApps: file.boolean("X-Island-SourceApps"),
            executable: file.executable, urlSchemes: urlSchemes(ofMimeTypes: file.strings("MimeType")),
            isFlatpak: file.string("X-Flatpak") != nil, path: path)
        // The spec's booleans are `true` and `false` alone; anything else reads as false.
        if let value = file.raw("X-Island-LiveActivities"), value != "true", value != "false" {
            manifest.liveActivitiesMisspelt = bounded(value)
        }
        return .manifest(manifest)
    }

    /// Name and Icon reach every presenter with every item: a file someone installed does not
    /// get to make them long. Whole characters only; an empty value is no value.
    static let maximumTextBytes = 128

    static func bounded(_ value: String) -> String? {
        var bytes = 0
        let kept = value.prefix { character in
            bytes += character.utf8.count
            return bytes <= maximumTextBytes
        }
        return kept.isEmpty ? nil : String(kept)
    }

    /// A scheme handler's MIME type is `x-scheme-handler/<scheme>`. What is not a valid scheme
    /// is no scheme at all.
    static func urlSchemes(ofMimeTypes types: [String]) -> Set<String> {
        let prefix = "x-scheme-handler/"
        return Set(
            types.compactMap { type in
                let type = type.trimmingCharacters(in: .whitespaces).lowercased()
                guard type.hasPrefix(prefix) else { return nil }
                let scheme = String(type.dropFirst(prefix.count))
                return LayoutURL.isSchemeSyntax(scheme) ? scheme : nil
            })
    }

    init(
        id: String, name: String?, icon: String? = nil, supportsLiveActivities: Bool, supportsFrequentUpdates: Bool,
        speaksForOtherApps: Bool = false, executable: String?, urlSchemes: Set<String> = [], isFlatpak: Bool = false,
        path: String
    ) {
        self.id = id
        self.name = name
        self.icon = icon
        self.supportsLiveActivities = supportsLiveActivities
        self.supportsFrequentUpdates = supportsFrequentUpdates
        self.speaksForOtherApps = speaksForOtherApps
        self.executable = executable
        self.urlSchemes = urlSchemes
        self.isFlatpak = isFlatpak
        self.path = path
    }
}
