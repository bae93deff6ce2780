import FreeDesktop
extension ProcessIdentity {
    /// The application ID encoded in a unit name that follows the XDG/systemd convention for
    /// applications (systemd's "Desktop Environment Integration" document):
    ///
    /// - `app[-<launcher>]-<appid>-<random>.scope`
    /// - `app[-<launcher>]-<appid>[@<random>].service`
    ///
    /// e.g. `app-gnome-org.gnome.Terminal-4242.scope` → `org.gnome.Terminal`. The ID is unescaped
    /// (`\x2d` → `-`) and must be a reverse-DNS name; anything else, such as `session-3.scope`,
    /// `user@1000.service` or `app-gnome-firefox-4242.scope`, gives `nil`.
    public static func appID(fromUnit unit: String) -> String? {
        guard unit.hasPrefix("app-") else { return nil }
        let rest = unit.dropFirst("app-".count)

        let body: Substring
        if rest.hasSuffix(".scope") {
            // Scopes cannot be templates, so the random part follows the last dash.
            let stem = rest.dropLast(".scope".count)
            guard let dash = stem.lastIndex(of: "-"),
                isUnitNameToken(stem[stem.index(after: dash)...])
            else { return nil }
            body = stem[..<dash]
        } else if rest.hasSuffix(".service") {
            // The random part is a template instance and may be absent for single-instance apps.
            let stem = rest.dropLast(".service".count)
            if let at = stem.firstIndex(of: "@") {
                let instance = stem[stem.index(after: at)...]
                guard !instance.isEmpty, instance.allSatisfy({ isUnitNameCharacter($0) || $0 == "-" }) else {
                    return nil
                }
                body = stem[..<at]
            } else {
                body = stem
            }
        } else {
            return nil
        }

        // Conforming launchers escape dashes inside the ID, leaving at most one unescaped dash
        // (after the launcher). Launcher names never contain dots and IDs always do, which also
        // copes with launchers that forget to escape: `gnome-org.example.my-app`.
        let segments = body.split(separator: "-", omittingEmptySubsequences: false)
        guard segments.allSatisfy({ !$0.isEmpty }) else { return nil }
        let idSegments: ArraySlice<Substring>
        if segments.count > 1, isUnitNameToken(segments[0]), !segments[0].contains(".") {
            idSegments = segments.dropFirst()
        } else {
            idSegments = segments[...]
        }
        guard let id = unescapeUnitName(idSegments.joined(separator: "-")), isReverseDNSName(id) else {
            return nil
        }
        return id
    }

    /// Undoes systemd's unit name escaping (`\xNN` → byte); `nil` for malformed escapes or
    /// bytes that are not UTF-8.
    static func unescapeUnitName(_ escaped: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(escaped.utf8.count)
        var iterator = escaped.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                continue
            }
            guard iterator.next() == UInt8(ascii: "x"),
                let high = iterator.next().flatMap(HexDigit.value),
                let low = iterator.next().flatMap(HexDigit.value)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// A D-Bus style well-known name, which is what desktop files and Flatpak use as app IDs:
    /// at least two dot-separated elements of `[A-Za-z0-9_-]`, the first not starting with a digit.
    static func isReverseDNSName(_ name: String) -> Bool {
        guard name.utf8.count <= 255 else { return false }
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        guard elements.count >= 2,
            let first = elements[0].unicodeScalars.first, !("0"..."9").contains(first)
        else { return false }
        return elements.allSatisfy { element in
            !element.isEmpty
                && element.unicodeScalars.allSatisfy { scalar in
                    switch scalar {
                    case "A"..."Z", "a"..."z", "0"..."9", "_", "-": true
                    default: false
                    }
                }
        }
    }

    /// Characters a unit name may contain other than the separators `-` and `@`.
    private static func isUnitNameCharacter(_ character: Character) -> Bool {
        switch character {
        case "A"..."Z", "a"..."z", "0"..."9", "_", ":", "\\", ".": character.isASCII
        default: false
        }
    }

    private static func isUnitNameToken(_ token: Substring) -> Bool {
        !token.isEmpty && token.allSatisfy(isUnitNameCharacter)
    }
}
