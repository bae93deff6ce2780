// The Varlink interfaces of this repository, embedded byte for byte from Protocol/*.varlink
// so a server serves exactly what is in the repository.
package enum IslandInterfaces {
    /// `org.island.Connection`: errors that end a connection.
    package static let connection = text(PackageResources.org_island_Connection_varlink)
    /// `org.island`: the named refusals shared by every role.
    package static let errors = text(PackageResources.org_island_varlink)
    package static let producer = text(PackageResources.org_island_Producer_varlink)
    package static let extensionRole = text(PackageResources.org_island_Extension_varlink)
    package static let presenter = text(PackageResources.org_island_Presenter_varlink)
    package static let admin = text(PackageResources.org_island_Admin_varlink)

    /// Every interface the daemon serves besides `org.varlink.service` and `org.island.Connection`.
    package static var daemon: [String] { [errors, producer, extensionRole, presenter, admin] }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
