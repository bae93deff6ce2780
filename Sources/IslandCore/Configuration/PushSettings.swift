/// The `[Push]` section: the MQTT broker servers reach this device through (DESIGN.md §12).
/// Without `Broker=` push is off, and asking for a push token is refused with `PushUnavailable`.
///
/// ```ini
/// [Push]
/// Broker=mqtts://broker.example.com:8883
/// ClientID=kitchen-42
/// CAFile=/etc/island/push-ca.pem
/// Username=kitchen-42
/// PasswordFile=/etc/island/push-password
/// ```
public struct PushSettings: Sendable, Hashable {
    /// `Broker=`: `mqtt://host[:port]` or `mqtts://host[:port]`, as text (the daemon reads it
    /// with the MQTT module, which checked it here already).
    public var broker: String?
    /// `ClientID=`: the device's MQTT client id and the device level of its tokens' topics;
    /// nil for the daemon's default (the machine id, plus the uid in the user scope).
    public var clientID: String?
    /// `TopicRoot=`: the levels every token's topic starts with.
    public var topicRoot: String = "island"
    /// `CAFile=`, `CertificateFile=`, `KeyFile=`: PEM files for TLS (`mqtts`). Without a CA
    /// file the system's trusted roots are used.
    public var caFile: String?
    public var certificateFile: String?
    public var keyFile: String?
    /// `Username=` and `PasswordFile=` (its first line is the password: never the password
    /// itself in a file every user may read).
    public var username: String?
    public var passwordFile: String?
    /// `MQTTVersion=`: `5` or `3.1.1`.
    public var mqttVersion: String = "5"
    /// `KeepAliveSec=`: seconds between pings while nothing else is said; a broker that
    /// stops answering is noticed within about twice this.
    public var keepAlive: Double = 60

    public init() {}

    public var isEnabled: Bool { broker != nil }
}

extension IslandConfiguration {
    /// The keys of `[Push]`.
    enum PushKey: String, CaseIterable {
        case broker = "Broker"
        case clientID = "ClientID"
        case topicRoot = "TopicRoot"
        case caFile = "CAFile"
        case certificateFile = "CertificateFile"
        case keyFile = "KeyFile"
        case username = "Username"
        case passwordFile = "PasswordFile"
        case mqttVersion = "MQTTVersion"
        case keepAliveSec = "KeepAliveSec"

        /// Reads `text` into `settings`; an empty value resets the key to its default.
        func apply(_ text: String, to settings: inout PushSettings) throws(ValueProblem) {
            let value: String? = text.isEmpty ? nil : text
            switch self {
            case .broker:
                if let value {
                    guard value.hasPrefix("mqtt://") || value.hasPrefix("mqtts://") else {
                        throw ValueProblem(reason: "expected mqtt://host[:port] or mqtts://host[:port]")
                    }
                }
                settings.broker = value
            case .clientID:
                if let value { try Self.checkLevel(value, what: "client id") }
                settings.clientID = value
            case .topicRoot:
                guard let value else {
                    settings.topicRoot = PushSettings().topicRoot
                    return
                }
                do {
                    try PushTopic.checkRoot(value)
                } catch {
                    throw ValueProblem(reason: error.reason)
                }
                settings.topicRoot = value
            case .caFile, .certificateFile, .keyFile, .passwordFile:
                if let value, !value.hasPrefix("/") { throw ValueProblem(reason: "expected an absolute path") }
                switch self {
                case .caFile: settings.caFile = value
                case .certificateFile: settings.certificateFile = value
                case .keyFile: settings.keyFile = value
                default: settings.passwordFile = value
                }
            case .username:
                settings.username = value
            case .mqttVersion:
                guard let value else {
                    settings.mqttVersion = PushSettings().mqttVersion
                    return
                }
                guard value == "5" || value == "3.1.1" else { throw ValueProblem(reason: "expected 5 or 3.1.1") }
                settings.mqttVersion = value
            case .keepAliveSec:
                guard let value else {
                    settings.keepAlive = PushSettings().keepAlive
                    return
                }
                guard let seconds = TimeSpan.seconds(value), seconds >= 5, seconds <= 65535 else {
                    throw ValueProblem(reason: "expected a time span from 5s to 18h (MQTT's limit)")
                }
                settings.keepAlive = seconds
            }
        }

        private static func checkLevel(_ value: String, what: String) throws(ValueProblem) {
            do {
                try PushTopic.checkLevel(value, what: what)
            } catch {
                throw ValueProblem(reason: error.reason)
            }
        }
    }
}
