import OrderedJSON
import OrderedCollections

/// Validates a layout document into a `Layout`, stopping at the first problem.
///
/// Checks run outside-in: an object's unknown keys first, then its members in document order
/// (regions before the plain members of the top level), so a document with several problems
/// always reports the same one.
struct LayoutParser {
    static let regionKeys = ["lockScreen", "compactLeading", "compactTrailing", "minimal"]
    static let expandedKeys = ["leading", "trailing", "center", "bottom"]
    static let topLevelKeys: Set<String> = Set(
        regionKeys + [
            "expanded", "keylineTint", "backgroundTint", "chip", "hideContentOnLockScreen", "lockScreenVisibility",
            "publicLayout", "url",
        ])
    /// A public layout is what a locked screen shows in place of the layout: not a layout with
    /// a privacy of its own, nor one with anything that acts.
    static let publicLayoutKeys: Set<String> = Set(regionKeys + ["expanded", "keylineTint", "backgroundTint", "chip"])

    /// Views seen so far, every region counted.
    private var viewCount = 0

    mutating func parse(_ json: JSON) throws(LayoutError) -> Layout {
        let size = json.serialized().count
        guard size <= LayoutLimits.maximumBytes else {
            throw LayoutPath.root.error("the layout is \(size) bytes, more than the \(LayoutLimits.maximumBytes) allowed")
        }
        return try parse(json, at: .root, allowedKeys: Self.topLevelKeys)
    }

    /// A layout document, or a public layout inside one (`allowedKeys` then without privacy
    /// keys); the views of both count against the one limit.
    private mutating func parse(_ json: JSON, at path: LayoutPath, allowedKeys: Set<String>) throws(LayoutError) -> Layout {
        let root = try LayoutObject(json, at: path, allowedKeys: allowedKeys)
        var regions: [String: LayoutRegion] = [:]
        var expanded = ExpandedLayout()
        var publicLayout: Layout?
        for (key, value) in root.members {
            let path = root.path.appending(key)
            switch key {
            case "expanded": expanded = try self.expanded(value, at: path)
            case _ where Self.regionKeys.contains(key): regions[key] = try region(value, at: path, expanded: false)
            case "publicLayout": publicLayout = try self.publicLayout(value, at: path)
            default: continue  // plain members, read below
            }
        }
        let visibility = try lockScreenVisibility(root)
        let chip = try root.string("chip")
        if let chip, chip.count > LayoutLimits.maximumChipLength {
            throw root.path.appending("chip").error(
                "'\(chip)' is \(chip.count) characters, more than the \(LayoutLimits.maximumChipLength) allowed")
        }
        return Layout(
            lockScreen: regions["lockScreen"],
            compactLeading: regions["compactLeading"],
            compactTrailing: regions["compactTrailing"],
            minimal: regions["minimal"],
            expanded: expanded,
            keylineTint: try root.color("keylineTint"),
            backgroundTint: try root.color("backgroundTint"),
            chip: chip,
            lockScreenVisibility: visibility,
            publicLayout: publicLayout,
            url: try root.url("url"),
            json: root.members
        )
    }

    /// `lockScreenVisibility`, or the older `hideContentOnLockScreen` (true: `private`); a
    /// layout saying both must not contradict itself.
    private func lockScreenVisibility(_ root: LayoutObject) throws(LayoutError) -> LockScreenVisibility {
        let hides = try root.bool("hideContentOnLockScreen")
        guard let name = try root.string("lockScreenVisibility") else { return hides == true ? .private : .public }
        guard let visibility = LockScreenVisibility(rawValue: name) else {
            throw root.path.appending("lockScreenVisibility").error("unknown visibility '\(name)'; expected \(LockScreenVisibility.allNames)")
        }
        if let hides, hides != (visibility != .public) {
            throw root.path.appending("hideContentOnLockScreen").error(
                "\(hides) contradicts lockScreenVisibility '\(name)'; hideContentOnLockScreen is the older name of private: leave it out")
        }
        return visibility
    }

    /// A public layout: text, symbols, timers, progress and stacks, drawn with no attributes or
    /// state. Nothing in it acts (no buttons, links or URLs: nothing acts on a locked screen)
    /// and it shows no pictures, since artwork is content.
    private mutating func publicLayout(_ json: JSON, at path: LayoutPath) throws(LayoutError) -> Layout {
        let layout = try parse(json, at: path, allowedKeys: Self.publicLayoutKeys)
        let regions: [(String, LayoutRegion?)] = [
            ("lockScreen", layout.lockScreen), ("compactLeading", layout.compactLeading), ("compactTrailing", layout.compactTrailing),
            ("minimal", layout.minimal), ("expanded.leading", layout.expanded.leading), ("expanded.trailing", layout.expanded.trailing),
            ("expanded.center", layout.expanded.center), ("expanded.bottom", layout.expanded.bottom),
        ]
        for (name, region) in regions {
            guard let region else { continue }
            var regionPath = path
            for part in name.split(separator: ".") { regionPath = regionPath.appending(String(part)) }
            if region.url != nil { throw regionPath.appending("url").error("a public layout has no URLs: nothing acts on a locked screen") }
            if let kind = Self.firstActing(region.view) {
                throw regionPath.error("a public layout has no \(kind) views: nothing acts on a locked screen, and artwork is content")
            }
        }
        return layout
    }

    /// The first view in `view` that acts or shows a picture: a button, link or image.
    private static func firstActing(_ view: LayoutView) -> String? {
        switch view {
        case .button, .link, .image: return view.typeName
        case .hstack(let stack), .vstack(let stack): return stack.children.lazy.compactMap(firstActing).first
        case .text, .symbol, .timer, .progress, .spacer: return nil
        }
    }

    private mutating func expanded(_ json: JSON, at path: LayoutPath) throws(LayoutError) -> ExpandedLayout {
        let object = try LayoutObject(json, at: path, allowedKeys: Set(Self.expandedKeys))
        var expanded = ExpandedLayout()
        for (key, value) in object.members {
            let region = try self.region(value, at: path.appending(key), expanded: true)
            switch key {
            case "leading": expanded.leading = region
            case "trailing": expanded.trailing = region
            case "center": expanded.center = region
            default: expanded.bottom = region
            }
        }
        return expanded
    }

    /// A region is its root view plus the region's own keys (see `LayoutRegion`).
    private mutating func region(_ json: JSON, at path: LayoutPath, expanded: Bool) throws(LayoutError) -> LayoutRegion {
        let regionKeys: Set<String> = expanded ? ["priority", "belowIfTooWide", "url"] : ["url"]
        let (view, object) = try self.view(json, at: path, depth: 1, extraKeys: regionKeys)
        let viewOwnsURL: Bool = if case .link = view { true } else { false }
        return LayoutRegion(
            view: view,
            priority: expanded ? try object.requiredNumber("priority") : 0,
            belowIfTooWide: try object.bool("belowIfTooWide") ?? false,
            url: viewOwnsURL ? nil : try object.url("url")
        )
    }

    /// Counts the view and checks its depth before anything inside it, so a runaway tree is
    /// refused at the first view over a limit.
    mutating func view(_ json: JSON, at path: LayoutPath, depth: Int, extraKeys: Set<String> = []) throws(LayoutError) -> (LayoutView, LayoutObject) {
        viewCount += 1
        guard viewCount <= LayoutLimits.maximumViews else {
            throw path.error("more than \(LayoutLimits.maximumViews) views in the layout")
        }
        guard depth <= LayoutLimits.maximumDepth else {
            throw path.error("views nested more than \(LayoutLimits.maximumDepth) deep")
        }
        guard case .object(let members) = json else { throw path.error("expected a view object, found \(json.typeName)") }
        guard let typeJSON = members["type"] else { throw path.appending("type").error("required") }
        guard case .string(let type) = typeJSON else {
            throw path.appending("type").error("expected a string, found \(typeJSON.typeName)")
        }
        guard let kind = ViewKind(rawValue: type) else {
            throw path.appending("type").error("unknown view type '\(type)'; expected one of \(ViewKind.allNames)")
        }
        let object = try LayoutObject(json, at: path, allowedKeys: kind.keys.union(extraKeys).union(["type"]))
        return (try view(kind, object, depth: depth), object)
    }
}
