import Foundation
import FreeDesktop
public import OrderedJSON
import IslandProtocol
import Logging
public import OrderedCollections
import Synchronization
import VarlinkCore
import VarlinkNIO

// MARK: Layouts (org.island.Extension)

extension IslandConnection {
    /// Validates and stores `layout` for the app's activities of `type`, replacing any earlier
    /// one (org.island.Extension.RegisterLayout). On a connection of its own: the extension
    /// role is not the producer's, and a connection keeps its first role.
    public func registerLayout(type: String, layout: JSONObject) async throws {
        var parameters = appParameter
        parameters[ExtensionNames.RegisterLayout.type] = .string(type)
        parameters[ExtensionNames.RegisterLayout.layout] = .object(layout)
        _ = try await performAsExtension(ExtensionNames.RegisterLayout.method, parameters)
    }

    /// Removes the app's layout for `type` (org.island.Extension.RemoveLayout): its
    /// activities fall back to the default layout.
    public func removeLayout(type: String) async throws {
        var parameters = appParameter
        parameters[ExtensionNames.RemoveLayout.type] = .string(type)
        _ = try await performAsExtension(ExtensionNames.RemoveLayout.method, parameters)
    }

    func performAsExtension(_ method: String, _ parameters: JSONObject) async throws -> JSONObject {
        let client: VarlinkClient
        do {
            client = try await connector()
        } catch {
            throw unavailable(describe(error))
        }
        return try await Self.callAlone(client, method, parameters, lost: { self.unavailable(self.describe($0)) })
    }
}
