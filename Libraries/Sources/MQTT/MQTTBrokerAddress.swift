/// Where a broker listens, read from a URL: `mqtt://host[:port]` (plain TCP, port 1883) or
/// `mqtts://host[:port]` (TLS, port 8883). An IPv6 address is written in brackets,
/// `mqtts://[::1]:8883`. Anything else — a path, credentials in the URL, another scheme — is
/// refused rather than half understood: credentials belong in a file of their own, never in a
/// URL that ends up in logs.
public struct MQTTBrokerAddress: Sendable, Hashable, Codable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The connection is TLS (`mqtts`).
    public var secure: Bool

    public init(host: String, port: Int, secure: Bool) {
        self.host = host
        self.port = port
        self.secure = secure
    }

    public init(url: String) throws(MQTTError) {
        let schemes: [(prefix: String, secure: Bool, port: Int)] = [("mqtt://", false, 1883), ("mqtts://", true, 8883)]
        guard let scheme = schemes.first(where: { url.hasPrefix($0.prefix) }) else {
            throw .invalidBrokerURL(url, reason: "the scheme must be mqtt:// or mqtts://")
        }
        var rest = Substring(url.dropFirst(scheme.prefix.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("@"), !rest.contains("?"), !rest.contains("#") else {
            throw .invalidBrokerURL(url, reason: "only a host and a port may follow the scheme")
        }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .invalidBrokerURL(url, reason: "an IPv6 address lacks its ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw .invalidBrokerURL(url, reason: "only :port may follow the address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw .invalidBrokerURL(url, reason: "the host is missing") }
        var port = scheme.port
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw .invalidBrokerURL(url, reason: "the port must be a number from 1 to 65535")
            }
            port = number
        }
        self.init(host: String(host), port: port, secure: scheme.secure)
    }

    public var description: String {
        let host = host.contains(":") ? "[\(host)]" : host
        return "\(secure ? "mqtts" : "mqtt")://\(host):\(port)"
    }
}
