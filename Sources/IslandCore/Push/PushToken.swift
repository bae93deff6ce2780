/// A push token: the MQTT topic a server publishes an activity's updates to (or, for a
/// push-to-start token, new activities of one type), `<root>/<device>/<app>/<secret>`.
///
/// The token *is* its topic, so the app's server needs nothing else to reach the device, and
/// a broker's ACL can confine each party by the levels before the secret: a device reads only
/// `<root>/<its client id>/#`, the backend of an app writes only `<root>/+/<app>/+`. The secret
/// is 128 bits from the system's cryptographic generator, so the token is also a capability
/// that cannot be guessed: a backend with rights on an app's topics still has to be given a
/// token to reach one of its activities.
///
/// Its feedback — what became of each push — is published to
/// `<root>/<device>/<app>/<feedback id>/feedback`, which the same ACLs give to the device to
/// write and the app's backend to read. The feedback id is a hash of the secret, not the
/// secret: a backend allowed to read every feedback topic of its app (`<root>/+/<app>/+/feedback`)
/// learns no token from their names, and so cannot reach an activity it was not given.
package struct PushToken: Sendable, Hashable, CustomStringConvertible {
    /// The levels before the device's: `island` unless configured.
    package let root: String
    /// The device's MQTT client id.
    package let device: String
    package let app: String
    /// 32 lowercase hexadecimal digits.
    package let secret: String

    /// The topic a server publishes to.
    package var topic: String { "\(root)/\(device)/\(app)/\(secret)" }
    /// The token's public name: the first 16 bytes of the SHA-256 of its secret (as its 32
    /// ASCII digits), in lowercase hexadecimal. Whoever holds the token works it out
    /// (`printf %s SECRET | sha256sum | cut -c1-32`); whoever knows it cannot work out the token.
    package var feedbackID: String {
        let digest = SHA256.hash(Array(secret.utf8)).prefix(Self.secretBytes)
        var id = ""
        id.reserveCapacity(Self.secretBytes * 2)
        for byte in digest {
            id.append(Self.hexDigits[Int(byte >> 4)])
            id.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return id
    }
    /// Where the outcome of each push is published: named by `feedbackID`, never by the secret.
    package var feedbackTopic: String { "\(root)/\(device)/\(app)/\(feedbackID)/\(Self.feedbackLevel)" }

    /// The feedback topic of the token whose topic is `topic`; nil when it is no token.
    package static func feedbackTopic(of topic: String) -> String? {
        (try? PushToken(topic))?.feedbackTopic
    }
    package var description: String { topic }

    package static let feedbackLevel = "feedback"
    /// Bytes of randomness in a secret: 128 bits.
    package static let secretBytes = 16

    /// A new token for `app` on `device` whose secret is `randomBytes` (`secretBytes` of them,
    /// which the daemon draws from the kernel's `getrandom`, through `SystemRandomNumberGenerator`).
    package static func make(root: String, device: String, app: String, randomBytes: [UInt8]) throws(PushTopicError) -> PushToken {
        precondition(randomBytes.count == secretBytes, "a push token's secret is \(secretBytes) bytes")
        try PushTopic.checkRoot(root)
        try PushTopic.checkLevel(device, what: "device id")
        try PushTopic.checkLevel(app, what: "app id")
        var secret = ""
        secret.reserveCapacity(secretBytes * 2)
        for byte in randomBytes {
            secret.append(Self.hexDigits[Int(byte >> 4)])
            secret.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return PushToken(root: root, device: device, app: app, secret: secret)
    }

    /// Reads a token from its text (its topic), for a root that may itself have several
    /// levels: the last three are the device, the app and the secret.
    package init(_ text: String) throws(PushTopicError) {
        let levels = text.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 4 else { throw PushTopicError(topic: text, reason: "a token has a root, a device, an app and a secret") }
        let root = levels.dropLast(3).joined(separator: "/")
        try self.init(
            root: root, device: String(levels[levels.count - 3]), app: String(levels[levels.count - 2]),
            secret: String(levels[levels.count - 1]), checked: ())
    }

    private init(root: String, device: String, app: String, secret: String, checked: Void) throws(PushTopicError) {
        try PushTopic.checkRoot(root)
        try PushTopic.checkLevel(device, what: "device id")
        try PushTopic.checkLevel(app, what: "app id")
        guard secret.utf8.count == Self.secretBytes * 2, secret.utf8.allSatisfy({ Self.hexDigitBytes.contains($0) }) else {
            throw PushTopicError(topic: "\(root)/\(device)/\(app)/\(secret)", reason: "the secret must be \(Self.secretBytes * 2) lowercase hexadecimal digits")
        }
        self.init(root: root, device: device, app: app, secret: secret)
    }

    private init(root: String, device: String, app: String, secret: String) {
        (self.root, self.device, self.app, self.secret) = (root, device, app, secret)
    }

    private static let hexDigits = Array("0123456789abcdef")
    private static let hexDigitBytes = Set("0123456789abcdef".utf8)
}

/// A topic, or a level of one, that MQTT's grammar or the token's shape does not allow.
package struct PushTopicError: Error, Sendable, Hashable, CustomStringConvertible {
    package var topic: String
    package var reason: String

    package var description: String { "invalid push topic '\(topic)': \(reason)" }
}

/// The rules a token's levels follow, so that every token is a topic a broker accepts to
/// publish to and to subscribe with, and ACL patterns can match level by level.
package enum PushTopic {
    /// Bytes in one level: an MQTT topic may have 65,535 in all, and every message the daemon
    /// publishes repeats it.
    package static let maximumLevelBytes = 255

    /// A device id or an app id: one non-empty level without the wildcards `+` and `#`, the
    /// separator `/`, or NUL — any of which would let the token address other topics, or make
    /// it no topic at all.
    package static func checkLevel(_ level: String, what: String) throws(PushTopicError) {
        guard !level.isEmpty else { throw PushTopicError(topic: level, reason: "the \(what) is empty") }
        guard level.utf8.count <= maximumLevelBytes else {
            throw PushTopicError(topic: level, reason: "the \(what) is longer than \(maximumLevelBytes) bytes")
        }
        if let bad = level.unicodeScalars.first(where: { "/+#\u{0}".unicodeScalars.contains($0) }) {
            throw PushTopicError(topic: level, reason: "the \(what) contains '\(bad.escaped(asASCII: true))', which MQTT topics reserve")
        }
    }

    /// The root: one or more levels as above; it may not start with `$`, which brokers keep
    /// for their own topics (`$SYS`) and never match with a wildcard.
    package static func checkRoot(_ root: String) throws(PushTopicError) {
        guard !root.hasPrefix("$") else { throw PushTopicError(topic: root, reason: "a root starting with '$' names a broker's own topics") }
        for level in root.split(separator: "/", omittingEmptySubsequences: false) {
            try checkLevel(String(level), what: "root level")
        }
    }
}
