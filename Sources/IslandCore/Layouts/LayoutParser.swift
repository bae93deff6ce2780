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
    static let topLevelKeys: Set<String> = Set(regionKeys + [
        "expanded", "keylineTint", "backgroundTint", "chip", "hideContentOnLockScreen", "url",
    ])

    /// Views seen so far, every region counted.
    private var viewCount = 0

    mutating func parse(_ json: JSON) throws(LayoutError) -> Layout {
        let size = json.serialized().count
        guard size <= LayoutLimits.maximumBytes else {
            throw LayoutPath.root.error("the layout is \(size) bytes, more than the \(LayoutLimits.maximumBytes) allowed")
        }
        let root = try LayoutObject(json, at: .root, allowedKeys: Self.topLevelKeys)
        var regions: [String: LayoutRegion] = [:]
        var expanded = ExpandedLayout()
        for (key, value) in root.members {
            let path = root.path.appending(key)
            switch key {
            case "expanded": expanded = try self.expanded(value, at: path)
            case _ where Self.regionKeys.contains(key): regions[key] = try region(value, at: path, expanded: false)
            default: continue  // plain members, read below
            }
        }
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
            hideContentOnLockScreen: try root.bool("hideContentOnLockScreen") ?? false,
            url: try root.url("url"),
            json: root.members
        )
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
