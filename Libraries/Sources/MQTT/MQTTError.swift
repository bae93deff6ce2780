/// What the MQTT client refuses or could not do.
public enum MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidBrokerURL(String, reason: String)
    /// A setting libmosquitto refused (a TLS file it cannot read, a client id it rejects…).
    case invalidConfiguration(String)
    /// A topic that is not a valid topic name to publish to, or filter to subscribe with.
    case invalidTopic(String)
    /// The client is not connected to its broker now.
    case notConnected
    /// Too many publishes are waiting for the broker's acknowledgement.
    case backlogFull(limit: Int)
    /// libmosquitto failed with its error code.
    case library(code: Int32, message: String)

    public var description: String {
        switch self {
        case .invalidBrokerURL(let url, let reason): "invalid broker URL \(url): \(reason)"
        case .invalidConfiguration(let message): message
        case .invalidTopic(let topic): "invalid MQTT topic \(topic)"
        case .notConnected: "not connected to the broker"
        case .backlogFull(let limit): "\(limit) publishes are waiting for the broker's acknowledgement"
        case .library(_, let message): message
        }
    }
}
