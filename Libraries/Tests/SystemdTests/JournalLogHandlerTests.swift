#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Testing

@testable import Systemd

@Suite struct LogEntryFormatTests {
    @Test func plainLineHasLevelLabelMessageAndSortedMetadata() {
        let line = JournalLogHandler.formatLine(
            level: .info,
            label: "island.server",
            message: "listening",
            metadata: ["path": "/run/island.sock", "activity_id": "42"],
            syslogPrefix: false
        )
        #expect(line == "info island.server: listening activity_id=42 path=/run/island.sock")
    }

    @Test func journalStreamLineCarriesThePriorityPrefix() {
        let line = JournalLogHandler.formatLine(
            level: .warning, label: "island", message: "slow peer", metadata: [:], syslogPrefix: true)
        #expect(line == "<4>warning island: slow peer")
    }

    @Test func lineBreaksStayOnOneLine() {
        let line = JournalLogHandler.formatLine(
            level: .error,
            label: "island",
            message: "first\nsecond\r\nthird",
            metadata: ["detail": "a\nb"],
            syslogPrefix: false
        )
        #expect(line == #"error island: first\nsecond\r\nthird detail=a\nb"#)
        #expect(!line.contains("\n"))
    }

    @Test func metadataValuesRenderThroughDescription() {
        let line = JournalLogHandler.formatLine(
            level: .debug,
            label: "l",
            message: "m",
            metadata: ["list": ["a", "b"], "nested": ["k": "v"], "s": .stringConvertible(7)],
            syslogPrefix: false
        )
        #expect(line == #"debug l: m list=["a", "b"] nested=["k": "v"] s=7"#)
    }

    @Test func syslogPriorities() {
        let expected: [(Logger.Level, Int)] = [
            (.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
        ]
        for (level, priority) in expected {
            #expect(JournalLogHandler.syslogPriority(level) == priority, "\(level)")
        }
    }

    @Test func journalFieldsStartWithTheStandardOnesAndMapMetadata() {
        let fields = JournalLogHandler.journalFields(
            level: .notice,
            label: "island",
            message: "hello\nworld",
            metadata: ["activity_id": "42", "message": "shadow", "bad key!": "x", "___": "dropped"],
            file: "Island/Server.swift",
            line: 12,
            function: "run()"
        )
        #expect(
            fields.map(\.name) == [
                "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
                "ACTIVITY_ID", "BAD_KEY_", "METADATA_MESSAGE",
            ])
        #expect(
            fields.map(\.value) == [
                "hello\nworld", "5", "island", "Island/Server.swift", "12", "run()", "42", "x", "shadow",
            ])
    }
}

@Suite struct JournalLogHandlerTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk on fire" }
    }

    @Test func laterMetadataSourcesWin() {
        let provider = Logger.MetadataProvider { ["from": "provider", "provided": "yes"] }
        var handler = JournalLogHandler(
            label: "t", logLevel: .info, metadataProvider: provider, destination: .stderr(syslogPrefix: false))
        handler[metadataKey: "from"] = "handler"
        handler[metadataKey: "handler_only"] = "yes"
        let event = LogEvent(
            level: .info,
            message: "m",
            error: Failure(),
            metadata: ["from": "call"],
            source: nil,
            file: #fileID,
            function: #function,
            line: #line
        )
        #expect(
            handler.mergedMetadata(for: event) == [
                "from": "call", "provided": "yes", "handler_only": "yes", "error": "disk on fire",
            ])
    }

    @Test func eachLineIsOneWriteEndingInANewline() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        JournalLogHandler.writeLine("info l: hello", to: fds[1])
        JournalLogHandler.writeLine("info l: again", to: fds[1])
        close(fds[1])
        var buffer = [UInt8](repeating: 0, count: 256)
        var received: [UInt8] = []
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            try #require(count >= 0)
            if count == 0 { break }
            received += buffer[..<count]
        }
        #expect(String(decoding: received, as: UTF8.self) == "info l: hello\ninfo l: again\n")
    }

    @Test func handlerIsUsableAsABootstrapFactory() {
        let make = JournalLogHandler.factory(level: .debug)
        let handler = make("island")
        #expect(handler.logLevel == .debug)
        #expect((handler as? JournalLogHandler)?.label == "island")
    }
}

/// Whether stderr is the journal, read from JOURNAL_STREAM: each case in the probe, with
/// the variable as the case names it, its stderr a file of the test's.
@Suite struct JournalStreamTests {
    static func journal(_ value: String?) async throws -> [String: String] {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stderr = "\(directory)/stderr"
        try #require(FileManager.default.createFile(atPath: stderr, contents: nil))
        var status = stat()
        try #require(stat(stderr, &status) == 0)
        // `<dev>:<ino>` of the probe's stderr, as systemd writes it: the file exists before the
        // probe starts and is opened, not made again, for its stderr.
        let identity = "\(status.st_dev):\(status.st_ino)"
        let environment = value.map { ["JOURNAL_STREAM": $0 == "stderr" ? identity : $0] } ?? [:]
        return try await probe("journal", environment: environment, in: directory, stderr: stderr)
    }

    @Test func unsetMeansNotTheJournal() async throws {
        let seen = try await Self.journal(nil)
        #expect(seen["stderr-is-the-journal"] == "false")
        #expect(seen["destination"] == "\(JournalLogHandler.Destination.stderr(syslogPrefix: false))")
    }

    @Test func matchingDeviceAndInodeMeansTheJournal() async throws {
        #expect(try await Self.journal("stderr")["stderr-is-the-journal"] == "true")
    }

    @Test(arguments: ["1:2", "garbage", "", "12", "1:2:3", ":"])
    func anythingElseIsNotTheJournal(value: String) async throws {
        let seen = try await Self.journal(value)
        #expect(seen["stderr-is-the-journal"] == "false")
        // Inherited from a journal-logging parent: keep the prefix, journald may still read us.
        #expect(seen["destination"] == "\(JournalLogHandler.Destination.stderr(syslogPrefix: true))")
    }
}
