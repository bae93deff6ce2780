import Foundation
import OrderedCollections
import OrderedJSON
import Testing
@testable import island

/// Every error the daemon can send has a sentence in the CLI (PROTOCOL.md's, made of its
/// parameters), not raw JSON and "see the daemon's log"; and every hint that names an island
/// command repeats the `--app` the command was given.
@Suite struct RefusalSentencesTests {
    /// `interface.Name` of every `error` declared in Protocol/*.varlink, read from the files
    /// themselves, so an error added there without a sentence fails here.
    static let declaredErrors: [String] = {
        let protocolDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Protocol")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: protocolDirectory.path)) ?? []
        var names: [String] = []
        for file in files.sorted() where file.hasSuffix(".varlink") {
            guard let text = try? String(contentsOf: protocolDirectory.appendingPathComponent(file), encoding: .utf8) else { continue }
            var interface = ""
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ", maxSplits: 2)
                guard words.count >= 2 else { continue }
                if words[0] == "interface" { interface = String(words[1]) }
                if words[0] == "error" {
                    let name = words[1].prefix { $0.isLetter || $0.isNumber }
                    names.append("\(interface).\(name)")
                }
            }
        }
        return names
    }()

    /// The standard errors of `org.varlink.service`, which any call may get.
    static let standardErrors = [
        "org.varlink.service.InterfaceNotFound", "org.varlink.service.MethodNotFound", "org.varlink.service.MethodNotImplemented",
        "org.varlink.service.InvalidParameter", "org.varlink.service.PermissionDenied", "org.varlink.service.ExpectedMore",
    ]

    @Test func theProtocolFilesAreRead() {
        // A wrong path would make the test below vacuous.
        #expect(Self.declaredErrors.count >= 30)
        #expect(Self.declaredErrors.contains("org.island.PushUnavailable"))
        #expect(Self.declaredErrors.contains("org.island.Connection.ShuttingDown"))
    }

    @Test(arguments: declaredErrors + standardErrors)
    func everyErrorHasASentenceAndAHint(_ name: String) throws {
        let sentence = try #require(RefusalSentences.sentence(name: name, parameters: [:], app: "org.example.App"))
        #expect(!sentence.message.isEmpty)
        #expect(!sentence.message.contains("{"), "raw JSON: \(sentence.message)")
        let hint = try #require(sentence.hint)
        #expect(!hint.isEmpty)
        #expect(!hint.contains("daemon's log") || name == "org.island.PersistenceFailure", "the log records no refusal: \(hint)")
    }

    /// An entry that lacks a key is told to add that key: `admin frequent-updates` for an app
    /// whose entry does not allow them was told to add X-Island-LiveActivities, which it had.
    @Test(arguments: [
        ("its desktop entry /a/org.example.App.desktop does not declare X-Island-LiveActivities=true", "show Live Activities", "X-Island-LiveActivities=true"),
        ("its desktop entry does not declare X-Island-FrequentUpdates=true", "use frequent updates", "X-Island-FrequentUpdates=true"),
        (
            "org.example.App speaks only for itself: its desktop entry does not declare X-Island-SourceApps=true", "speak for other apps",
            "X-Island-SourceApps=true"
        ),
    ])
    func unentitledNamesTheKeyTheEntryLacks(_ reason: String, _ what: String, _ key: String) throws {
        let sentence = try #require(
            RefusalSentences.sentence(name: "org.island.Unentitled", parameters: ["app": "org.example.App", "reason": .string(reason)], app: "org.example.App"))
        #expect(sentence.message == "org.example.App may not \(what): \(reason)")
        #expect(sentence.hint == "add \(key) to the [Desktop Entry] group of org.example.App's desktop entry")
    }

    @Test func unentitledWithoutAnEntryIsToldToInstallOne() throws {
        let sentence = try #require(
            RefusalSentences.sentence(
                name: "org.island.Unentitled", parameters: ["app": "org.example.App", "reason": "no desktop entry org.example.App.desktop"],
                app: "org.example.App"))
        #expect(sentence.message.hasPrefix("org.example.App may not show Live Activities"))
        #expect(sentence.hint?.hasPrefix("install a desktop entry org.example.App.desktop") == true)
    }

    /// The four of issue's report, each as the daemon sends it.
    @Test func theRefusalsThatPrintedRawJSONNowSaySomething() {
        let cases: [(String, JSONObject, String)] = [
            ("org.island.PushUnavailable", ["reason": "no broker is configured ([Push] Broker=)"], "push is not available"),
            ("org.island.ImplausibleTimestamp", ["id": "x", "given": 1_795_318_723_662.0, "latest": 1_795_319_323.0], "looks like milliseconds"),
            ("org.island.AlertTooLarge", ["limit": 1024, "size": 60000], "60000 bytes together, over the limit of 1024"),
            ("org.island.NestingTooDeep", ["limit": 32, "depth": 40], "40 deep, over the limit of 32"),
        ]
        for (name, parameters, expected) in cases {
            let failure = CLIFailure(refusal: name, parameters: parameters, json: false)
            #expect(failure.message.contains(expected), "\(name): \(failure.message)")
            #expect(failure.hint != nil && !failure.hint!.contains("log"))
            #expect(failure.status == ExitStatus.refused)
        }
    }

    @Test func theRefusalNamesTheAppAndEveryHintRepeatsItsApp() {
        let missing = RefusalSentences.sentence(name: "org.island.NoSuchActivity", parameters: ["id": "abc"], app: "org.island.cli")!
        #expect(missing.message.contains("no activity abc of org.island.cli"))
        #expect(missing.hint!.contains("--app"))
        for name in Self.declaredErrors + Self.standardErrors {
            let parameters: JSONObject = ["id": "abc", "app": "org.example.App", "limit": 1]
            guard let hint = RefusalSentences.sentence(name: name, parameters: parameters, app: "org.example.App")?.hint else { continue }
            // Each island command a hint names, up to its closing backquote.
            for command in hint.components(separatedBy: "`island ").dropFirst() {
                let typed = command.prefix { $0 != "`" }
                if typed.hasPrefix("admin") || typed.hasPrefix("preview") { continue }  // no app of their own
                #expect(typed.hasSuffix("--app org.example.App"), "\(name): \(hint)")
            }
        }
    }

    @Test func anUnknownErrorKeepsItsParametersAndSendsNobodyToALog() {
        let failure = CLIFailure(refusal: "org.island.Future", parameters: ["n": 1], json: false)
        #expect(failure.message.hasPrefix("org.island.Future {") && failure.message.contains("\"n\""))
        #expect(failure.hint == nil)
    }

    /// `island start --at` needs an alert title; the body is optional (`--at +1h --alert-title
    /// Doors` is taken), and the hint once asked for both.
    @Test func aScheduledStartsAlertHintAsksForATitleOnly() throws {
        let hint = try #require(RefusalSentences.sentence(name: "org.island.StartAlertRequired", parameters: [:], app: "org.example.App")?.hint)
        #expect(hint.contains("--alert-title") && !hint.contains("--alert-title and --alert-body"))
    }
}
