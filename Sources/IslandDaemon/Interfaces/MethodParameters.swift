import IslandCore
import OrderedJSON
import OrderedCollections
import VarlinkCore

// The parameters of each method of the role interfaces, read once, into Swift values, before
// the method runs (`VarlinkParameters`): from the validated tree, and for the producer's
// mutations, which every update makes, also straight from the call's text
// (`VarlinkReadableParameters`, in the second half of this file).

/// The parameters of a producer's or an extension's method, which may name the app the
/// caller claims to be (its role binding decides whether it may).
protocol AppClaiming {
    var app: String? { get }
}

/// Reads the members of one parameters object (or of an object within it, at `path`).
/// Absent and `null` members are alike: optional members may be either.
struct ParameterReader {
    let object: JSONObject
    /// Where `object` is within the parameters, for the names of what is wrong: "" at the top.
    let path: String

    init(_ object: JSONObject, path: String = "") {
        self.object = object
        self.path = path
    }

    func pathOf(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    private func invalid(_ key: String) -> VarlinkError { .invalidParameter(pathOf(key)) }

    /// The member, or nil when it is absent or null.
    func optional(_ key: String) -> JSON? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    func string(_ key: String) throws(VarlinkError) -> String {
        guard let string = optional(key)?.stringValue else { throw invalid(key) }
        return string
    }

    func optionalString(_ key: String) throws(VarlinkError) -> String? {
        guard let value = optional(key) else { return nil }
        guard let string = value.stringValue else { throw invalid(key) }
        return string
    }

    func bool(_ key: String) throws(VarlinkError) -> Bool {
        guard let bool = optional(key)?.boolValue else { throw invalid(key) }
        return bool
    }

    func optionalBool(_ key: String) throws(VarlinkError) -> Bool? {
        guard let value = optional(key) else { return nil }
        guard let bool = value.boolValue else { throw invalid(key) }
        return bool
    }

    func optionalDouble(_ key: String) throws(VarlinkError) -> Double? {
        guard let value = optional(key) else { return nil }
        guard let number = value.doubleValue else { throw invalid(key) }
        return number
    }

    func object(_ key: String) throws(VarlinkError) -> JSONObject {
        guard let object = optional(key)?.objectValue else { throw invalid(key) }
        return object
    }

    /// An object member, to read the members of.
    func optionalReader(_ key: String) throws(VarlinkError) -> ParameterReader? {
        guard let value = optional(key) else { return nil }
        guard let object = value.objectValue else { throw invalid(key) }
        return ParameterReader(object, path: pathOf(key))
    }

    /// A member that names one of `Value`'s cases.
    func enumeration<Value: RawRepresentable<String>>(_ key: String, as type: Value.Type) throws(VarlinkError) -> Value {
        guard let value = try optionalEnumeration(key, as: type) else { throw invalid(key) }
        return value
    }

    func optionalEnumeration<Value: RawRepresentable<String>>(_ key: String, as type: Value.Type) throws(VarlinkError) -> Value? {
        guard let name = try optionalString(key) else { return nil }
        guard let value = Value(rawValue: name) else { throw invalid(key) }
        return value
    }

    /// An array member whose every element `read` reads; an element it cannot is named by index.
    func optionalArray<Element>(_ key: String, _ read: (JSON) -> Element?) throws(VarlinkError) -> [Element]? {
        guard let value = optional(key) else { return nil }
        guard let array = value.arrayValue else { throw invalid(key) }
        var elements: [Element] = []
        elements.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            guard let read = read(element) else { throw .invalidParameter("\(pathOf(key))[\(index)]") }
            elements.append(read)
        }
        return elements
    }
}

// MARK: org.island.Producer

/// `Request(app, type, attributes, content, key, ownerGone, pushToken)`.
struct RequestParameters: VarlinkParameters, AppClaiming, Equatable {
    var app: String?
    var type: String
    var attributes: JSONObject
    var content: ActivityContent
    var key: String?
    var ownerGone: OwnerGonePolicy
    var pushToken: Bool

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        type = try p.string("type")
        attributes = try p.object("attributes")
        content = try Wire.content(of: call)
        key = try p.optionalString("key")
        ownerGone = try p.optionalEnumeration("ownerGone", as: OwnerGonePolicy.self) ?? .keep
        pushToken = try p.optionalBool("pushToken") ?? false
    }
}

/// `PushToken(app, id, rotate)`.
struct PushTokenParameters: VarlinkParameters, AppClaiming {
    var app: String?
    var id: String
    var rotate: Bool

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        id = try p.string("id")
        rotate = try p.optionalBool("rotate") ?? false
    }
}

/// `PushToStartToken(app, type, rotate)`.
struct PushToStartTokenParameters: VarlinkParameters, AppClaiming {
    var app: String?
    var type: String
    var rotate: Bool

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        type = try p.string("type")
        rotate = try p.optionalBool("rotate") ?? false
    }
}

/// `Update(app, id, content, alert, timestamp)`.
struct UpdateParameters: VarlinkParameters, AppClaiming, Equatable {
    var app: String?
    var id: String
    var content: ActivityContent
    var alert: Alert?
    var timestamp: Double?

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        id = try p.string("id")
        content = try Wire.content(of: call)
        alert = try p.optionalReader("alert").map { (alert) throws(VarlinkError) in
            Alert(title: try alert.string("title"), body: try alert.string("body"))
        }
        timestamp = try p.optionalDouble("timestamp")
    }
}

/// `End(app, id, content, dismissalPolicy, timestamp)`.
struct EndParameters: VarlinkParameters, AppClaiming, Equatable {
    var app: String?
    var id: String
    var content: ActivityContent?
    var dismissal: DismissalPolicy
    var timestamp: Double?

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        id = try p.string("id")
        content = try Wire.optionalContent(of: call)
        dismissal = try Self.dismissalPolicy(p.optionalReader("dismissalPolicy"))
        timestamp = try p.optionalDouble("timestamp")
    }

    /// `after` without its date is refused rather than read as "dismiss now", which would
    /// silently drop the activity.
    private static func dismissalPolicy(_ policy: ParameterReader?) throws(VarlinkError) -> DismissalPolicy {
        guard let policy else { return .default }
        switch try policy.string("kind") {
        case "default": return .default
        case "immediate": return .immediate
        case "after":
            guard let date = try policy.optionalDouble("date") else { throw .invalidParameter(policy.pathOf("date")) }
            return .after(date)
        default: throw .invalidParameter(policy.pathOf("kind"))
        }
    }
}

/// `List(app, type, states)`.
struct ListParameters: VarlinkParameters, AppClaiming {
    var app: String?
    var type: String?
    /// nil for every state.
    var states: Set<ActivityState>?

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        type = try p.optionalString("type")
        // The interface says `[]string`: a name that is no state is refused here.
        states = try p.optionalArray("states") { $0.stringValue.flatMap(ActivityState.init(rawValue:)) }.map(Set.init)
    }
}

/// `Watch(app, ids)`.
struct WatchParameters: VarlinkParameters, AppClaiming {
    var app: String?
    /// nil for all of the app's activities.
    var ids: Set<String>?

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        ids = try p.optionalArray("ids", \.stringValue).map(Set.init)
    }
}

/// Methods whose only parameter is the app a producer or an extension claims to be:
/// `Authorization(app)`, `ListLayouts(app)`.
struct AppClaimParameters: VarlinkParameters, AppClaiming {
    var app: String?

    init(_ call: VarlinkCall) throws(VarlinkError) {
        app = try ParameterReader(call.parameters).optionalString("app")
    }
}

// MARK: org.island.Extension

/// `RegisterLayout(app, type, layout)`.
struct RegisterLayoutParameters: VarlinkParameters, AppClaiming {
    var app: String?
    var type: String
    var layout: JSON

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        type = try p.string("type")
        layout = .object(try p.object("layout"))
    }
}

/// `RemoveLayout(app, type)`.
struct RemoveLayoutParameters: VarlinkParameters, AppClaiming {
    var app: String?
    var type: String

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        type = try p.string("type")
    }
}

// MARK: org.island.Presenter

/// `Interact(action, id, button)`.
struct InteractParameters: VarlinkParameters {
    var action: PresenterAction
    var id: String?
    var button: String?

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        action = try p.enumeration("action", as: PresenterAction.self)
        id = try p.optionalString("id")
        button = try p.optionalString("button")
    }
}

// MARK: org.island.Admin

/// `SetEnabled(app, enabled)`: nil for Live Activities as a whole.
struct SetEnabledParameters: VarlinkParameters {
    var app: String?
    var enabled: Bool

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.optionalString("app")
        enabled = try p.bool("enabled")
    }
}

/// `SetFrequentUpdates(app, enabled)`.
struct SetFrequentUpdatesParameters: VarlinkParameters {
    var app: String
    var enabled: Bool

    init(_ call: VarlinkCall) throws(VarlinkError) {
        let p = ParameterReader(call.parameters)
        app = try p.string("app")
        enabled = try p.bool("enabled")
    }
}

// MARK: Read from text

// The producer's mutations, read straight from a call's text (see `VarlinkReadableParameters`):
// exactly the members the interface declares, each of its type, each at most once; anything
// else is left to the tree, which refuses it by name. The values are those the tree gives.

extension RequestParameters: VarlinkReadableParameters {
    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var seen = JSONReader.MembersSeen()
        var app: String?, type: String?, attributes: JSONObject?, content: ActivityContent?, key: String?
        var ownerGone: OwnerGonePolicy?, pushToken: Bool?
        try reader.enterObject()
        while let member = try reader.nextKey() {
            switch member {
            case "app": try seen.insert(0); app = try reader.readOptionalString()
            case "type": try seen.insert(1); type = try reader.readString()
            case "attributes": try seen.insert(2); attributes = try reader.readObject()
            case "content": try seen.insert(3); content = try reader.readContent()
            case "key": try seen.insert(4); key = try reader.readOptionalString()
            case "ownerGone": try seen.insert(5); ownerGone = try reader.readOptionalEnumeration(OwnerGonePolicy.self)
            case "pushToken": try seen.insert(6); pushToken = reader.readNull() ? nil : try reader.readBool()
            default: throw JSONReader.Mismatch()
            }
        }
        guard let type, let attributes, let content else { throw JSONReader.Mismatch() }
        (self.app, self.type, self.attributes, self.content, self.key) = (app, type, attributes, content, key)
        self.ownerGone = ownerGone ?? .keep
        self.pushToken = pushToken ?? false
    }
}

extension UpdateParameters: VarlinkReadableParameters {
    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var seen = JSONReader.MembersSeen()
        var app: String?, id: String?, content: ActivityContent?, alert: Alert?, timestamp: Double?
        try reader.enterObject()
        while let member = try reader.nextKey() {
            switch member {
            case "app": try seen.insert(0); app = try reader.readOptionalString()
            case "id": try seen.insert(1); id = try reader.readString()
            case "content": try seen.insert(2); content = try reader.readContent()
            case "alert": try seen.insert(3); alert = reader.readNull() ? nil : try reader.readAlert()
            case "timestamp": try seen.insert(4); timestamp = try reader.readOptionalNumber()
            default: throw JSONReader.Mismatch()
            }
        }
        guard let id, let content else { throw JSONReader.Mismatch() }
        (self.app, self.id, self.content, self.alert, self.timestamp) = (app, id, content, alert, timestamp)
    }
}

extension EndParameters: VarlinkReadableParameters {
    init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
        var seen = JSONReader.MembersSeen()
        var app: String?, id: String?, content: ActivityContent?, dismissal: DismissalPolicy?, timestamp: Double?
        try reader.enterObject()
        while let member = try reader.nextKey() {
            switch member {
            case "app": try seen.insert(0); app = try reader.readOptionalString()
            case "id": try seen.insert(1); id = try reader.readString()
            case "content": try seen.insert(2); content = reader.readNull() ? nil : try reader.readContent()
            case "dismissalPolicy": try seen.insert(3); dismissal = reader.readNull() ? nil : try reader.readDismissalPolicy()
            case "timestamp": try seen.insert(4); timestamp = try reader.readOptionalNumber()
            default: throw JSONReader.Mismatch()
            }
        }
        guard let id else { throw JSONReader.Mismatch() }
        (self.app, self.id, self.content, self.dismissal, self.timestamp) = (app, id, content, dismissal ?? .default, timestamp)
    }
}

extension JSONReader {
    /// `?string`
    mutating func readOptionalString() throws(Mismatch) -> String? {
        readNull() ? nil : try readString()
    }

    /// `?float`
    mutating func readOptionalNumber() throws(Mismatch) -> Double? {
        readNull() ? nil : try readNumber()
    }

    /// An `?enum` member; a name that is none of its cases is left to the tree, which refuses it.
    mutating func readOptionalEnumeration<Value: RawRepresentable<String>>(_: Value.Type) throws(Mismatch) -> Value? {
        guard let name = try readOptionalString() else { return nil }
        guard let value = Value(rawValue: name) else { throw Mismatch() }
        return value
    }

    /// `Content (state: object, staleDate: ?float, relevanceScore: ?float)`; the state as its
    /// canonical text, as the core keeps it.
    mutating func readContent() throws(Mismatch) -> ActivityContent {
        var seen = MembersSeen()
        var state: (text: [UInt8], nesting: Int, shape: [UInt8])?, staleDate: Double?, relevanceScore: Double?
        try enterObject()
        while let member = try nextKey() {
            switch member {
            case "state": try seen.insert(0); state = try readObjectText()
            case "staleDate": try seen.insert(1); staleDate = try readOptionalNumber()
            case "relevanceScore": try seen.insert(2); relevanceScore = try readOptionalNumber()
            default: throw Mismatch()
            }
        }
        guard let state else { throw Mismatch() }
        return ActivityContent(canonicalText: state.text, nesting: state.nesting, shape: state.shape, staleDate: staleDate,
                               relevanceScore: relevanceScore ?? 0)
    }

    /// `Alert (title: string, body: string)`
    mutating func readAlert() throws(Mismatch) -> Alert {
        var seen = MembersSeen()
        var title: String?, body: String?
        try enterObject()
        while let member = try nextKey() {
            switch member {
            case "title": try seen.insert(0); title = try readString()
            case "body": try seen.insert(1); body = try readString()
            default: throw Mismatch()
            }
        }
        guard let title, let body else { throw Mismatch() }
        return Alert(title: title, body: body)
    }

    /// `DismissalPolicy (kind: (default, immediate, after), date: ?float)`; `after` without its
    /// date is left to the tree, which refuses it by name.
    mutating func readDismissalPolicy() throws(Mismatch) -> DismissalPolicy {
        var seen = MembersSeen()
        var kind: String?, date: Double?
        try enterObject()
        while let member = try nextKey() {
            switch member {
            case "kind": try seen.insert(0); kind = try readString()
            case "date": try seen.insert(1); date = try readOptionalNumber()
            default: throw Mismatch()
            }
        }
        switch kind {
        case "default": return .default
        case "immediate": return .immediate
        case "after": if let date { return .after(date) }
        default: break
        }
        throw Mismatch()
    }
}
