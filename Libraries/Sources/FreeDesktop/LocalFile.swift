/// A local file named by an untrusted peer (a player's `mpris:artUrl`, a layout's image
/// `source`): only an absolute path on this machine, spelt so that it can mean nothing else —
/// never a URL something would fetch from the network (`https:`, `data:`, another host's
/// `file:`), never a `.` or `..` segment, an empty one or a control character, never longer
/// than `maximumBytes` (a reference cut short names another file). The one rule for the bridge,
/// which passes such a file on, and the presenters, which read it.
public enum LocalFile {
    /// The longest reference accepted, in UTF-8 bytes.
    public static let maximumBytes = 1000

    /// The absolute path a `file:` URL names: `file:///…` or `file://localhost/…` (RFC 8089),
    /// percent-escapes decoded (valid UTF-8), no query or fragment; nil for anything else.
    public static func path(fromURL url: String) -> String? {
        guard url.utf8.count <= maximumBytes else { return nil }
        var rest = Substring(url)
        guard rest.prefix(7).lowercased() == "file://" else { return nil }
        rest = rest.dropFirst(7)
        // The authority: empty or localhost; any other host is another machine.
        if rest.prefix(9).lowercased() == "localhost" { rest = rest.dropFirst(9) }
        guard rest.first == "/", !rest.contains("?"), !rest.contains("#"), let path = decoded(rest) else { return nil }
        return isCleanAbsolutePath(path) ? path : nil
    }

    /// The path a reference names: a `file:` URL (`path(fromURL:)`) or an absolute path itself.
    public static func path(from reference: String) -> String? {
        reference.hasPrefix("/") ? (isCleanAbsolutePath(reference) ? reference : nil) : path(fromURL: reference)
    }

    /// An absolute path of non-empty segments, none `.` or `..`, with no control character
    /// (C0, DEL, C1), at most `maximumBytes` long.
    public static func isCleanAbsolutePath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), path.utf8.count <= maximumBytes else { return false }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        return segments.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
            && !path.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// `file://` and the path with every byte but unreserved ones and `/` percent-encoded
    /// (RFC 3986): one spelling for one path.
    public static func url(path: String) -> String {
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        var out = "file://"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 0xF)])
            }
        }
        return out
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
}
