import OrderedCollections
package import OrderedJSON

extension Layout {
    /// `json` (a layout, valid) with every `image` view replaced by its `fallback`, or by an
    /// empty text where it has none: what a presenter draws for an activity whose producer may
    /// not have pictures read for it. A presenter reads a picture's file as its own user, so a
    /// producer confined to a sandbox could otherwise have it draw a file the sandbox keeps
    /// from that producer; without the view, no presenter reads anything, whatever it is.
    package static func withoutPictures(_ json: JSON) -> JSON {
        switch json {
        case .object(let object):
            if object["type"]?.stringValue == "image" {
                var replacement = object["fallback"].map(withoutPictures)?.objectValue ?? ["type": "text", "template": ""]
                // A region's own view carries the region's keys, which no fallback has.
                for key in regionKeys { if let value = object[key] { replacement[key] = value } }
                return .object(replacement)
            }
            return .object(object.mapValues(withoutPictures))
        case .array(let elements):
            return .array(elements.map(withoutPictures))
        default:
            return json
        }
    }

    /// What a region's view holds besides the view (`LayoutParser.region`).
    private static let regionKeys = ["priority", "belowIfTooWide", "url"]

    /// Whether `json` has an `image` view anywhere: only then is there something to take out.
    package static func hasPictures(_ json: JSON) -> Bool {
        switch json {
        case .object(let object): object["type"]?.stringValue == "image" || object.values.contains(where: hasPictures)
        case .array(let elements): elements.contains(where: hasPictures)
        default: false
        }
    }
}
