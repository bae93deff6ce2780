/// The `[Push]` section: the MQTT broker servers reach this device through (docs/design.md §12).
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
package struct PushSettings: Sendable, Hashable {
    /// `Broker=`: `mqtt://host[:port]` or `mqtts://host[:port]`, as text (the daemon reads it
    /// with the MQTT module, which checked it here already); or several, separated by spaces,
    /// the nodes of one cluster: the daemon connects to the first, and to the next in turn
    /// whenever a connection fails or is lost.
    package var broker: String?
    /// `ClientID=`: the device's MQTT client id and the device level of its tokens' topics;
    /// nil for the daemon's default (the machine id, plus the uid in the user scope).
    package var clientID: String?
    /// `TopicRoot=`: the levels every token's topic starts with.
    package var topicRoot: String = "island"
    /// `CAFile=`, `CertificateFile=`, `KeyFile=`: PEM files for TLS (`mqtts`). Without a CA
    /// file the system's trusted roots are used.
    package var caFile: String?
    package var certificateFile: String?
    package var keyFile: String?
    /// `Username=` and `PasswordFile=` (its first line is the password: never the password
    /// itself in a file every user may read).
    package var username: String?
    package var passwordFile: String?
    /// `MQTTVersion=`: `5` or `3.1.1`.
    package var mqttVersion: String = "5"
    /// `KeepAliveSec=`: seconds between pings while nothing else is said; a broker that
    /// stops answering is noticed within about twice this.
    package var keepAlive: Double = 60
    /// `SessionExpirySec=`: how long the broker keeps this device's sessions (their
    /// subscriptions and the pushes queued for them) after the device disconnects, in
    /// seconds (MQTT 5's session expiry interval); nil for never (`infinity`). A week by
    /// default: a device gone for good leaves no queue at the broker for ever, and one
    /// back within the week misses nothing.
    package var sessionExpiry: UInt32? = PushSettings.defaultSessionExpiry
    package static let defaultSessionExpiry: UInt32? = 7 * 86400
    /// The shortest `SessionExpirySec=`: a session must outlive a reconnection.
    package static let minimumSessionExpiry: UInt32 = 60
    /// `LinkHeadroom=`: what the MQTT link process may allocate beyond what it holds at its
    /// start and its sessions' share, which bounds the largest packet from the broker it can
    /// take in (about half of it); nil for the daemon's default (32 MiB).
    package var linkHeadroom: Int?
    /// From 4 times the largest packet the daemon asks for (256 KiB), to far more than any push.
    package static let linkHeadroomRange = (1 << 20)...(1 << 30)

    package init() {}

    package var isEnabled: Bool { broker != nil }
}
