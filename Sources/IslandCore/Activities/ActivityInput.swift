import OrderedJSON

/// The fixed bounds of docs/design.md §3 on what a producer sends, besides its size: names
/// repeated in every message the activity appears in, and nesting that every message wraps deeper
/// still. A request is refused by them; a stored activity that breaks them (one accepted before
/// they existed) is not restored, since every presenter's stream would carry it.
enum ActivityInput {
    static func checkNames(type: String, key: String?) throws(IslandError) {
        let typeBytes = type.utf8.count
        guard typeBytes <= ActivityLimits.maximumTypeBytes else {
            throw .typeTooLong(limit: ActivityLimits.maximumTypeBytes, size: typeBytes)
        }
        if let keyBytes = key?.utf8.count, keyBytes > ActivityLimits.maximumKeyBytes {
            throw .keyTooLong(limit: ActivityLimits.maximumKeyBytes, size: keyBytes)
        }
    }

    static func checkStaleDate(of content: ActivityContent) throws(IslandError) {
        if let staleDate = content.staleDate, staleDate > ActivityLimits.latestDate {
            throw .implausibleStaleDate(given: staleDate, latest: ActivityLimits.latestDate)
        }
    }

    static func checkNesting(of attributes: JSONObject) throws(IslandError) {
        try check(depth: JSON.object(attributes).nestingDepth)
    }

    static func checkNesting(ofState content: ActivityContent) throws(IslandError) {
        try check(depth: content.stateNesting)
    }

    private static func check(depth: Int) throws(IslandError) {
        guard depth <= ActivityLimits.maximumNesting else {
            throw .nestingTooDeep(limit: ActivityLimits.maximumNesting, depth: depth)
        }
    }

    /// Every rule above for an activity read back from the store, as the decoding problem.
    static func checkStored(_ activity: Activity) throws(ActivityDecodingError) {
        do {
            try checkNames(type: activity.type, key: activity.key)
            try checkNesting(of: activity.attributes)
            try checkNesting(ofState: activity.content)
            try checkNesting(ofState: activity.deliveredContent)
        } catch {
            throw ActivityDecodingError(path: "", problem: "breaks a limit of this daemon: \(error)")
        }
    }
}
