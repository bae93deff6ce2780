import Mustache

/// How a template escapes the values it substitutes.
enum MustacheOutput {
    /// Labels: values as they are.
    case text
    /// URLs: values percent-encoded, so an id with a space or a `/` stays one path segment.
    case url

    var name: String {
        switch self {
        case .text: "TEXT"
        case .url: Self.registeredURLName
        }
    }

    /// swift-mustache finds content types by name in its own registry; ours is registered once,
    /// on first use.
    private static let registeredURLName: String = {
        MustacheContentTypes.register(PercentEncoding(), named: "ISLAND_URL_COMPONENT")
        return "ISLAND_URL_COMPONENT"
    }()
}

/// RFC 3986 percent-encoding of everything but the unreserved characters.
struct PercentEncoding: MustacheContentType {
    func escapeText(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            if Self.isUnreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return encoded
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
