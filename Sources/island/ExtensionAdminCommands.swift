import ArgumentParser
import Foundation
import OrderedJSON
import IslandKit
import IslandProtocol
import OrderedCollections

struct ExtensionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extension",
        abstract: "Register, list and remove the app's layouts (the extension role).",
        subcommands: [Register.self, ListLayouts.self, Remove.self])

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate and register a layout for an activity type.",
            discussion:
                "An invalid layout is refused with org.island.InvalidLayout and the JSON path of the problem (exit status 1). What a valid layout probably gets wrong (a progress value that can never be a number) is printed as a warning on stderr; it is registered all the same. Try it first with `island preview --lint`."
        )

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The layout, a JSON file.") var layout: String
        @Option(help: ArgumentHelp("The activity type it draws.", valueName: "type")) var type: String

        func run() async throws {
            let text: String
            do { text = try String(contentsOfFile: layout, encoding: .utf8) } catch {
                throw CLIFailure.usage("cannot read \(layout): \(error.localizedDescription)", json: global.json)
            }
            let object = try parseObject(text, option: layout, json: global.json)
            let reply = try await global.withRaw { client throws(CLIFailure) in
                try await global.call(
                    client, ExtensionNames.RegisterLayout.method,
                    [
                        ExtensionNames.RegisterLayout.app: .string(global.app), ExtensionNames.RegisterLayout.type: .string(type),
                        ExtensionNames.RegisterLayout.layout: .object(object),
                    ])
            }
            // What the layout probably gets wrong; it is registered all the same.
            let warnings = (reply[ExtensionNames.RegisterLayout.warnings]?.arrayValue ?? []).compactMap(\.stringValue)
            if global.json {
                Output.json(["registered": .string(type), "app": .string(global.app), "warnings": .array(warnings.map(JSON.string))])
            } else {
                for warning in warnings { Output.error("\(layout): warning: \(warning)\n") }
            }
        }
    }

    struct ListLayouts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the app's registered layouts.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let reply = try await global.withRaw { client throws(CLIFailure) in
                try await global.call(client, ExtensionNames.ListLayouts.method, [ExtensionNames.ListLayouts.app: .string(global.app)])
            }
            let layouts = reply[ExtensionNames.ListLayouts.layouts]?.arrayValue ?? []
            if global.json {
                Output.json(.array(layouts))
            } else if layouts.isEmpty {
                Output.line("no layouts")
            } else {
                for layout in layouts { Output.line(layout[ExtensionNames.RegisteredLayout.type]?.stringValue ?? "?") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the app's layout for a type; its activities use the default layout.")

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The activity type.", valueName: "type")) var type: String

        func run() async throws {
            _ = try await global.withRaw { client throws(CLIFailure) in
                try await global.call(
                    client, ExtensionNames.RemoveLayout.method,
                    [ExtensionNames.RemoveLayout.app: .string(global.app), ExtensionNames.RemoveLayout.type: .string(type)])
            }
        }
    }
}

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the user's settings and inspect the daemon (needs the daemon's own user, or root).",
        subcommands: [Enable.self, Disable.self, FrequentUpdates.self, Focus.self, Sharing.self, Lock.self, Apps.self, Status.self, Reload.self])

    /// Calls `method`, a qualified name of org.island.Admin (AdminNames.Status.method).
    static func call(_ global: GlobalOptions, _ method: String, _ parameters: JSONObject = [:]) async throws(CLIFailure) -> JSONObject {
        try await global.withRaw { client throws(CLIFailure) in
            try await global.call(client, method, parameters)
        }
    }

    /// `SetEnabled` for one app, or for all apps when `app` is nil.
    static func setEnabled(_ enabled: Bool, app: String?, _ global: GlobalOptions) async throws {
        var parameters: JSONObject = [AdminNames.SetEnabled.enabled: .bool(enabled)]
        if let app { parameters[AdminNames.SetEnabled.app] = .string(app) }
        _ = try await call(global, AdminNames.SetEnabled.method, parameters)
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn Live Activities on for an app, or for all apps.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app; all apps when omitted.") var target: String?

        func run() async throws { try await Admin.setEnabled(true, app: target, global) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn Live Activities off for an app, or for all apps; ends their activities.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app; all apps when omitted.") var target: String?

        func run() async throws { try await Admin.setEnabled(false, app: target, global) }
    }

    struct FrequentUpdates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "frequent-updates", abstract: "Turn frequent updates on or off for an app whose manifest allows them.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app.") var target: String
        @Argument(help: "on or off.") var setting: String

        func validate() throws {
            guard ["on", "off"].contains(setting) else { throw ValidationError("the setting is on or off, not \(setting)") }
        }

        func run() async throws {
            _ = try await Admin.call(
                global, AdminNames.SetFrequentUpdates.method,
                [
                    AdminNames.SetFrequentUpdates.app: .string(target), AdminNames.SetFrequentUpdates.enabled: .bool(setting == "on"),
                ])
        }
    }

    struct Focus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn Do Not Disturb on or off, or show whether it is on.",
            discussion: """
                While Do Not Disturb is on, alerting updates still apply but draw no attention: the island \
                does not expand and presenters show no alert. The producer's reply says so \
                (alertSuppressed, with alertSuppressedReason focus), and nothing of the app's alert budget \
                is spent. It is kept across restarts of the daemon; presenters and the apps' watch \
                streams are told when it changes.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "on, off or status.") var setting: Admin.Switch

        func run() async throws {
            let reply =
                setting == .status
                ? try await Admin.call(global, AdminNames.GetFocus.method)
                : try await Admin.call(global, AdminNames.SetFocus.method, [AdminNames.SetFocus.on: .bool(setting == .on)])
            let focus = reply[AdminNames.GetFocus.focus]?.objectValue ?? [:]
            if global.json {
                Output.json(.object(focus))
            } else {
                let since = focus[AdminNames.Focus.since]?.doubleValue.map(Date.init(timeIntervalSince1970:))
                Output.line("Do Not Disturb: " + Admin.describe(focus: focus[AdminNames.Focus.on]?.boolValue == true, since: since))
            }
        }
    }

    struct Sharing: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say that the screen is shared or no longer shared, or show whether it is.",
            discussion: """
                While the screen is shared (cast or recorded), presenters are shown no activity content: \
                only the app's icon and the island's shape, with "Hidden while sharing" where the content \
                would be; no buttons, progress, artwork or alert text. island-bridge sets it from the \
                desktop's screen-cast sessions; `on` and `off` here say it by hand (source manual), and the \
                last one to say wins. It is not kept across restarts of the daemon. HideWhileSharing=no \
                in islandd.conf keeps content shown while shared; nothing a producer sends can.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "on, off or status.") var setting: Admin.Switch

        func run() async throws {
            let reply =
                setting == .status
                ? try await Admin.call(global, AdminNames.GetSharing.method)
                : try await Admin.call(
                    global, AdminNames.SetSharing.method,
                    [
                        AdminNames.SetSharing.on: .bool(setting == .on), AdminNames.SetSharing.source: "manual",
                    ])
            let sharing = reply[AdminNames.GetSharing.sharing]?.objectValue ?? [:]
            if global.json {
                Output.json(.object(sharing))
            } else {
                Output.line("Screen sharing: " + Admin.describe(sharing: sharing))
            }
        }
    }

    struct Lock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say that the session is locked or unlocked, or show whether it is.",
            discussion: """
                While the session is locked, presenters are shown of each activity only what its \
                lock-screen visibility allows: public everything, private the app's icon and name (or the \
                layout's public layout), secret nothing at all — the stricter of the layout's level and \
                yours ([LockScreen] Visibility= in islandd.conf, for all apps or per app). No tap, button \
                or dismissal acts while locked. island-bridge sets it from logind and the desktop's \
                screensaver; `on` and `off` here say it by hand (source manual), and the last one to say \
                wins. It is not kept across restarts of the daemon.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "on, off or status.") var setting: Admin.Switch

        func run() async throws {
            let reply =
                setting == .status
                ? try await Admin.call(global, AdminNames.GetLock.method)
                : try await Admin.call(
                    global, AdminNames.SetLock.method,
                    [
                        AdminNames.SetLock.on: .bool(setting == .on), AdminNames.SetLock.source: "manual",
                    ])
            let lock = reply[AdminNames.GetLock.lock]?.objectValue ?? [:]
            if global.json {
                Output.json(.object(lock))
            } else {
                let since = lock[AdminNames.Lock.since]?.doubleValue.map(Date.init(timeIntervalSince1970:))
                var text = Admin.describe(focus: lock[AdminNames.Lock.on]?.boolValue == true, since: since)
                if let source = lock[AdminNames.Lock.source]?.stringValue { text += " (\(source))" }
                Output.line("Session lock: " + text)
            }
        }
    }

    /// What `admin focus`, `admin sharing` and `admin lock` are asked: to turn it on or off, or how it is.
    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case on, off, status
    }

    /// `on since 2026-11-27T18:00:00Z (portal), content hidden`, or `off`.
    static func describe(sharing: JSONObject) -> String {
        guard sharing[AdminNames.Sharing.on]?.boolValue == true else { return "off" }
        var text = Admin.describe(focus: true, since: sharing[AdminNames.Sharing.since]?.doubleValue.map(Date.init(timeIntervalSince1970:)))
        if let source = sharing[AdminNames.Sharing.source]?.stringValue { text += " (\(source))" }
        return text + (sharing[AdminNames.Sharing.contentHidden]?.boolValue == true ? ", content hidden" : ", content shown (HideWhileSharing=no)")
    }

    /// `on since 2026-11-27T18:00:00Z`, or `off`.
    static func describe(focus on: Bool, since: Date?) -> String {
        guard on else { return "off" }
        return since.map { "on since \($0.formatted(.iso8601))" } ?? "on"
    }

    struct Apps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps that may show Live Activities, with their settings.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let reply = try await Admin.call(global, AdminNames.ListApps.method)
            if global.json {
                Output.json(.object(reply))
                return
            }
            typealias App = AdminNames.App
            Output.line("Live Activities: \(reply[AdminNames.ListApps.enabled]?.boolValue == true ? "on" : "off")")
            var rows = [["APP", "ENABLED", "FREQUENT", "ACTIVITIES", "NAME"]]
            for app in reply[AdminNames.ListApps.apps]?.arrayValue ?? [] {
                let frequent = app[App.frequentUpdatesAllowed]?.boolValue == true ? (app[App.frequentUpdates]?.boolValue == true ? "on" : "off") : "-"
                let enabled = app[App.entitled]?.boolValue == false ? "unentitled" : (app[App.enabled]?.boolValue == true ? "yes" : "no")
                rows.append([
                    app[App.id]?.stringValue ?? "?", enabled, frequent, app[App.activities].map(\.description) ?? "0",
                    app[App.name]?.stringValue ?? "",
                ])
            }
            printTable(rows)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the daemon's version, counts and limits.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let reply = try await Admin.call(global, AdminNames.Status.method)
            if global.json {
                Output.json(.object(reply))
                return
            }
            for (key, value) in reply where key != AdminNames.Status.limits && key != AdminNames.Status.push {
                Output.line("\(key): \(value.stringValue ?? value.description)")
            }
            if let push = reply[AdminNames.Status.push]?.objectValue {
                typealias Push = AdminNames.PushStatus
                let state = push[Push.connected]?.boolValue == true ? "connected to" : "not connected to"
                Output.line(
                    "push: \(state) \(push[Push.broker]?.stringValue ?? "?") as \(push[Push.device]?.stringValue ?? "?"), "
                        + "\(push[Push.tokens]?.intValue ?? 0) tokens")
            }
            for (key, value) in reply[AdminNames.Status.limits]?.objectValue ?? [:] { Output.line("limit \(key): \(value)") }
        }
    }

    struct Reload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Re-read the configuration, manifests and installed layouts (like SIGHUP).")
        @OptionGroup var global: GlobalOptions

        /// The reload applies whatever it could read; an installed layout it skipped is a
        /// warning on stderr, naming the file and why, and the exit status stays 0: one
        /// package's broken layout is no reason for a script that reloads to fail.
        func run() async throws {
            let reply = try await Admin.call(global, AdminNames.Reload.method)
            for skipped in reply[AdminNames.Reload.skippedLayouts]?.arrayValue ?? [] {
                let path = skipped[AdminNames.SkippedLayout.path]?.stringValue ?? "?"
                Output.warning("skipped the installed layout \(path): \(skipped[AdminNames.SkippedLayout.reason]?.stringValue ?? "?")")
            }
        }
    }
}
