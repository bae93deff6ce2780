extension OverlayConfig {
    /// The program a tap's URL is given to when Opener= says none: gio open where gio is on
    /// `path` ($PATH; /usr/bin:/bin when unset), else xdg-open. `isExecutable`: whether a file
    /// may be run (access(2) with X_OK in the overlay).
    package static func defaultOpener(path: String?, isExecutable: (String) -> Bool) -> [String] {
        let directories = (path ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        if directories.contains(where: { isExecutable($0 + "/gio") }) { return ["gio", "open"] }
        return ["xdg-open"]
    }
}
