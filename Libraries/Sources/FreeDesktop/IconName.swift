/// What counts as an icon name: the one rule every lookup and every sink applies before a
/// name becomes part of a file path.
///
/// ASCII letters, digits, `-`, `_` and `.`; not empty, at most 255 bytes (`NAME_MAX`: the name
/// is a file name in the theme), not starting with `.` and never containing `..`. So no path
/// separator, no `.`/`..` component, no hidden file, no control character, no URL and nothing
/// a terminal would interpret. The Icon Theme Specification names icons this way
/// (`battery-good-symbolic`, `org.gnome.Nautilus`); a digit may lead (`0ad`, the game's icon),
/// which is why the rule does not ask for a letter first.
public enum IconName {
    public static let maximumBytes = 255

    public static func isValid(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maximumBytes, !name.hasPrefix("."), !name.contains("..") else { return false }
        return name.utf8.allSatisfy(isNameByte)
    }

    /// The bytes of icon names and of desktop file ids alike.
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}
