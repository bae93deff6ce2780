import FreeDesktop

/// What `ManifestWatcher` watches so that an app installed while the daemon runs is known at its
/// next call, and when it reloads — the pure part, tested without inotify.
///
/// Each data directory's `applications/` folder is watched, and its `island/layouts/` folder
/// with each app's folder in it (layouts are read like the desktop entries); one that does not
/// exist yet (a fresh `~/.local/share/applications`) is waited for at its nearest existing
/// ancestor, for the creation of the next folder on the way, and the watches are placed again
/// after every event.
struct ManifestWatch: Sendable, Equatable {
    /// One directory to watch: a folder of desktop entries or layouts itself (`awaiting` nil),
    /// or the nearest existing ancestor of one, where only `awaiting` appearing matters.
    struct Target: Sendable, Hashable {
        enum Kind: Sendable, Hashable {
            /// `<data>/applications`: desktop entries, and subfolders of them.
            case applications
            /// `<data>/island/layouts`: a folder per app.
            case layouts
            /// `<data>/island/layouts/<app>`: that app's `<type>.json` files.
            case appLayouts
        }

        var directory: String
        var awaiting: String?
        var kind: Kind = .applications
    }

    /// inotify watches are a per-user kernel resource (`max_user_watches`): a search path of
    /// hundreds of directories is cut here, the first (most important) kept.
    static let maximumTargets = 32
    /// Apps' layout folders watched, in all: past it, their layouts are read on the next
    /// rescan or reload.
    static let maximumAppLayoutFolders = 64

    /// The targets for `dataDirectories`, deduplicated: the `applications/` folders first (at
    /// most `maximumTargets`), then the layout folders. `isDirectory` answers whether a path is
    /// an existing directory, `subfolders` lists one's subfolders.
    static func targets(
        dataDirectories: [String], isDirectory: (String) -> Bool,
        subfolders: (String) -> [String] = { _ in [] }
    ) -> [Target] {
        let roots = dataDirectories.filter { $0.hasPrefix("/") }.map(normalized)
        var targets: [Target] = []
        func add(_ target: Target?, limit: Int) -> Bool {
            guard let target, !targets.contains(target), targets.count < limit else { return false }
            targets.append(target)
            return true
        }
        for root in roots {
            // Two folders awaited under one ancestor are one watch that cares about both:
            // `relevant` is asked with each of them.
            _ = add(target(for: root + "/applications", kind: .applications, isDirectory: isDirectory), limit: maximumTargets)
        }
        let layoutLimit = targets.count + maximumTargets
        var appFolders: [String] = []
        for root in roots {
            let layouts = root + "/island/layouts"
            let target = target(for: layouts, kind: .layouts, isDirectory: isDirectory)
            if add(target, limit: layoutLimit), target?.awaiting == nil { appFolders.append(layouts) }
        }
        let appLimit = targets.count + maximumAppLayoutFolders
        for layouts in appFolders {
            for app in subfolders(layouts).sorted() {
                _ = add(Target(directory: layouts + "/" + app, awaiting: nil, kind: .appLayouts), limit: appLimit)
            }
        }
        return targets
    }

    /// `folder` itself when it exists, else its nearest existing ancestor and the name
    /// of the next folder down. Nil when not even `/` is a directory.
    static func target(for folder: String, kind: Target.Kind = .applications, isDirectory: (String) -> Bool) -> Target? {
        var path = folder
        var child: String?
        while true {
            if isDirectory(path) { return Target(directory: path, awaiting: child, kind: kind) }
            guard let slash = path.lastIndex(of: "/") else { return nil }
            child = String(path[path.index(after: slash)...])
            if slash == path.startIndex {
                return isDirectory("/") ? Target(directory: "/", awaiting: child, kind: kind) : nil
            }
            path = String(path[..<slash])
        }
    }

    /// Whether an event naming `name` in a watched directory can change the manifests or the
    /// layouts: a desktop entry or a subfolder (whose entries get prefixed ids) in an
    /// `applications/` folder, an app's folder in `island/layouts/`, a `.json` file in an app's
    /// folder; only the awaited folder in an ancestor. An event without a name (the directory
    /// itself deleted or moved, the queue overflowed) always can.
    static func relevant(name: String?, isDirectory: Bool, targets: [Target]) -> Bool {
        guard let name, !name.isEmpty else { return true }
        return targets.contains { target in
            if let awaited = target.awaiting { return name == awaited }
            switch target.kind {
            case .applications: return name.hasSuffix(".desktop") || isDirectory
            case .layouts: return isDirectory
            case .appLayouts: return name.hasSuffix(".json")
            }
        }
    }

    private static func normalized(_ directory: String) -> String {
        var path = directory
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path == "/" ? "" : path
    }
}

/// Turns a burst of file events (a package manager writing twenty entries, an editor's
/// save-by-rename) into one rescan: due `quiet` seconds after the last event, but never
/// later than `patience` seconds after the first, so a steady trickle still rescans; and never
/// sooner than `spacing` seconds after the rescan before, so a flood of creations and
/// deletions costs at most one rescan a `spacing`, however long it lasts.
struct ReloadCoalescer: Sendable, Equatable {
    var quiet: Double = 0.2
    var patience: Double = 2
    var spacing: Double = 1
    private var firstEvent: Double?
    private var lastEvent: Double?
    private var lastRescan: Double?

    init(quiet: Double = 0.2, patience: Double = 2, spacing: Double = 1) {
        self.quiet = quiet
        self.patience = patience
        self.spacing = spacing
    }

    mutating func eventArrived(at now: Double) {
        if firstEvent == nil { firstEvent = now }
        lastEvent = now
    }

    /// When the pending rescan is due; nil when none is pending.
    var deadline: Double? {
        guard let firstEvent, let lastEvent else { return nil }
        let due = min(lastEvent + quiet, firstEvent + patience)
        return lastRescan.map { max(due, $0 + spacing) } ?? due
    }

    /// Whether a rescan is due at `now`; when it is, it is taken (the next event starts a new burst).
    mutating func takeDue(at now: Double) -> Bool {
        guard let deadline, now >= deadline else { return false }
        (firstEvent, lastEvent, lastRescan) = (nil, nil, now)
        return true
    }
}

/// When to try again to place the watches that failed (no inotify instance or watch left for
/// the user: another program holds them all), so that live pickup comes back once they are
/// free: soon at first, then backing off to once a minute. Pure, on the caller's clock.
struct WatchRetry: Sendable, Equatable {
    static let backoff = Backoff(first: .seconds(1), maximum: .seconds(60))
    /// Failures in a row; 0 while every watch is placed.
    private(set) var failures = 0
    /// When to try again; nil while nothing failed.
    private(set) var deadline: Double?

    /// Some watch could not be placed at `now`. Returns whether this begins a run of failures
    /// (worth a warning; the retries after it are not).
    mutating func failed(at now: Double) -> Bool {
        deadline = now + Self.backoff.seconds(attempt: failures)
        failures += 1
        return failures == 1
    }

    /// Every watch is placed. Returns whether that ends a run of failures (worth saying, and a
    /// rescan: entries may have come while nothing was watched).
    mutating func succeeded() -> Bool {
        defer { (failures, deadline) = (0, nil) }
        return failures > 0
    }

    func isDue(at now: Double) -> Bool { deadline.map { now >= $0 } ?? false }
}
