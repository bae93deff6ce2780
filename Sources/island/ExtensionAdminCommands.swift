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
            let text = try readNamedFile(layout, limit: maximumLayoutFileBytes, what: "the layout", json: global.json)
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
            let warnings = try global.read(reply, as: ExtensionReplies.RegisterLayout.init).warnings
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
            let layouts = try global.read(reply, as: ExtensionReplies.ListLayouts.init).layouts
            if global.json {
                Output.json(.array(layouts.map { .object($0.json) }))
            } else if layouts.isEmpty {
                Output.line("no layouts")
            } else {
                for layout in layouts { Output.line(layout.type) }
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
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }
        @Argument(help: "The app; all apps when omitted.") var target: String?

        func run() async throws { try await Admin.setEnabled(true, app: target, global) }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn Live Activities off for an app, or for all apps; ends their activities.")
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }
        @Argument(help: "The app; all apps when omitted.") var target: String?

        func run() async throws { try await Admin.setEnabled(false, app: target, global) }
    }

    struct FrequentUpdates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "frequent-updates", abstract: "Turn frequent updates on or off for an app whose manifest allows them.")
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }
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
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }
        @Argument(help: "on, off or status.") var setting: Admin.Switch

        func run() async throws {
            let reply =
                setting == .status
                ? try await Admin.call(global, AdminNames.GetFocus.method)
                : try await Admin.call(global, AdminNames.SetFocus.method, [AdminNames.SetFocus.on: .bool(setting == .on)])
            let focus =
                try setting == .status ? global.read(reply, as: AdminReplies.GetFocus.init).focus : global.read(reply, as: AdminReplies.SetFocus.init).focus
            if global.json {
                // As the daemon sent it, with any member this island does not know.
                Output.json(.object(focus.json))
            } else {
                Output.line("Do Not Disturb: " + Admin.describe(focus: focus.on, since: focus.since.map(Date.init(timeIntervalSince1970:))))
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
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }
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
            let sharing =
                try setting == .status
                ? global.read(reply, as: AdminReplies.GetSharing.init).sharing : global.read(reply, as: AdminReplies.SetSharing.init).sharing
            if global.json {
                Output.json(.object(sharing.json))
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
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }
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
            let lock = try setting == .status ? global.read(reply, as: AdminReplies.GetLock.init).lock : global.read(reply, as: AdminReplies.SetLock.init).lock
            // The status says what the desktop said too: it hides apps beside islandd.conf.
            let desktop =
                setting == .status
                ? try global.read(
                    try await Admin.call(global, AdminNames.GetDesktopLockScreen.method), as: AdminReplies.GetDesktopLockScreen.init) : nil
            if global.json {
                var object = lock.json
                if let desktop { object["desktop"] = .object(desktop.json) }
                Output.json(.object(object))
            } else {
                var text = Admin.describe(focus: lock.on, since: lock.since.map(Date.init(timeIntervalSince1970:)))
                if let source = lock.source { text += " (\(source))" }
                Output.line("Session lock: " + text)
                if let desktop, let said = Admin.describe(desktop: desktop) { Output.line("The desktop's lock-screen privacy: " + said) }
            }
        }
    }

    /// What `admin focus`, `admin sharing` and `admin lock` are asked: to turn it on or off, or how it is.
    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case on, off, status
    }

    /// `on since 2026-11-27T18:00:00Z (portal), content hidden`, or `off`.
    static func describe(sharing: AdminReplies.Sharing) -> String {
        guard sharing.on else { return "off" }
        var text = Admin.describe(focus: true, since: sharing.since.map(Date.init(timeIntervalSince1970:)))
        if let source = sharing.source { text += " (\(source))" }
        return text + (sharing.contentHidden ? ", content hidden" : ", content shown (HideWhileSharing=no)")
    }

    /// `every app hidden (secret)` or `private: A, B; secret: C` — app ids as the daemon checked
    /// them (desktop entry ids: letters, digits, `.`, `_` and `-` only); nil when the desktop said
    /// nothing (no GNOME, or no switch set there), which is not worth a line.
    static func describe(desktop: AdminReplies.GetDesktopLockScreen) -> String? {
        if desktop.everyAppSecret { return "every app hidden (secret)" }
        var parts: [String] = []
        if !desktop.privateApps.isEmpty { parts.append("private: " + desktop.privateApps.joined(separator: ", ")) }
        if !desktop.secretApps.isEmpty { parts.append("secret: " + desktop.secretApps.joined(separator: ", ")) }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// `on since 2026-11-27T18:00:00Z`, or `off`.
    static func describe(focus on: Bool, since: Date?) -> String {
        guard on else { return "off" }
        return since.map { "on since \($0.formatted(.iso8601))" } ?? "on"
    }

    struct Apps: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps that may show Live Activities, with their settings.")
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }

        func run() async throws {
            let reply = try await Admin.call(global, AdminNames.ListApps.method)
            let apps = try global.read(reply, as: AdminReplies.ListApps.init)
            if global.json {
                Output.json(.object(reply))
                return
            }
            Output.line("Live Activities: \(apps.enabled ? "on" : "off")")
            var rows = [["APP", "ENABLED", "FREQUENT", "ACTIVITIES", "NAME"]]
            for app in apps.apps {
                let frequent = app.frequentUpdatesAllowed ? (app.frequentUpdates ? "on" : "off") : "-"
                let enabled = !app.entitled ? "unentitled" : (app.enabled ? "yes" : "no")
                rows.append([app.id, enabled, frequent, "\(app.activities)", app.name ?? ""])
            }
            printTable(rows)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the daemon's version, counts and limits.")
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }

        func run() async throws {
            let reply = try await Admin.call(global, AdminNames.Status.method)
            let status = try global.read(reply, as: AdminReplies.Status.init)
            if global.json {
                Output.json(.object(reply))
                return
            }
            // Every member as the daemon sent it, in its order (a newer daemon's too), but the two structs.
            for (key, value) in reply where key != AdminNames.Status.limits && key != AdminNames.Status.push {
                Output.line("\(key): \(value.stringValue ?? value.description)")
            }
            if let push = status.push {
                Output.line("push: \(push.connected ? "connected to" : "not connected to") \(push.broker) as \(push.device), \(push.tokens) tokens")
            }
            for (key, value) in status.limits.json { Output.line("limit \(key): \(value)") }
        }
    }

    struct Reload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Re-read the configuration, manifests and installed layouts (like SIGHUP).")
        @OptionGroup var options: AdminOptions
        var global: GlobalOptions { options.global }

        /// The reload applies whatever it could read; an installed layout it skipped is a
        /// warning on stderr, naming the file and why, and the exit status stays 0: one
        /// package's broken layout is no reason for a script that reloads to fail.
        func run() async throws {
            let reply = try await Admin.call(global, AdminNames.Reload.method)
            for skipped in try global.read(reply, as: AdminReplies.Reload.init).skippedLayouts {
                Output.warning("skipped the installed layout \(skipped.path): \(skipped.reason)")
            }
        }
    }
}
