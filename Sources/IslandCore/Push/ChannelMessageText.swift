import OrderedJSON

extension ChannelMessage {
    /// A message's request and `feedback` read straight from its text, in one pass with no
    /// tree, as a producer's `Update` is (`JSONReader`): a fan-out's device reads every message
    /// of the channel, and the tree's parse and walk were most of its decode. Nil for anything
    /// this reader does not take as it stands — a member it does not know (APNs' `sound`, a
    /// start's `attributes`), a key with escapes, a duplicate, a value of another kind or out
    /// of its range, invalid JSON — which `decode` then reads through the tree, accepting what
    /// the tree allows and refusing the rest by name. So it accepts only what the tree's
    /// reading (`PushPayload.decode`) would, with the same values.
    package static func readText(_ bytes: [UInt8]) -> (request: PushRequest, wantsFeedback: Bool)? {
        bytes.withUnsafeBytes { buffer in
            var reader = JSONReader(buffer, maximumDepth: PushPayload.maximumDepth)
            return try? readTop(&reader)
        }
    }

    private static func readTop(_ reader: inout JSONReader) throws(JSONReader.Mismatch) -> (request: PushRequest, wantsFeedback: Bool) {
        var seen = JSONReader.MembersSeen()
        var request: PushRequest?
        var wantsFeedback = false
        try reader.enterObject()
        while let key = try reader.nextKey() {
            switch key {
            case "aps":
                try seen.insert(0)
                request = try readAPS(&reader)
            case "feedback":
                try seen.insert(1)
                // `null` is the member's absence, as the tree's reading takes it.
                if !reader.readNull() { wantsFeedback = try reader.readBool() }
            default:
                throw JSONReader.Mismatch()
            }
        }
        try reader.finish()
        guard let request else { throw JSONReader.Mismatch() }
        return (request, wantsFeedback)
    }

    /// `aps` of an `update` or an `end`, every member checked as `PushPayload.decode` checks it.
    private static func readAPS(_ reader: inout JSONReader) throws(JSONReader.Mismatch) -> PushRequest {
        var seen = JSONReader.MembersSeen()
        var event: PushRequest.Event?
        var timestamp: Double?
        var state: (text: [UInt8], nesting: Int, shape: [UInt8])?
        var staleDate: Double?
        var relevance: Double?
        var alert: Alert?
        var priority: PushPriority?
        var expiration: Double?
        var sequence: Int?
        var dismissalDate: Double?
        try reader.enterObject()
        while let key = try reader.nextKey() {
            // A duplicate is the tree's to refuse, `null` or not; `null` is the member's absence.
            let member: Int =
                switch key {
                case "event": 0
                case "timestamp": 1
                case "content-state": 2
                case "stale-date": 3
                case "relevance-score": 4
                case "alert": 5
                case "priority": 6
                case "expiration": 7
                case "sequence": 8
                case "dismissal-date": 9
                default: throw JSONReader.Mismatch()
                }
            try seen.insert(member)
            guard !reader.readNull() else { continue }
            switch member {
            case 0:
                switch try reader.readString() {
                case "update": event = .update
                case "end": event = .end
                default: throw JSONReader.Mismatch()
                }
            case 1:
                let value = try reader.readNumber()
                guard value > 0 else { throw JSONReader.Mismatch() }
                timestamp = value
            case 2: state = try reader.readObjectText()
            case 3: staleDate = try reader.readNumber()
            case 4: relevance = try reader.readNumber()
            case 5: alert = try readAlert(&reader)
            case 6:
                guard let known = PushPriority(rawValue: Int(exactly: try reader.readNumber()) ?? -1) else { throw JSONReader.Mismatch() }
                priority = known
            case 7:
                let value = try reader.readNumber()
                guard value >= 0 else { throw JSONReader.Mismatch() }
                expiration = value
            case 8:
                let value = try reader.readNumber()
                guard value >= 1, value <= 9_007_199_254_740_991, value.rounded() == value else { throw JSONReader.Mismatch() }
                sequence = Int(value)
            default: dismissalDate = try reader.readNumber()
            }
        }
        guard let event, let timestamp else { throw JSONReader.Mismatch() }
        var request = PushRequest(event: event, timestamp: timestamp)
        if let state {
            request.content = ActivityContent(
                canonicalText: state.text, nesting: state.nesting, shape: state.shape, staleDate: staleDate,
                relevanceScore: relevance ?? 0)
        } else if event != .end {
            throw JSONReader.Mismatch()
        }
        request.alert = alert
        if let priority { request.priority = priority }
        request.expiration = expiration
        request.sequence = sequence
        if event == .end { request.dismissalDate = dismissalDate }
        return request
    }

    /// `alert` as a string (the body) or an object of `title` and `body` alone, not both empty.
    private static func readAlert(_ reader: inout JSONReader) throws(JSONReader.Mismatch) -> Alert {
        if let body = try? reader.readString() { return Alert(title: "", body: body) }
        var seen = JSONReader.MembersSeen()
        var (title, body) = ("", "")
        try reader.enterObject()
        while let key = try reader.nextKey() {
            switch key {
            case "title":
                try seen.insert(0)
                if !reader.readNull() { title = try reader.readString() }
            case "body":
                try seen.insert(1)
                if !reader.readNull() { body = try reader.readString() }
            default:
                throw JSONReader.Mismatch()
            }
        }
        guard !title.isEmpty || !body.isEmpty else { throw JSONReader.Mismatch() }
        return Alert(title: title, body: body)
    }
}
