/// How an `MQTTClient` reaches its broker and what session it keeps there.
public struct MQTTConfiguration: Sendable, Hashable, Codable {
    public enum ProtocolVersion: String, Sendable, Hashable, Codable {
        /// MQTT 5: the session's lifetime and the largest packet the client takes are told to
        /// the broker (`sessionExpiry`, `maximumPacketSize`).
        case v5 = "5"
        /// MQTT 3.1.1, for brokers without 5: a persistent session lasts as long as the broker
        /// keeps it, and packet sizes are bounded only by the broker's configuration.
        case v311 = "3.1.1"
    }

    /// Files for TLS, in PEM. Without a CA file or directory, the system's trusted roots.
    public struct TLS: Sendable, Hashable, Codable {
        public var caFile: String?
        public var caDirectory: String?
        /// A client certificate and its key (unencrypted), for brokers that authenticate by
        /// certificate.
        public var certificateFile: String?
        public var keyFile: String?

        public init(caFile: String? = nil, caDirectory: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
            self.caFile = caFile
            self.caDirectory = caDirectory
            self.certificateFile = certificateFile
            self.keyFile = keyFile
        }

        /// A client certificate comes with its key, as TLS sends them: one without the other
        /// is a mistake libmosquitto reports only as "Invalid function arguments provided".
        public var pairsCertificateWithKey: Bool { (certificateFile == nil) == (keyFile == nil) }

        /// The most of one of these files a caller reads to check it before libmosquitto does
        /// (the daemon's `[Push]`, `island push`): a system's whole CA bundle is under 1 MiB.
        public static let maximumFileBytes = 4 << 20
    }

    /// The broker, or the first node of a cluster.
    public var broker: MQTTBrokerAddress
    /// The cluster's other nodes: after a failed attempt or a lost connection the client tries
    /// the next address of `brokers`, round the list, so a node's death moves it to the next.
    /// A cluster keeps sessions and retained messages on every node (NATS's in JetStream), so
    /// the session and the channels' latest state are there too.
    public var otherBrokers: [MQTTBrokerAddress]
    /// Every address, in the order they are tried.
    public var brokers: [MQTTBrokerAddress] { [broker] + otherBrokers }
    /// The client id, which is also the identity a broker's ACL patterns (`%c`) name.
    public var clientID: String
    public var username: String?
    public var password: String?
    /// For an `mqtts` broker; `mqtt` brokers ignore it.
    public var tls: TLS
    /// With a persistent session the broker keeps the client's subscriptions and queues what
    /// they receive (QoS 1) while the client is away.
    public var persistentSession: Bool
    /// MQTT 5: how long the broker keeps the session after a disconnection, in seconds;
    /// `UInt32.max` for as long as it will.
    public var sessionExpiry: UInt32
    /// MQTT 5: the largest packet the broker may send; it drops larger messages instead.
    public var maximumPacketSize: UInt32
    /// Seconds between keep-alive pings while nothing else is said.
    public var keepAlive: Int
    public var protocolVersion: ProtocolVersion
    public var backoff: ReconnectBackoff
    /// Publishes at QoS 1 waiting for the broker's acknowledgement, beyond which `publish`
    /// refuses: what the client holds for a slow or absent broker stays bounded.
    public var maximumUnacknowledgedPublishes: Int
    /// The QoS of every subscription: 1 (what a device's session needs, so the broker queues
    /// what arrives while it is away), or 0 for a client that only reads what is retained and
    /// what comes while it is connected — which a broker serves without a queue (NATS: without a
    /// JetStream consumer, which a cluster electing leaders may take seconds to make).
    public var subscriptionQoS = 1

    public init(
        broker: MQTTBrokerAddress, otherBrokers: [MQTTBrokerAddress] = [], clientID: String, username: String? = nil, password: String? = nil,
        tls: TLS = TLS(), persistentSession: Bool = true, sessionExpiry: UInt32 = .max,
        maximumPacketSize: UInt32 = 256 * 1024, keepAlive: Int = 60, protocolVersion: ProtocolVersion = .v5,
        backoff: ReconnectBackoff = ReconnectBackoff(), maximumUnacknowledgedPublishes: Int = 1024
    ) {
        self.broker = broker
        self.otherBrokers = otherBrokers
        self.clientID = clientID
        self.username = username
        self.password = password
        self.tls = tls
        self.persistentSession = persistentSession
        self.sessionExpiry = sessionExpiry
        self.maximumPacketSize = maximumPacketSize
        self.keepAlive = keepAlive
        self.protocolVersion = protocolVersion
        self.backoff = backoff
        self.maximumUnacknowledgedPublishes = maximumUnacknowledgedPublishes
    }
}
