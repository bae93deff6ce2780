import FreeDesktop
/// A player's album art (`mpris:artUrl`) as the bridge passes it on: a `file:///` URL of a
/// local file by the one rule presenters read it by (`LocalFile`), spelt again the one way.
/// What presenters do with it — read at most a bounded number of bytes, decode only PNG or
/// JPEG — is theirs; the bridge hands them a path that can mean nothing else.
package enum AlbumArt {
    /// The longest `mpris:artUrl` read, in UTF-8 bytes: below the bus's string limit
    /// (`MPRISSource.limits`), so a URL of this length was not cut on the way.
    package static let maximumURLBytes = LocalFile.maximumBytes
    /// The longest `file:` URL put in the state: every update carries it, within the daemon's
    /// 4 KiB for attributes and state together.
    package static let maximumStateBytes = 512

    /// `file:///…` for an `mpris:artUrl` naming a local file (`LocalFile.path(fromURL:)`), with
    /// the path percent-encoded again the one way (`LocalFile.url(path:)`); nil for anything else.
    package static func localFileURL(_ url: String) -> String? {
        guard let path = LocalFile.path(fromURL: url) else { return nil }
        let canonical = LocalFile.url(path: path)
        return canonical.utf8.count <= maximumStateBytes ? canonical : nil
    }
}
