import OrderedJSON
import IslandProtocol
import OrderedCollections
import VarlinkCore

extension VarlinkConnectionErrors {
    /// `org.island.Connection` (Protocol/org.island.Connection.varlink): what islandd tells a
    /// client before it ends or refuses its connection.
    static let island = VarlinkConnectionErrors(declaredBy: try! VarlinkInterface(parsing: IslandInterfaces.connection))
}

extension VarlinkError {
    /// A stream's queue outgrew its bound while its client was not reading: the stream ends
    /// with this, and the connection with it (`org.island.Connection.OutputQueueFull`).
    static func outputQueueFull(limit: Int) -> VarlinkError {
        VarlinkError(ConnectionNames.OutputQueueFull.error, [ConnectionNames.OutputQueueFull.limit: .int(limit)])
    }
}
