#if canImport(Glibc)
package import Glibc
#endif

/// The descriptors a child started with `posix_spawn` keeps: those its spawner gives it, and no
/// others.
///
/// A process's descriptors are not all close-on-exec, and cannot all be made so: SwiftNIO opens
/// its sockets without the flag (a daemon's listening socket, every connection it accepts),
/// and another thread may open one between a pass that marks them and the spawn. A descriptor
/// a child inherits by accident is a capability it was never meant to hold — a link process
/// holding the daemon's listening socket can accept the daemon's clients, and keeps the socket
/// answering after the daemon is gone — so the spawn's own file actions close everything the
/// child was not given, in the child, after its `dup2`s.
package enum SpawnDescriptors {
    /// The descriptors open in this process now (`/proc/self/fd`), without the listing's own.
    package static func openNow() -> Set<Int32> {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        // The listing's own descriptor is in it, and is free again once it is done.
        let listing = dirfd(directory)
        var open: Set<Int32> = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let descriptor = Int32(name), descriptor != listing { open.insert(descriptor) }
        }
        return open
    }

    /// Adds to `actions` the closing of every descriptor from `first` up, in the child. Glibc's
    /// own action does it at once; without it (older than 2.34) those open now are closed one
    /// by one, and a few beyond them.
    package static func closeFrom(_ first: Int32, in actions: inout posix_spawn_file_actions_t) {
        if let addCloseFrom, addCloseFrom(&actions, first) == 0 { return }
        let last = max(first, (openNow().max() ?? first) + 64)
        for descriptor in first...last { posix_spawn_file_actions_addclose(&actions, descriptor) }
    }

    /// Adds to `actions` the closing of every descriptor above the standard three but those in
    /// `kept`: the gaps below the highest kept one by one (closing one that is not open is no
    /// error in a spawn's file actions), everything above it at once.
    package static func closeAll(but kept: Set<Int32>, in actions: inout posix_spawn_file_actions_t) {
        let highest = max(2, kept.max() ?? 2)
        for descriptor in 3..<(highest + 1) where !kept.contains(descriptor) {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        closeFrom(highest + 1, in: &actions)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), looked up at run time: spawn.h
    /// declares it only for _GNU_SOURCE, which Swift's Glibc module is not built with.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}
