import Testing

@testable import Systemd

@Suite struct JournalFieldNameTests {
    @Test(arguments: [
        ("activity_id", "ACTIVITY_ID"),
        ("ACTIVITY_ID", "ACTIVITY_ID"),
        ("activity-id", "ACTIVITY_ID"),
        ("request.path", "REQUEST_PATH"),
        ("_private", "PRIVATE"),
        ("__x_y", "X_Y"),
        ("1st", "F_1ST"),
        ("_2nd", "F_2ND"),
        ("héllo wörld", "H_LLO_W_RLD"),
        ("smile🙂", "SMILE_"),
    ])
    func mapsKeysToValidFieldNames(key: String, expected: String) {
        #expect(JournalLogHandler.journalFieldName(key) == expected)
    }

    @Test(arguments: ["", "_", "___", "-", "🙂"])
    func keysWithNothingUsableHaveNoFieldName(key: String) {
        #expect(JournalLogHandler.journalFieldName(key) == nil)
    }

    @Test func longKeysAreCutTo64Characters() throws {
        let name = try #require(JournalLogHandler.journalFieldName(String(repeating: "ab", count: 50)))
        #expect(name.count == 64)
        #expect(name == String(String(repeating: "AB", count: 32)))
        let digitFirst = try #require(JournalLogHandler.journalFieldName("9" + String(repeating: "x", count: 80)))
        #expect(digitFirst.count == 64)
        #expect(digitFirst.hasPrefix("F_9X"))
    }

    @Test(arguments: ["a", "Mixed.Case-key", "_1", "x y z", "ünïcödé", String(repeating: "k", count: 200)])
    func everyResultIsAcceptedByJournald(key: String) throws {
        let name = try #require(JournalLogHandler.journalFieldName(key))
        #expect(!name.isEmpty && name.count <= 64)
        #expect(name.first != "_")
        #expect(!(name.first?.isNumber ?? true))
        #expect(name.utf8.allSatisfy { (65...90).contains($0) || (48...57).contains($0) || $0 == 95 })
    }

    @Test func metadataCannotOverrideTheHandlersOwnFields() {
        #expect(JournalLogHandler.metadataFieldName("message") == "METADATA_MESSAGE")
        #expect(JournalLogHandler.metadataFieldName("priority") == "METADATA_PRIORITY")
        #expect(JournalLogHandler.metadataFieldName("code_line") == "METADATA_CODE_LINE")
        #expect(JournalLogHandler.metadataFieldName("message_id") == "MESSAGE_ID")
        #expect(JournalLogHandler.metadataFieldName("__") == nil)
    }
}
