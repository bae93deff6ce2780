import Foundation
import IslandCore
import Logging
import MQTT

/// The engine's line to the broker over the MQTT client: subscriptions are kept by the client
/// across reconnections, feedback is published at QoS 1.
struct MQTTPushLink: PushBroker {
    let client: MQTTClient
    let logger: Logger

    func subscribe(_ topic: String) {
        do {
            try client.subscribe(topic)
        } catch {
            logger.error("cannot subscribe to a push token's topic", metadata: ["error": "\(error)"])
        }
    }

    func unsubscribe(_ topic: String) {
        do {
            try client.unsubscribe(topic)
        } catch {
            logger.error("cannot unsubscribe from a push token's topic", metadata: ["error": "\(error)"])
        }
    }

    /// Feedback is lost, not queued, while the broker is away or slow: the pushes it answers
    /// came through the same connection, and a server that hears nothing sends again.
    func publish(_ topic: String, payload: [UInt8]) {
        do {
            try client.publish(topic, payload: payload, qos: 1)
        } catch {
            logger.notice("push feedback not published", metadata: ["error": "\(error)"])
        }
    }
}

extension MQTTConfiguration {
    /// The daemon's connection as `[Push]` describes it. `device` is the client id.
    ///
    /// - Throws: a message naming what is wrong (the URL, the password file).
    init(_ settings: PushSettings, device: String) throws(IslandDaemon.StartError) {
        guard let url = settings.broker else { throw .configuration("[Push] has no Broker=") }
        let broker: MQTTBrokerAddress
        do {
            broker = try MQTTBrokerAddress(url: url)
        } catch {
            throw .configuration("[Push] Broker=: \(error)")
        }
        var password: String?
        if let file = settings.passwordFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw .configuration("[Push] PasswordFile=\(file) cannot be read")
            }
            password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        }
        self.init(broker: broker, clientID: device, username: settings.username, password: password,
                  tls: TLS(caFile: settings.caFile, certificateFile: settings.certificateFile, keyFile: settings.keyFile),
                  persistentSession: true, keepAlive: Int(settings.keepAlive),
                  protocolVersion: settings.mqttVersion == "3.1.1" ? .v311 : .v5)
    }

    /// `ClientID=` when set; otherwise the machine's id (`/etc/machine-id`), with the uid in
    /// the user scope, where every user of the machine runs a daemon of their own.
    static func defaultDevice(scope: DaemonScope) -> String {
        let machine = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines).filter(\.isHexDigit)
        let base = machine.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.hostName
        return scope == .system ? base : "\(base)-\(getuid())"
    }
}
