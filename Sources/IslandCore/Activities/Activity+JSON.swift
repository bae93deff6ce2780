import IslandJSON

extension ActivityContent {
    /// `{"state": {…}, "staleDate"?: 1.0, "relevanceScore": 0.0}`.
    public var json: JSONObject {
        var object: JSONObject = ["state": .object(state)]
        object.setUnlessNil("staleDate", staleDate)
        object["relevanceScore"] = .double(relevanceScore)
        return object
    }

    /// Reads `json`; `staleDate` and `relevanceScore` may be missing (nil and 0).
    public init(json: JSONObject) throws(ActivityDecodingError) {
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
    /// The whole activity as the daemon stores it; `init(json:)` reads it back exactly.
    /// Optional members are omitted when nil.
    public var json: JSONObject {
        var object: JSONObject = [
            "id": .string(id),
            "app": .string(app),
            "type": .string(type),
            "attributes": .object(attributes),
            "content": .object(content.json),
            "deliveredContent": .object(deliveredContent.json),
            "deliveredAt": .double(deliveredAt),
            "state": .string(state.rawValue),
        ]
        object.setUnlessNil("endReason", endReason?.rawValue)
        object.setUnlessNil("key", key)
        object["ownerGonePolicy"] = .string(ownerGonePolicy.rawValue)
        object["createdAt"] = .double(createdAt)
        object["updatedAt"] = .double(updatedAt)
        object.setUnlessNil("endedAt", endedAt)
        object.setUnlessNil("dismissAt", dismissAt)
        object.setUnlessNil("lastTimestamp", lastTimestamp)
        object.setUnlessNil("nextDeliveryAt", nextDeliveryAt)
        object.setUnlessNil("ownerGraceEndsAt", ownerGraceEndsAt)
        return object
    }

    public init(json: JSONObject) throws(ActivityDecodingError) {
        try self.init(ActivityJSONReader(json))
    }

    init(_ reader: ActivityJSONReader) throws(ActivityDecodingError) {
        self.init(
            id: try reader.string("id"), app: try reader.string("app"), type: try reader.string("type"),
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
    }
}
