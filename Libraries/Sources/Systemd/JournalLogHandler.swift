public import Logging

/// A swift-log handler that writes to the systemd journal when stderr is connected to it, and
/// plain lines to stderr otherwise.
///
/// Under systemd (`JOURNAL_STREAM` matches stderr) every entry goes to journald natively with
/// `PRIORITY=`, `SYSLOG_IDENTIFIER=` (the logger label), `CODE_FILE=`/`CODE_LINE=`/`CODE_FUNC=` and
/// one journal field per metadata key (see ``journalFieldName(_:)``), so `journalctl
/// ACTIVITY_ID=…` finds them. Elsewhere each entry is one line on stderr:
/// `info label: message key=value …`.
///
/// The destination is chosen when the handler is created, not per entry.
public struct JournalLogHandler: LogHandler {
    /// The logger label, sent as `SYSLOG_IDENTIFIER=`.
    public let label: String
    /// Entries below this level are dropped by `Logger` before they reach the handler.
    public var logLevel: Logger.Level
    /// Metadata attached to every entry of this handler.
    public var metadata: Logger.Metadata = [:]
    /// Contextual metadata (e.g. task-local) added to every entry.
    public var metadataProvider: Logger.MetadataProvider?

    let destination: Destination

    /// Where entries go; decided once because fstat on every entry buys nothing.
    package enum Destination: Sendable, Equatable {
        case journal
        case stderr(syslogPrefix: Bool)

        package static var current: Destination {
            // stderr being the journal is not enough: with RootDirectory= or in a container the
            // native socket may be missing, and sd_journal_sendv would then drop entries silently.
            if JournalLogHandler.isStderrTheJournal && JournalLogHandler.isJournalSocketPresent {
                return .journal
            }
            return .stderr(syslogPrefix: JournalLogHandler.isJournalStreamSet)
        }
    }

    /// Creates a handler, choosing the journal or stderr from the current environment.
    public init(
        label: String,
        logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
    ) {
        self.init(label: label, logLevel: logLevel, metadataProvider: metadataProvider, destination: .current)
    }

    init(
        label: String,
        logLevel: Logger.Level,
        metadataProvider: Logger.MetadataProvider?,
        destination: Destination
    ) {
        self.label = label
        self.logLevel = logLevel
        self.metadataProvider = metadataProvider
        self.destination = destination
    }

    /// A factory for `LoggingSystem.bootstrap(_:)`, e.g.
    /// `LoggingSystem.bootstrap(JournalLogHandler.factory(level: .debug))`.
    ///
    /// The journal-or-stderr decision is made once, here, rather than for every `Logger` created.
    public static func factory(level: Logger.Level = .info) -> @Sendable (String) -> any LogHandler {
        let destination = Destination.current
        return { label in
            JournalLogHandler(
                label: label,
                logLevel: level,
                metadataProvider: LoggingSystem.metadataProvider,
                destination: destination
            )
        }
    }

    /// Installs this handler as the process-wide logging backend.
    ///
    /// Like `LoggingSystem.bootstrap`, call it at most once per process.
    public static func bootstrap(
        level: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        let destination = Destination.current
        LoggingSystem.bootstrap(
            { label, provider in
                JournalLogHandler(
                    label: label, logLevel: level, metadataProvider: provider, destination: destination)
            },
            metadataProvider: metadataProvider
        )
    }

    /// One entry of ``metadata``.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Emits one entry; `Logger` has already filtered by ``logLevel``.
    public func log(event: LogEvent) {
        let entryMetadata = mergedMetadata(for: event)
        let message = event.message.description

        if destination == .journal {
            let sent = Self.sendToJournal(
                Self.journalFields(
                    level: event.level,
                    label: label,
                    message: message,
                    metadata: entryMetadata,
                    file: event.file,
                    line: event.line,
                    function: event.function
                )
            )
            if sent { return }
        }
        // A failed native send still has stderr, which under systemd reaches the journal too.
        let syslogPrefix = destination != .stderr(syslogPrefix: false)
        Self.writeLine(
            Self.formatLine(
                level: event.level,
                label: label,
                message: message,
                metadata: entryMetadata,
                syslogPrefix: syslogPrefix
            )
        )
    }

    /// Handler metadata, then the provider's, then the call site's: later ones win on conflict.
    func mergedMetadata(for event: LogEvent) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, new in new }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, new in new }
        }
        if let error = event.error, merged["error"] == nil {
            merged["error"] = .string(String(describing: error))
        }
        return merged
    }
}
