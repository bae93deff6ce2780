package import OrderedJSON
import OrderedCollections

extension ActivityContent {
    /// `{"state": {…}, "staleDate"?: 1.0, "relevanceScore": 0.0}`, the state from its text.
    package func writeJSON(to text: inout JSONText) {
        text.openObject()
        text.key("state")
        text.value(text: stateText)
        if let staleDate { text.member("staleDate", double: staleDate) }
        text.member("relevanceScore", double: relevanceScore)
        text.closeObject()
    }

    /// Reads `json`; `staleDate` and `relevanceScore` may be missing (nil and 0).
    package init(json: JSONObject) throws(ActivityDecodingError) {
        try self.init(ActivityJSONReader(json))
    }

    init(_ reader: ActivityJSONReader) throws(ActivityDecodingError) {
        self.init(
            state: try reader.object("state"),
            staleDate: try reader.optionalDouble("staleDate"),
            relevanceScore: try reader.optionalDouble("relevanceScore") ?? 0
        )
    }
}

extension Activity {
    /// `"content":{…},"deliveredContent":{…}`, as the stored document and a producer's
    /// reply both carry them. Until a throttled update waits for its delivery the two are one
    /// content, whose text is then copied rather than written twice.
    package func writeContents(to text: inout JSONText) {
        text.key("content")
        let start = text.count
        content.writeJSON(to: &text)
        let written = start..<text.count
        text.key("deliveredContent")
        if deliveredContent.isSame(as: content) {
            text.value(repeating: written)
        } else {
            deliveredContent.writeJSON(to: &text)
        }
    }

    /// The whole activity as the daemon stores it, as compact JSON text: every update
    /// stores one. `init(json:)` reads it back exactly. Optional members are left out when nil.
    package func writeJSON(to text: inout JSONText) {
        openObject(in: &text)
        if let uid { text.member("uid", int: Int(uid)) }
        writeContents(to: &text)
        text.member("deliveredAt", double: deliveredAt)
        text.member("state", string: state.rawValue)
        if let endReason { text.member("endReason", string: endReason.rawValue) }
        if let key { text.member("key", string: key) }
        text.member("ownerGonePolicy", string: ownerGonePolicy.rawValue)
        writeCreatedAt(to: &text)
        text.member("updatedAt", double: updatedAt)
        if let endedAt { text.member("endedAt", double: endedAt) }
        if let dismissAt { text.member("dismissAt", double: dismissAt) }
        if let lastTimestamp { text.member("lastTimestamp", double: lastTimestamp) }
        if let nextDeliveryAt { text.member("nextDeliveryAt", double: nextDeliveryAt) }
        if let ownerGraceEndsAt { text.member("ownerGraceEndsAt", double: ownerGraceEndsAt) }
        if let schedule {
            text.key("schedule")
            text.openObject()
            text.member("date", double: schedule.date)
            text.member("startsAt", double: schedule.startsAt)
            if let alert = schedule.alert {
                text.member("alert", .object(["title": .string(alert.title), "body": .string(alert.body)]))
            }
            if let late = schedule.late { text.member("late", string: late.rawValue) }
            text.closeObject()
        }
        text.closeObject()
    }

    /// `writeJSON`'s text on its own: the document the store keeps.
    package var jsonText: [UInt8] {
        var text = JSONText(capacity: 1024)
        writeJSON(to: &text)
        return text.bytes
    }

    /// The same as a tree.
    package var json: JSONObject {
        // The writer only writes JSON objects.
        try! JSONParser.parse(jsonText).objectValue!
    }

    package init(json: JSONObject) throws(ActivityDecodingError) {
        try self.init(ActivityJSONReader(json))
    }

    init(_ reader: ActivityJSONReader) throws(ActivityDecodingError) {
        self.init(
            id: try reader.string("id"), owner: ActivityOwner(app: try reader.string("app"), uid: try Self.uid(reader)),
            sourceApp: try reader.optionalString("sourceApp"), type: try reader.string("type"),
            attributes: try reader.object("attributes"), key: try reader.optionalString("key"),
            ownerGonePolicy: try reader.optionalEnumeration("ownerGonePolicy", as: OwnerGonePolicy.self) ?? .keep,
            content: try ActivityContent(reader.reader("content")), state: .active, now: try reader.double("createdAt")
        )
        deliveredContent = try ActivityContent(reader.reader("deliveredContent"))
        deliveredAt = try reader.double("deliveredAt")
        state = try reader.enumeration("state", as: ActivityState.self)
        endReason = try reader.optionalEnumeration("endReason", as: EndReason.self)
        updatedAt = try reader.double("updatedAt")
        endedAt = try reader.optionalDouble("endedAt")
        dismissAt = try reader.optionalDouble("dismissAt")
        lastTimestamp = try reader.optionalDouble("lastTimestamp")
        nextDeliveryAt = try reader.optionalDouble("nextDeliveryAt")
        ownerGraceEndsAt = try reader.optionalDouble("ownerGraceEndsAt")
        if reader.optional("schedule") != nil {
            let schedule = try reader.reader("schedule")
            var alert: Alert?
            if schedule.optional("alert") != nil {
                let alertReader = try schedule.reader("alert")
                alert = Alert(title: try alertReader.string("title"), body: try alertReader.string("body"))
            }
            self.schedule = ScheduledStart(
                date: try schedule.double("date"), startsAt: try schedule.double("startsAt"), alert: alert,
                late: try schedule.optionalEnumeration("late", as: LateStart.self))
        }
        try ActivityInput.checkStored(self)
    }

    /// The owner's uid; missing in the user scope, and in what a daemon before owners stored.
    private static func uid(_ reader: ActivityJSONReader) throws(ActivityDecodingError) -> UInt32? {
        guard let value = reader.optional("uid") else { return nil }
        guard let number = value.intValue, let uid = UInt32(exactly: number) else {
            throw ActivityDecodingError(path: reader.pathOf("uid"), problem: "expected a uid, found \(value)")
        }
        return uid
    }
}
