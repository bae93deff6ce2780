public import Foundation
public import OrderedJSON
public import OrderedCollections

/// How the activities of one type look: the layout document the daemon validates and sends
/// to presenters with them (its regions, views and templates are in Protocol/PROTOCOL.md,
/// "Layouts"). Island's counterpart of a widget extension's `ActivityConfiguration`: data,
/// not code, so every presenter (terminal, bar, overlay) draws it.
///
/// Write it in Swift (`ActivityLayout(chip:…, lockScreen: .vstack(…), …)`, with `LayoutView`),
/// or keep it in a JSON file beside your code (a SwiftPM resource, `Bundle.module`) and register
/// it at start-up:
///
/// ```swift
/// let layout = try ActivityLayout(contentsOf: Bundle.module.url(forResource: "Delivery", withExtension: "json")!)
/// try await Activity<DeliveryAttributes>.register(layout: layout)
/// ```
public struct ActivityLayout: Sendable, Hashable {
    /// The layout document.
    public var json: JSONObject

    public init(_ json: JSONObject) {
        self.json = json
    }

    /// Reads a layout document: a JSON object.
    public init(json data: Data) throws {
        guard let object = try JSONParser.parse(Array(data)).objectValue else {
            throw ActivityCodingError(description: "a layout is a JSON object")
        }
        json = object
    }

    /// Reads the layout document in the file at `url`.
    public init(contentsOf url: URL) throws {
        try self.init(json: Data(contentsOf: url))
    }
}
