import FreeDesktop
/// A player's album art (`mpris:artUrl`) as the bridge passes it on: only a local file, named
/// by an absolute path, never a URL a presenter would fetch from the network (`https:`, `data:`,
/// another host's `file:`), and never one the bus cut short (which would name another file).
/// What presenters do with it — read at most a bounded number of bytes, decode only PNG or
/// JPEG — is theirs; the bridge hands them a path that can mean nothing else.
public enum AlbumArt {
    /// The longest `mpris:artUrl` read, in UTF-8 bytes: below the bus's string limit
    /// (`MPRISSource.limits`), so a URL of this length was not cut on the way.
    public static let maximumURLBytes = 1000
    /// The longest `file:` URL put in the state: every update carries it, within the daemon's
    /// 4 KiB for attributes and state together.
    public static let maximumStateBytes = 512

    /// `file:///…` for an `mpris:artUrl` naming a local file by an absolute path (no `.` or `..`
    /// segment, no empty one, no control character, percent-encoding valid UTF-8), with the
    /// path percent-encoded again the one way (`AlbumArt.encoded`); nil for anything else.
    public static func localFileURL(_ url: String) -> String? {
        guard url.utf8.count <= maximumURLBytes else { return nil }
        var rest = Substring(url)
        guard rest.prefix(7).lowercased() == "file://" else { return nil }
        rest = rest.dropFirst(7)
        // The authority: empty or localhost (RFC 8089); any other host is another machine.
        if rest.prefix(9).lowercased() == "localhost" { rest = rest.dropFirst(9) }
        guard rest.first == "/", !rest.contains("?"), !rest.contains("#") else { return nil }
        guard let path = decoded(rest) else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }),
              !path.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else { return nil }
        let canonical = "file://" + encoded(path)
        return canonical.utf8.count <= maximumStateBytes ? canonical : nil
    }

    /// `text` percent-decoded; nil when an escape is malformed or the bytes are not UTF-8.
    static func decoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(HexDigit.value), let low = iterator.next().flatMap(HexDigit.value) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A path with every byte but unreserved ones and `/` percent-encoded (RFC 3986): one
    /// spelling for one path.
    static func encoded(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 0xF)])
            }
        }
        return out
    }
}
