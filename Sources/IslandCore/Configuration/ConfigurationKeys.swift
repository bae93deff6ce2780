extension IslandConfiguration {
    /// The keys of `[Limits]` and `[App:<app-id>]`: one per field of `ActivityLimits`.
    enum LimitKey: String, CaseIterable {
        case maxPayloadBytes = "MaxPayloadBytes"
        case maxActivitiesPerApp = "MaxActivitiesPerApp"
        case maxActivities = "MaxActivities"
        case maxEndedActivitiesPerApp = "MaxEndedActivitiesPerApp"
        case maxEndedActivities = "MaxEndedActivities"
        case startBudget = "StartBudget"
        case startBudgetWindowSec = "StartBudgetWindowSec"
        case updatesPerSecond = "UpdatesPerSecond"
        case frequentUpdatesPerSecond = "FrequentUpdatesPerSecond"
        case alertBudget = "AlertBudget"
        case alertBudgetWindowSec = "AlertBudgetWindowSec"
        case maxActiveSec = "MaxActiveSec"
        case maxDismissalDelaySec = "MaxDismissalDelaySec"
        case ownerGoneGraceSec = "OwnerGoneGraceSec"
        case pushBudget = "PushBudget"
        case frequentPushBudget = "FrequentPushBudget"
        case pushBudgetWindowSec = "PushBudgetWindowSec"

        var kind: ValueKind {
            switch self {
            case .maxPayloadBytes: .size
            case .maxActivitiesPerApp, .maxActivities, .startBudget: .count(minimum: 1)
            // 0 is meaningful: no alerting updates at all for the app; ended activities
            // dismissed as they end.
            case .alertBudget, .maxEndedActivitiesPerApp, .maxEndedActivities, .pushBudget, .frequentPushBudget: .count(minimum: 0)
            case .updatesPerSecond, .frequentUpdatesPerSecond: .rate
            case .startBudgetWindowSec, .alertBudgetWindowSec, .maxActiveSec, .pushBudgetWindowSec: .duration(allowsZero: false)
            // 0 is meaningful for both: dismiss at once after ending; turn stale as soon as
            // the producer is gone.
            case .maxDismissalDelaySec, .ownerGoneGraceSec: .duration(allowsZero: true)
            }
        }

        /// Caps every app together, so an `[App:…]` section cannot set it.
        var isGlobalOnly: Bool { self == .maxActivities || self == .maxEndedActivities }

        func apply(_ value: Value, to limits: inout ActivityLimits) {
            switch (self, value) {
            case (.maxPayloadBytes, .integer(let v)): limits.maximumPayloadBytes = v
            case (.maxActivitiesPerApp, .integer(let v)): limits.maximumActivitiesPerApp = v
            case (.maxActivities, .integer(let v)): limits.maximumActivities = v
            case (.maxEndedActivitiesPerApp, .integer(let v)): limits.maximumEndedActivitiesPerApp = v
            case (.maxEndedActivities, .integer(let v)): limits.maximumEndedActivities = v
            case (.startBudget, .integer(let v)): limits.startBudget = v
            case (.startBudgetWindowSec, .number(let v)): limits.startBudgetWindow = v
            case (.updatesPerSecond, .number(let v)): limits.updatesPerSecond = v
            case (.frequentUpdatesPerSecond, .number(let v)): limits.frequentUpdatesPerSecond = v
            case (.alertBudget, .integer(let v)): limits.alertBudget = v
            case (.alertBudgetWindowSec, .number(let v)): limits.alertBudgetWindow = v
            case (.maxActiveSec, .number(let v)): limits.maximumActiveDuration = v
            case (.maxDismissalDelaySec, .number(let v)): limits.maximumDismissalDelay = v
            case (.ownerGoneGraceSec, .number(let v)): limits.ownerGoneGracePeriod = v
            case (.pushBudget, .integer(let v)): limits.pushBudget = v
            case (.frequentPushBudget, .integer(let v)): limits.frequentPushBudget = v
            case (.pushBudgetWindowSec, .number(let v)): limits.pushBudgetWindow = v
            default: preconditionFailure("\(rawValue)= read as \(value), which its kind never produces")
            }
        }
    }

    /// The keys of `[Daemon]`.
    enum DaemonKey: String, CaseIterable {
        case idleExitSec = "IdleExitSec"
        case maxConnections = "MaxConnections"
        case maxConnectionsPerUser = "MaxConnectionsPerUser"
        case maxMessageSize = "MaxMessageSize"
        case sandboxedPresenters = "SandboxedPresenters"
        case sandboxedAdmins = "SandboxedAdmins"
        case hideWhileSharing = "HideWhileSharing"
        case expandedSec = "ExpandedSec"
        case alertSec = "AlertSec"

        var kind: ValueKind {
            switch self {
            case .idleExitSec: .duration(allowsZero: true)
            case .maxConnections, .maxConnectionsPerUser: .count(minimum: 1)
            case .maxMessageSize: .size
            case .sandboxedPresenters, .sandboxedAdmins: .appIDs
            case .hideWhileSharing: .boolean
            case .expandedSec, .alertSec: .duration(allowsZero: false)
            }
        }

        /// Sets the key's field, or clears it (back to the daemon's built-in value) for nil.
        func apply(_ value: Value?, to settings: inout DaemonSettings) {
            switch (self, value) {
            case (.idleExitSec, .number(let v)): settings.idleExit = v
            case (.idleExitSec, nil): settings.idleExit = nil
            case (.maxConnections, .integer(let v)): settings.maxConnections = v
            case (.maxConnections, nil): settings.maxConnections = nil
            case (.maxConnectionsPerUser, .integer(let v)): settings.maxConnectionsPerUser = v
            case (.maxConnectionsPerUser, nil): settings.maxConnectionsPerUser = nil
            case (.maxMessageSize, .integer(let v)): settings.maxMessageSize = v
            case (.maxMessageSize, nil): settings.maxMessageSize = nil
            // Lists add up over assignments and files, as systemd's do; an empty one clears.
            case (.sandboxedPresenters, .appIDs(let ids)): settings.sandboxedPresenters.formUnion(ids)
            case (.sandboxedPresenters, nil): settings.sandboxedPresenters = []
            case (.sandboxedAdmins, .appIDs(let ids)): settings.sandboxedAdmins.formUnion(ids)
            case (.sandboxedAdmins, nil): settings.sandboxedAdmins = []
            case (.hideWhileSharing, .boolean(let v)): settings.hideWhileSharing = v
            case (.hideWhileSharing, nil): settings.hideWhileSharing = true
            case (.expandedSec, .number(let v)): settings.expandedFor = v
            case (.expandedSec, nil): settings.expandedFor = nil
            case (.alertSec, .number(let v)): settings.alertFor = v
            case (.alertSec, nil): settings.alertFor = nil
            default: preconditionFailure("\(rawValue)= read as \(String(describing: value)), which its kind never produces")
            }
        }
    }

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
        case linkHeadroom = "LinkHeadroom"
        case sessionExpirySec = "SessionExpirySec"

        /// Reads `text` into `settings`; an empty value resets the key to its default.
        func apply(_ text: String, to settings: inout PushSettings) throws(ValueProblem) {
            let value: String? = text.isEmpty ? nil : text
            switch self {
            case .broker:
                // One URL, or several separated by spaces: the nodes of a cluster, tried in order.
                for url in (value ?? "").split(separator: " ") where !(url.hasPrefix("mqtt://") || url.hasPrefix("mqtts://")) {
                    throw ValueProblem(reason: "expected mqtt://host[:port] or mqtts://host[:port], or several separated by spaces")
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
            case .linkHeadroom:
                guard let value else {
                    settings.linkHeadroom = nil
                    return
                }
                guard case .integer(let bytes) = try? IslandConfiguration.read(value, as: .size),
                    bytes >= PushSettings.linkHeadroomRange.lowerBound, bytes <= PushSettings.linkHeadroomRange.upperBound
                else {
                    throw ValueProblem(reason: "expected a size from 1M to 1G")
                }
                settings.linkHeadroom = bytes
            case .sessionExpirySec:
                guard let value else {
                    settings.sessionExpiry = PushSettings.defaultSessionExpiry
                    return
                }
                if value == "infinity" {
                    settings.sessionExpiry = nil
                    return
                }
                // MQTT's interval is 32 bits, its largest value meaning never.
                guard let seconds = TimeSpan.seconds(value), seconds >= Double(PushSettings.minimumSessionExpiry),
                    seconds < Double(UInt32.max)
                else {
                    throw ValueProblem(reason: "expected a time span from 1min to 136y, or infinity")
                }
                settings.sessionExpiry = UInt32(seconds.rounded(.down))
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
