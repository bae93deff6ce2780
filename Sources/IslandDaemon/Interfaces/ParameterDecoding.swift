import IslandCore
import OrderedJSON
import OrderedCollections
import VarlinkCore

// What the generated decoders of MethodParameters.varlinkmap are written with (the varlink-codegen
// plugin writes them from Protocol/*.varlink at build time): how one value of each Swift type
// is read from the validated tree and from a call's text, and the Swift values of the
// interfaces' own types. The generated code names a member and its types; these say how.

/// The parameters of a producer's or an extension's method, which may name the app the
/// caller claims to be (its role binding decides whether it may).
protocol AppClaiming {
    var app: String? { get }
}

/// Where within a value read from the tree it is not what the interface says: "" for the value
/// itself, "member…" or "[index]…" below it. A method's decoder names the whole path in its
/// `InvalidParameter`; the path is only built for a call that is refused.
struct WrongAt: Error {
    var path: String
    /// What belongs there, when the decoder knows more than the interface's type says (a
    /// `string` that must name a state): `InvalidParameter`'s `expected`.
    var expected: String?

    init(_ path: String, expected: String? = nil) {
        self.path = path
        self.expected = expected
    }
}

/// A value of a parameter, read from the tree: `value` is never null.
protocol TreeDecodable: Sendable {
    init(tree value: JSON) throws(WrongAt)
}

/// A value of a parameter read straight from a call's text; anything it cannot read as the tree
/// would, it throws `Mismatch` for, and the call is read as a tree instead.
protocol TextReadable: Sendable {
    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch)
}

/// The members of an object read from the tree, by name. Absent and `null` members are alike:
/// optional members may be either.
enum TreeMember {
    static func required<Value: TreeDecodable>(_ object: JSONObject, _ key: String) throws(WrongAt) -> Value {
        guard let value: Value = try optional(object, key) else { throw WrongAt(key) }
        return value
    }

    static func optional<Value: TreeDecodable>(_ object: JSONObject, _ key: String) throws(WrongAt) -> Value? {
        guard let member = object[key], !member.isNull else { return nil }
        do {
            return try Value(tree: member)
        } catch {
            throw WrongAt(key + error.path, expected: error.expected)
        }
    }

    /// The members of a struct-typed value, or `WrongAt("")` when it is no object.
    static func object(_ value: JSON) throws(WrongAt) -> JSONObject {
        guard let object = value.objectValue else { throw WrongAt("") }
        return object
    }
}

extension JSONReader {
    /// A `?T` member: `null`, or a `T`.
    mutating func readOptional<Value: TextReadable>(_: Value.Type) throws(Mismatch) -> Value? {
        readNull() ? nil : try Value(reading: &self)
    }
}

// MARK: The IDL's own types

extension String: TreeDecodable, TextReadable {
    init(tree value: JSON) throws(WrongAt) {
        guard let string = value.stringValue else { throw WrongAt("") }
        self = string
    }

    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        self = try reader.readString()
    }
}

extension Bool: TreeDecodable, TextReadable {
    init(tree value: JSON) throws(WrongAt) {
        guard let bool = value.boolValue else { throw WrongAt("") }
        self = bool
    }

    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        self = try reader.readBool()
    }
}

/// `float`: a number of either kind.
extension Double: TreeDecodable, TextReadable {
    init(tree value: JSON) throws(WrongAt) {
        guard let number = value.doubleValue else { throw WrongAt("") }
        self = number
    }

    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        self = try reader.readNumber()
    }
}

/// `object`, kept as a tree (an activity's attributes, a layout).
extension OrderedDictionary: TreeDecodable, TextReadable where Key == String, Value == JSON {
    init(tree value: JSON) throws(WrongAt) {
        self = try TreeMember.object(value)
    }

    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        self = try reader.readObject()
    }
}

/// `[]T` read into a set; an element that is wrong is named by its index.
extension Set: TreeDecodable where Element: TreeDecodable {
    init(tree value: JSON) throws(WrongAt) {
        guard let array = value.arrayValue else { throw WrongAt("") }
        self.init(minimumCapacity: array.count)
        for (index, element) in array.enumerated() {
            do {
                insert(try Element(tree: element))
            } catch {
                throw WrongAt("[\(index)]" + error.path, expected: error.expected)
            }
        }
    }
}

/// An enum of the interface as a Swift enum whose raw values are its names: a name that is
/// none of its cases is refused.
protocol WireEnumeration: RawRepresentable<String>, CaseIterable, TreeDecodable, TextReadable {}

extension WireEnumeration {
    init(tree value: JSON) throws(WrongAt) {
        guard let name = value.stringValue, let value = Self(rawValue: name) else {
            throw WrongAt("", expected: "(" + Self.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
        self = value
    }

    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        guard let value = Self(rawValue: try reader.readString()) else { throw JSONReader.Mismatch() }
        self = value
    }
}

extension OwnerGonePolicy: WireEnumeration {}
extension ActivityState: WireEnumeration {}
extension PresenterAction: WireEnumeration {}

// MARK: The interfaces' types

/// `Content.state`: from text, the object's canonical text, as the core keeps it (no tree is
/// made on an update's path); from the tree, the tree.
enum ContentState: TreeDecodable, TextReadable {
    case tree(JSONObject)
    case text([UInt8], nesting: Int, shape: [UInt8])

    init(tree value: JSON) throws(WrongAt) {
        self = .tree(try TreeMember.object(value))
    }

    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        let (text, nesting, shape) = try reader.readObjectText()
        self = .text(text, nesting: nesting, shape: shape)
    }
}

extension ActivityContent {
    /// `Content (state: object, staleDate: ?float, relevanceScore: ?float)`; the score defaults to 0.
    static func fromWire(state: ContentState, staleDate: Double?, relevanceScore: Double?) throws(WrongAt) -> ActivityContent {
        switch state {
        case .tree(let object):
            ActivityContent(state: object, staleDate: staleDate, relevanceScore: relevanceScore ?? 0)
        case .text(let text, let nesting, let shape):
            ActivityContent(canonicalText: text, nesting: nesting, shape: shape, staleDate: staleDate, relevanceScore: relevanceScore ?? 0)
        }
    }
}

extension Alert {
    /// `Alert (title: string, body: string)`
    static func fromWire(title: String, body: String) throws(WrongAt) -> Alert {
        Alert(title: title, body: body)
    }
}

/// `Admin.SetSharing`'s `source`: who says the screen is shared.
enum SharingSource: String, WireEnumeration {
    case portal, gnome, manual
}

/// `Admin.SetDesktopLockScreen`'s `privateApps` and `secretApps`: app ids as desktop entries
/// name them (ASCII letters, digits, `.`, `_`, `-`; 1 to 255 bytes), at most `maximumCount`.
/// What a bus peer that reaches the Admin socket can make the daemon hold is so bounded; a
/// name that could be none is refused by its index rather than kept.
struct DesktopLockScreenApps: TreeDecodable, Equatable {
    static let maximumCount = 1024
    static let maximumNameBytes = 255
    var ids: Set<String>

    init(_ ids: Set<String>) {
        self.ids = ids
    }

    init(tree value: JSON) throws(WrongAt) {
        guard let array = value.arrayValue else { throw WrongAt("") }
        guard array.count <= Self.maximumCount else { throw WrongAt("", expected: "at most \(Self.maximumCount) app ids") }
        var ids = Set<String>(minimumCapacity: array.count)
        for (index, element) in array.enumerated() {
            guard let id = element.stringValue, Self.isAppID(id) else {
                throw WrongAt("[\(index)]", expected: "an app id: 1 to \(Self.maximumNameBytes) of A-Z a-z 0-9 . _ -")
            }
            ids.insert(id)
        }
        self.ids = ids
    }

    static func isAppID(_ id: String) -> Bool {
        let bytes = id.utf8
        return !bytes.isEmpty && bytes.count <= maximumNameBytes
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

extension SetDesktopLockScreenParameters {
    /// The desktop's levels; an app named both private and secret is secret.
    var desktopLockScreen: DesktopLockScreen {
        var perApp: [String: LockScreenVisibility] = [:]
        for id in privateApps.ids { perApp[id] = .private }
        for id in secretApps.ids { perApp[id] = .secret }
        return DesktopLockScreen(everyAppSecret: everyAppSecret, perApp: perApp)
    }
}

/// `Admin.SetLock`'s `source`: who says the session is locked.
enum LockSource: String, WireEnumeration {
    case logind, gnome, freedesktop, manual
}

/// `DismissalPolicy.kind`
enum DismissalKind: String, CaseIterable, WireEnumeration {
    case `default`, immediate, after
}

extension DismissalPolicy {
    /// `DismissalPolicy (kind: (default, immediate, after), date: ?float)`: `after` without its
    /// date is refused rather than read as "dismiss now", which would silently drop the activity.
    static func fromWire(kind: DismissalKind, date: Double?) throws(WrongAt) -> DismissalPolicy {
        switch kind {
        case .default: return .default
        case .immediate: return .immediate
        case .after:
            guard let date else { throw WrongAt("date", expected: "float: the date, which kind after needs") }
            return .after(date)
        }
    }
}
