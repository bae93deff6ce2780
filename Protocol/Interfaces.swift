// The Varlink interfaces of this repository, embedded byte for byte from Protocol/*.varlink.
public enum IslandInterfaces {
    /// `org.island.Connection`: errors that end a connection.
    public static let connection = String(decoding: PackageResources.org_island_Connection_varlink, as: UTF8.self)
}
