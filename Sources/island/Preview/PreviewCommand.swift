import ArgumentParser
import Foundation
import IslandCore
import OrderedJSON
import IslandPresenter
import OrderedCollections
import IslandProtocol

/// Which part of the island a preview shows.
enum PreviewMode: String, CaseIterable, ExpressibleByArgument {
    case compact, minimal, expanded, lockscreen
}

struct Preview: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render a layout with sample data, without a daemon.",
        discussion: """
            Validates LAYOUT.json as the daemon would, renders it with --attributes and --state at \
            --now (default: the current time), and prints the regions of --mode as text. With --svg, \
            also draws the island as island-overlay does (needs the island-overlay package; without it, status 69). An invalid layout prints \
            `path: reason` and exits with status 1.

            With --lint, prints instead what the valid layout probably gets wrong, one `path: warning` \
            a line: a progress or timer measure that can never render to a number ("40%"), and, with \
            --state (and --attributes), a template naming a key the sample lacks ({{state.percnt}}, \
            with the key it probably meant). Warnings never fail the command: the status is 0. \
            Without --lint the same warnings go to stderr, before the rendering.

              island preview coffee.json --attributes '{"shop":"Blue Bottle"}' \\
                --state '{"stage":"brewing","eta":7}' --mode compact --svg compact.svg
            """)

    @Argument(help: "The layout, a JSON file.") var layout: String
    @Option(help: ArgumentHelp("The activity's attributes, a JSON object.", valueName: "json")) var attributes: String?
    @Option(help: ArgumentHelp("The activity's state, a JSON object.", valueName: "json")) var state: String?
    @Option(help: ArgumentHelp("compact, minimal, expanded or lockscreen.", valueName: "mode")) var mode: PreviewMode = .compact
    @Option(help: ArgumentHelp("Also write an SVG drawing to this file.", valueName: "out.svg")) var svg: String?
    @Option(help: ArgumentHelp("The time to render timers at (epoch seconds).", valueName: "epoch")) var now: Double?
    @Flag(help: "Machine-readable output.") var json = false
    @Flag(help: "Print what the layout probably gets wrong instead of rendering it.") var lint = false

    func run() async throws {
        let text = try readNamedFile(layout, limit: maximumLayoutFileBytes, what: "the layout", json: json)
        let attributes = try parseObject(attributes, option: "--attributes", json: json)
        let state = try parseObject(state, option: "--state", json: json)
        let parsed: Layout
        do {
            parsed = try Layout(text: text)
        } catch {
            if json {
                Output.json(["error": .string(IslandErrorNames.InvalidLayout.error), "path": .string(error.path), "reason": .string(error.reason)])
            }
            Output.error("\(layout): \(error.path.isEmpty ? "(layout)" : error.path): \(error.reason)\n")
            throw ExitCode(ExitStatus.refused)
        }
        // Only a sample given is checked against: no --state is no sample, not an empty one.
        let warnings = LayoutLint.warnings(
            for: parsed, state: self.state == nil ? nil : state,
            attributes: self.attributes == nil ? nil : attributes)
        if lint {
            if json {
                Output.json(["warnings": .array(warnings.map { ["path": .string($0.path), "message": .string($0.message)] })])
            } else {
                for warning in warnings { Output.line("\(layout): \(warning)") }
            }
            return
        }
        // A misspelt key renders as nothing, which a rendering alone does not show: the same
        // warnings on stderr, out of the way of the regions printed.
        for warning in warnings { Output.warning("\(layout): \(warning)") }
        let at = now ?? Date().timeIntervalSince1970
        // The text and the drawing come from one rendering, the presenters' own: a region the
        // layout leaves out is drawn from the default layout there, so it is printed from it too.
        let update = Self.update(layout: parsed, attributes: attributes, state: state, mode: mode)
        var model = PresenterModel()
        model.apply(update)
        let rendered =
            model.items[Self.itemID].map { $0.render(now: at) }
            ?? LayoutRenderer(attributes: attributes, state: state, now: at).render(parsed)
        let regions = Self.regions(of: rendered, mode: mode)
        if let svg {
            // Drawn by the overlay's layout and painter (island-overlay --draw-svg, from the
            // island-overlay package), so a preview looks like the real island.
            do { try SVGDrawing.draw(updates: [update], now: at, to: svg) } catch let failure as SVGDrawing.Failure {
                let missing = SVGDrawing.drawerPath() == nil
                throw CLIFailure(
                    status: missing ? ExitStatus.unavailable : ExitStatus.refused, name: missing ? "SVGUnavailable" : "WriteFailed",
                    message: failure.description, json: json)
            }
        }
        if json {
            var object: JSONObject = ["mode": .string(mode.rawValue)]
            object["regions"] = .object(JSONObject(uniqueKeysWithValues: regions.map { ($0.0, $0.1.map(JSON.string) ?? .null) }))
            if let url = rendered.url { object["url"] = .string(url) }
            if let svg { object["svg"] = .string(svg) }
            Output.json(.object(object))
            return
        }
        Output.line(mode.rawValue)
        let width = regions.map(\.0.count).max() ?? 0
        for (name, value) in regions {
            Output.line("  \(name):" + String(repeating: " ", count: width - name.count + 1) + (value ?? "(none)"))
        }
        if let url = rendered.url { Output.line("  url:" + String(repeating: " ", count: max(1, width - 2)) + url) }
    }

    /// The snapshot a daemon would send a presenter for one activity shown in `mode`.
    static let itemID = "preview"

    static func update(layout: Layout, attributes: JSONObject, state: JSONObject, mode: PreviewMode) -> JSONObject {
        typealias Item = PresenterNames.Item
        typealias Island = PresenterNames.Island
        typealias Mode = PresenterNames.Island.Mode
        typealias Update = PresenterNames.Update
        let id = JSON.string(itemID)
        let item: JSON = [
            Item.id: id, Item.app: "preview", Item.type: "Preview", Item.attributes: .object(attributes),
            Item.content: [PresenterNames.Content.state: .object(state)], Item.state: .string(Item.State.active), Item.createdAt: 0,
            Item.layout: .object(layout.json), Item.defaultLayout: false,
        ]
        let island: JSON =
            switch mode {
            case .compact: [Island.mode: .string(Mode.compact), Island.attached: id, Island.lockScreen: [id]]
            case .minimal: [Island.mode: .string(Mode.minimal), Island.attached: id, Island.detached: id, Island.lockScreen: [id]]
            case .expanded: [Island.mode: .string(Mode.expanded), Island.attached: id, Island.expanded: id, Island.lockScreen: [id]]
            case .lockscreen: [Island.mode: .string(Mode.none), Island.lockScreen: [id]]
            }
        return [Update.kind: .string(Update.Kind.snapshot), Update.sequence: 0, Update.island: island, Update.items: [item], Update.removed: []]
    }

    static func regions(of layout: RenderedLayout, mode: PreviewMode) -> [(String, String?)] {
        switch mode {
        case .compact: [("leading", layout.compactLeading?.view.plainText), ("trailing", layout.compactTrailing?.view.plainText)]
        case .minimal: [("minimal", layout.minimal?.view.plainText)]
        case .expanded:
            [
                ("leading", layout.expandedLeading?.view.plainText), ("center", layout.expandedCenter?.view.plainText),
                ("trailing", layout.expandedTrailing?.view.plainText), ("bottom", layout.expandedBottom?.view.plainText),
            ]
        case .lockscreen:
            switch layout.lockScreenVisibility {
            case .public: [("lockScreen", layout.lockScreen?.view.plainText)]
            case .private: [("lockScreen", layout.lockScreen?.view.plainText), ("locked", "(private: the app's icon and name, or the public layout)")]
            case .secret: [("lockScreen", layout.lockScreen?.view.plainText), ("locked", "(secret: not shown while the session is locked)")]
            }
        }
    }
}
