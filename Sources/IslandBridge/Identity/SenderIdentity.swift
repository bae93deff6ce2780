/// What the bridge could establish about the process behind a bus connection that sent it
/// something (a `Notify`, a player's name, a job view request), gathered from the bus's
/// credentials for that very connection (`GetConnectionCredentials` of its unique name) and
/// the same facts islandd identifies its own peers by (`Systemd`'s `ProcessIdentity`): the
/// systemd unit, the sandbox, the executable.
///
/// A peer's claim to be an app (an MPRIS `DesktopEntry`, a `desktop-entry` hint, a job's
/// desktop entry) is believed only when these facts say the sender is that app
/// (`verifies(_:executable:)`). What the sender cannot be told apart from is `unknown`, and
/// verifies nothing.
package struct SenderIdentity: Sendable, Hashable {
    /// What confines the process, as `ProcessIdentity.sandbox` tells.
    package enum Confinement: Sendable, Hashable {
        case none
        /// A Flatpak identified by its `app-flatpak-<id>-<n>.scope`, which the sandbox cannot leave.
        case flatpak(appID: String)
        /// A strictly confined Snap (AppArmor label `snap.<name>.<app>`).
        case snap(name: String)
        /// Any other sandbox, or one that names no app: it may claim none.
        case other
    }

    package var confinement: Confinement
    /// The app id of the process's systemd unit (`app-<launcher>-<id>-<n>.scope`,
    /// `app-<id>@<n>.service`), as `ProcessIdentity.appID(fromUnit:)` reads it.
    package var unitAppID: String?
    /// The process's executable (`/proc/PID/exe`).
    package var executable: String?

    package init(confinement: Confinement, unitAppID: String? = nil, executable: String? = nil) {
        self.confinement = confinement
        self.unitAppID = unitAppID
        self.executable = executable
    }

    /// Nothing established: the credentials could not be read, the connection or the process
    /// was gone before the facts were, or the sender runs as another user.
    package static let unknown = SenderIdentity(confinement: .other)

    /// The app the facts name by themselves (a Flatpak's id, an app unit's id): shown as that
    /// app when installed, even without a claim.
    package var impliedApp: String? {
        if case .flatpak(let app) = confinement { return app }
        return unitAppID
    }

    /// Whether the sender is the app of desktop entry `id`, whose `TryExec=`/`Exec=` program
    /// is `executable`, by islandd's rules for the user scope without their one leniency (an
    /// unconfined peer's bare claim, which is exactly what a hostile peer sends):
    ///
    /// * a Flatpak is its app id and nothing else;
    /// * a Snap is its snap's entries (`<name>_<app>`, or `<name>`) and nothing else;
    /// * an app unit (`app-…-<id>-….scope`) is its app id;
    /// * an unconfined process is the app whose entry names its executable: by absolute path,
    ///   or by file name for a bare program name — never an interpreter's or a launcher's
    ///   (`python3`, `env`, `flatpak`…), which would make every script that app.
    package func verifies(_ id: String, executable program: String?) -> Bool {
        switch confinement {
        case .flatpak(let app):
            return id == app
        case .snap(let name):
            return id == name || id.hasPrefix(name + "_")
        case .none, .other:
            if let unitAppID, unitAppID == id { return true }
            guard confinement == .none, let program, let executable else { return false }
            return Self.executable(executable, runs: program)
        }
    }

    /// Whether the running `executable` (the text of `/proc/PID/exe`) is the program a desktop
    /// entry names.
    static func executable(_ executable: String, runs program: String) -> Bool {
        // Linux marks the executable of a process whose file was replaced since it started
        // (an upgrade) with " (deleted)"; it is still that program.
        let path = executable.hasSuffix(" (deleted)") ? String(executable.dropLast(" (deleted)".count)) : executable
        guard path.hasPrefix("/"), !program.isEmpty else { return false }
        let programName = program.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? program
        guard !isLauncher(programName) else { return false }
        if program.hasPrefix("/") { return path == program }
        guard !program.contains("/") else { return false }
        return path.split(separator: "/").last.map(String.init) == program
    }

    /// Programs that run other programs: an entry whose `Exec=` starts with one names no app.
    static func isLauncher(_ name: String) -> Bool {
        let launchers: Set<String> = [
            "env", "sh", "bash", "dash", "zsh", "fish", "ksh", "csh", "busybox", "python", "python2", "python3", "pypy", "pypy3",
            "perl", "ruby", "node", "nodejs", "deno", "java", "gjs", "lua", "php", "tclsh", "wish", "mono", "dotnet", "electron",
            "flatpak", "snap", "appimage-run", "wine", "wine64", "sudo", "pkexec", "xdg-open", "gio", "gtk-launch", "kioclient",
            "kioclient5", "kstart", "kstart5", "systemd-run", "dbus-send", "gdbus", "busctl", "nohup", "exec", "setsid", "xterm",
            "x-terminal-emulator",
        ]
        if launchers.contains(name) { return true }
        // python3.11, perl5.36, electron25…
        for prefix in ["python", "pypy", "perl", "ruby", "node", "lua", "php", "electron", "java"] where name.hasPrefix(prefix) {
            if name.dropFirst(prefix.count).allSatisfy({ $0.isNumber || $0 == "." }) { return true }
        }
        return false
    }
}
