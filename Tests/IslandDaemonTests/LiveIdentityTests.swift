#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ProcessTesting
import Testing
import Systemd
import VarlinkCore
@testable import IslandDaemon

/// Identity forgeries in the system scope, done for real and judged by the real lookups
/// (`ProcessLookup.live`): a process that made a user namespace and a root of its own, and a
/// copy of python3 named like a desktop entry's program.
@Suite struct LiveIdentityTests {
    static let python = "/usr/bin/python3"
    static var hasPython: Bool { FileManager.default.isExecutableFile(atPath: python) }
    /// Whether this process may make a user namespace; where it may not, no one can forge
    /// a sandbox this way. Probed once, its exit awaited off the pool the tests run on.
    static let userNamespacesWork = Task<Bool, Never> {
        guard let unshare = ["/usr/bin/unshare", "/bin/unshare"].first(where: FileManager.default.isExecutableFile(atPath:)) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: unshare)
        process.arguments = ["-Ur", "true"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        await process.exited()
        return process.terminationStatus == 0
    }

    /// A process started from `executable` (python) that runs `script`, then says "ready" and
    /// sleeps until the test stops it. Its start and its exit are awaited off the pool the
    /// tests run on: python may take seconds to say "ready" on a loaded machine.
    final class Peer {
        let process = Process()
        let pid: Int32

        init(executable: String, script: String) async throws {
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["-c", script + "\nprint('ready', flush=True)\nimport time\ntime.sleep(60)\n"]
            process.standardOutput = output
            try process.run()
            pid = process.processIdentifier
            let reading = output.fileHandleForReading
            let line = await offThePool { String(decoding: reading.readData(ofLength: 6), as: UTF8.self) }
            guard line.hasPrefix("ready") else {
                await stop()
                throw PeerFailed(message: "the peer did not start: \(line)")
            }
        }

        var credentials: PeerCredentials { PeerCredentials(pid: pid, uid: getuid(), gid: getgid()) }

        func stop() async {
            kill(pid, SIGKILL)
            await process.exited()
        }
    }

    /// Runs `body` with a peer (see `Peer`), stopped afterwards whether `body` returned or threw.
    static func withPeer<T>(executable: String, script: String, _ body: (Peer) async throws -> T) async throws -> T {
        try await using(try await Peer(executable: executable, script: script), release: { await $0.stop() }, body)
    }

    /// Copies `source` to `destination` in a `cp` of its own, never through a descriptor of
    /// this process: a program that another test starts meanwhile holds a copy of each of this
    /// process's descriptors from its fork until its exec, and while one of them can still
    /// write the copy, the kernel refuses to run it (ETXTBSY, "Text file busy"). `cp` starts no
    /// program, and has closed the file once it has exited.
    static func copyElsewhere(_ source: String, to destination: String) async throws {
        let cp = Process()
        cp.executableURL = URL(fileURLWithPath: "/bin/cp")
        cp.arguments = ["--", source, destination]
        try cp.run()
        await cp.exited()
        guard cp.terminationStatus == 0 else { throw PeerFailed(message: "cp \(source) \(destination) exited \(cp.terminationStatus)") }
    }

    struct PeerFailed: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static func registry(_ entries: [(id: String, exec: String)]) -> AppRegistry {
        AppRegistry(
            manifests: entries.map {
                AppManifest(id: $0.id, name: nil, supportsLiveActivities: true, supportsFrequentUpdates: false, executable: $0.exec, path: "/x")
            })
    }

    /// `unshare -Ur` + `chroot` into a directory holding a `.flatpak-info`, as a forger would.
    @Test(
        .enabled(if: hasPython, "needs \(python) to build the namespace"),
        .enabled("user namespaces are not available to this process") { await userNamespacesWork.value })
    func aForgedFlatpakIsRefusedInTheSystemScope() async throws {
        let tree = try TemporaryTree("forged-flatpak")
        defer { tree.remove() }
        try tree.write("root/.flatpak-info", "[Application]\nname=org.test.Backup\n")
        try await Self.withPeer(
            executable: Self.python,
            script: """
                import ctypes, os, sys
                if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
                    sys.exit("unshare(CLONE_NEWUSER): " + os.strerror(ctypes.get_errno()))
                os.chroot(\(String(reflecting: tree.path("root"))))
                os.chdir("/")
                """
        ) { peer in
            #expect(ProcessIdentity.sandbox(pid: peer.pid) == .flatpak(appID: "org.test.Backup", ownUserNamespace: true))
            let registry = Self.registry([("org.test.Backup", "/usr/bin/backup")])
            let system = IdentityResolver(scope: .system, registry: registry)
            for claim in [nil, "org.test.Backup"] {
                guard case .failure(.unidentified(_, let reason)) = system.resolve(peer: peer.credentials, claim: claim) else {
                    Issue.record("the system scope took the forged .flatpak-info as \(system.resolve(peer: peer.credentials, claim: claim))")
                    continue
                }
                #expect(reason.contains("user namespace"), "\(reason)")
            }
            // The user scope still knows it as a sandbox of that app: it cannot claim another.
            let user = IdentityResolver(scope: .user, registry: registry)
            #expect(user.resolve(peer: peer.credentials, claim: nil) == .success("org.test.Backup"))
            #expect(
                user.resolve(peer: peer.credentials, claim: "org.example.Other")
                    == .failure(.impersonation(claimed: "org.example.Other", actual: "org.test.Backup")))
        }
    }

    /// u2 copied python3 to `~/myapp` for a desktop entry saying `Exec=myapp`; the same copy
    /// is no better for an entry naming its absolute path, which is in a directory others
    /// can write to. The real python3, which only root controls, identifies (the control).
    @Test(.enabled(if: hasPython, "needs \(python) to copy"))
    func aCopiedProgramIsNotTheAppInTheSystemScope() async throws {
        let tree = try TemporaryTree("copied-program")
        defer { tree.remove() }
        let real = URL(fileURLWithPath: Self.python).resolvingSymlinksInPath().path
        try #require(ProcessIdentity.rootControlledFile(atPath: real) != nil, "\(real) is not root-controlled on this machine")
        try await Self.copyElsewhere(real, to: tree.path("myapp"))
        // As the kernel spells it (the tree's own path may hold a "//").
        let copy = try #require(
            realpath(tree.path("myapp"), nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            })

        try await Self.withPeer(executable: copy, script: "") { forged in
            try await Self.withPeer(executable: real, script: "") { genuine in
                for registry in [
                    Self.registry([("org.test.Mine", "myapp"), ("org.test.Python", real)]),
                    Self.registry([("org.test.Mine", copy)]),
                ] {
                    let system = IdentityResolver(scope: .system, registry: registry)
                    guard case .failure(.unidentified) = system.resolve(peer: forged.credentials, claim: nil) else {
                        Issue.record("the copy identified as \(system.resolve(peer: forged.credentials, claim: nil))")
                        continue
                    }
                    #expect(
                        IdentityResolver(scope: .user, registry: registry).resolve(peer: forged.credentials, claim: nil) == .success("org.test.Mine"),
                        "the user scope still matches the name: its callers are the user")
                }
                let control = IdentityResolver(scope: .system, registry: Self.registry([("org.test.Mine", "myapp"), ("org.test.Python", real)]))
                #expect(control.resolve(peer: genuine.credentials, claim: nil) == .success("org.test.Python"))
            }
        }
    }

    /// Where a test may make cgroups that libsystemd reads: a writable cgroup2 mount, on a
    /// machine where systemd is not PID 1 (its own tree is not the tests' to touch), as root.
    static let cgroupRoot: String? = {
        guard getuid() == 0, !FileManager.default.fileExists(atPath: "/run/systemd/system"),
            let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)
        else { return nil }
        let cgroup2 = mounts.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == "cgroup2" && fields[3].hasPrefix("rw") ? String(fields[1]) : nil
        }
        return ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].first { cgroup2.contains($0) && access($0, W_OK) == 0 }
    }()

    /// Runs `sleep` in the cgroup `path` (made for the test, removed after), for `body`.
    static func inCgroup(_ path: String, _ body: (Peer) async throws -> Void) async throws {
        let root = try #require(cgroupRoot)
        let directory = root + "/" + path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer {
            // Parents another run still uses stay; rmdir refuses a cgroup with members.
            var leaf = directory
            while leaf.count > root.count, rmdir(leaf) == 0 || errno == ENOENT {
                leaf = (leaf as NSString).deletingLastPathComponent
            }
        }
        try await withPeer(executable: python, script: "") { peer in
            try "\(peer.pid)\n".write(toFile: directory + "/cgroup.procs", atomically: false, encoding: .utf8)
            try await body(peer)
        }
    }

    /// A forged unit, with sd-login reading a real cgroup: a user's own manager may make
    /// `app-org.test.A-4242.scope` anywhere in its delegated subtree, however deep.
    @Test(.enabled(if: hasPython && cgroupRoot != nil, "needs root, a writable cgroup2 mount and no systemd as PID 1"))
    func aUnitInsideAUsersManagerDoesNotIdentifyInTheSystemScope() async throws {
        let scope = "app-org.test.A-\(getpid()).scope"
        try await Self.inCgroup("user.slice/user-4321.slice/user@4321.service/app.slice/\(scope)") { peer in
            #expect(ProcessIdentity.systemUnit(pid: peer.pid) == "user@4321.service")
            #expect(ProcessIdentity.userUnit(pid: peer.pid) == scope)
            let registry = Self.registry([("org.test.A", "/usr/bin/a")])
            guard case .failure(.unidentified) = IdentityResolver(scope: .system, registry: registry).resolve(peer: peer.credentials, claim: nil) else {
                Issue.record("a unit the user named identified the caller in the system scope")
                return
            }
            #expect(IdentityResolver(scope: .user, registry: registry).resolve(peer: peer.credentials, claim: nil) == .success("org.test.A"))
        }
        // The control: the same name as a unit of the system manager identifies.
        try await Self.inCgroup("system.slice/app-org.test.A@\(getpid()).service") { peer in
            #expect(IdentityResolver(scope: .system, registry: Self.registry([])).resolve(peer: peer.credentials, claim: nil) == .success("org.test.A"))
        }
    }
}
