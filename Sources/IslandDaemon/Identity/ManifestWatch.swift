/// What `ManifestWatcher` watches so that an app installed while the daemon runs is known at its
/// next call, and when it reloads — the pure part, tested without inotify.
///
/// Each data directory's `applications/` folder is watched; one that does not exist yet (a
/// fresh `~/.local/share/applications`) is waited for at its nearest existing ancestor, for the
/// creation of the next folder on the way, and the watches are placed again after every event.
struct ManifestWatch: Sendable, Equatable {
    /// One directory to watch: the folder of desktop entries itself (`awaiting` nil), or the
    /// nearest existing ancestor of one, where only `awaiting` appearing matters.
    struct Target: Sendable, Hashable {
        var directory: String
        var awaiting: String?
    }

    /// inotify watches are a per-user kernel resource (`max_user_watches`): a search path of
    /// hundreds of directories is cut here, the first (most important) kept.
    static let maximumTargets = 32

    /// The targets for `dataDirectories`, deduplicated, at most `maximumTargets`.
    /// `isDirectory` answers whether a path is an existing directory.
    static func targets(dataDirectories: [String], isDirectory: (String) -> Bool) -> [Target] {
        var targets: [Target] = []
        for directory in dataDirectories where directory.hasPrefix("/") {
            let target = target(for: normalized(directory) + "/applications", isDirectory: isDirectory)
            // Two folders awaited under one ancestor are one watch that cares about both:
            // `relevant` is asked with each of them.
            guard let target, !targets.contains(target) else { continue }
            targets.append(target)
            if targets.count == maximumTargets { break }
        }
        return targets
    }

    /// `applications` itself when it exists, else its nearest existing ancestor and the name
    /// of the next folder down. Nil when not even `/` is a directory.
    static func target(for applications: String, isDirectory: (String) -> Bool) -> Target? {
        var path = applications
        var child: String?
        while true {
            if isDirectory(path) { return Target(directory: path, awaiting: child) }
            guard let slash = path.lastIndex(of: "/") else { return nil }
            child = String(path[path.index(after: slash)...])
            if slash == path.startIndex {
                return isDirectory("/") ? Target(directory: "/", awaiting: child) : nil
            }
            path = String(path[..<slash])
        }
    }

    /// Whether an event naming `name` in a watched directory can change the manifests: a
    /// desktop entry or a subfolder (whose entries get prefixed ids) in an `applications/`
    /// folder; only the awaited folder in an ancestor. An event without a name (the directory
    /// itself deleted or moved, the queue overflowed) always can.
    static func relevant(name: String?, isDirectory: Bool, awaiting: [String?]) -> Bool {
        guard let name, !name.isEmpty else { return true }
        return awaiting.contains { awaited in
            guard let awaited else { return name.hasSuffix(".desktop") || isDirectory }
            return name == awaited
        }
    }

    private static func normalized(_ directory: String) -> String {
        var path = directory
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path == "/" ? "" : path
    }
}

/// Turns a burst of file events (a package manager writing twenty entries, an editor's
/// save-by-rename) into one reload: due `quiet` seconds after the last event, but never
/// later than `patience` seconds after the first, so a steady trickle still reloads.
struct ReloadCoalescer: Sendable, Equatable {
    var quiet: Double = 0.2
    var patience: Double = 2
    private var firstEvent: Double?
    private var lastEvent: Double?

    init(quiet: Double = 0.2, patience: Double = 2) {
        self.quiet = quiet
        self.patience = patience
    }

    mutating func eventArrived(at now: Double) {
        if firstEvent == nil { firstEvent = now }
        lastEvent = now
    }

    /// When the pending reload is due; nil when none is pending.
    var deadline: Double? {
        guard let firstEvent, let lastEvent else { return nil }
        return min(lastEvent + quiet, firstEvent + patience)
    }

    /// Whether a reload is due at `now`; when it is, it is taken (the next event starts a new burst).
    mutating func takeDue(at now: Double) -> Bool {
        guard let deadline, now >= deadline else { return false }
        (firstEvent, lastEvent) = (nil, nil)
        return true
    }
}
