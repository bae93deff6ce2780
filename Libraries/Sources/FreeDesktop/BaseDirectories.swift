/// The XDG Base Directory Specification (0.8), resolved once from an environment.
///
/// Every variable is read the spec's way: unset or empty means its default, and so does a
/// relative path ("All paths set in these environment variables must be absolute. If an
/// implementation encounters a relative path in any of these variables it should consider the
/// path invalid and ignore it"). In a list (`XDG_DATA_DIRS`, `XDG_CONFIG_DIRS`) each relative
/// entry is dropped; a list left empty means the default list. `HOME` is held to the same
/// rule: a relative or missing one counts as empty, so the home defaults become `/.local/share`
/// and so on, as the spec's `$HOME/.local/share` expands in a shell without `HOME`.
///
/// Pure: the environment is an argument; nothing here touches the file system.
public struct BaseDirectories: Sendable, Hashable {
    /// `$HOME` when absolute, without a trailing `/` (so `/` itself is ""); else "".
    public var home: String
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    public var dataHome: String
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    public var configHome: String
    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    public var stateHome: String
    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    public var cacheHome: String
    /// `$XDG_DATA_DIRS`, in order of preference, else `/usr/local/share`, `/usr/share`.
    public var dataDirectories: [String]
    /// `$XDG_CONFIG_DIRS`, in order of preference, else `/etc/xdg`.
    public var configDirectories: [String]
    /// `$XDG_RUNTIME_DIR`; nil when unset, empty or relative: the spec leaves the fallback to
    /// the application (and warns against a shared one), so the caller decides.
    public var runtimeDirectory: String?

    public static let defaultDataDirectories = ["/usr/local/share", "/usr/share"]
    public static let defaultConfigDirectories = ["/etc/xdg"]

    public init(environment: [String: String]) {
        func absolute(_ name: String) -> String? {
            guard let value = environment[name], value.hasPrefix("/") else { return nil }
            return value
        }
        func list(_ name: String, default fallback: [String]) -> [String] {
            let listed = (environment[name] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
            return listed.isEmpty ? fallback : listed
        }
        var home = absolute("HOME") ?? ""
        while home.hasSuffix("/") { home.removeLast() }
        self.home = home
        dataHome = absolute("XDG_DATA_HOME") ?? home + "/.local/share"
        configHome = absolute("XDG_CONFIG_HOME") ?? home + "/.config"
        stateHome = absolute("XDG_STATE_HOME") ?? home + "/.local/state"
        cacheHome = absolute("XDG_CACHE_HOME") ?? home + "/.cache"
        dataDirectories = list("XDG_DATA_DIRS", default: Self.defaultDataDirectories)
        configDirectories = list("XDG_CONFIG_DIRS", default: Self.defaultConfigDirectories)
        runtimeDirectory = absolute("XDG_RUNTIME_DIR")
    }

    /// Where data files are looked for, most important first: `dataHome`, then
    /// `dataDirectories` ("the base directory defined by $XDG_DATA_HOME is considered more
    /// important than any of the base directories defined by $XDG_DATA_DIRS").
    public var dataSearchPath: [String] { [dataHome] + dataDirectories }

    /// Where configuration files are looked for, most important first.
    public var configSearchPath: [String] { [configHome] + configDirectories }
}
