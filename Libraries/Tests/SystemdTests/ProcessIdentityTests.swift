#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ProcessTesting
import Testing

@testable import Systemd

@Suite struct ProcessIdentityTests {
    /// Whether PID 1 is systemd; on these machines it is not, so sd-login knows nothing.
    static var isSystemdBooted: Bool {
        FileManager.default.fileExists(atPath: "/run/systemd/system")
    }

    @Test func flatpakAppIDComesFromTheApplicationGroup() throws {
        try withTemporaryDirectory { procRoot in
            let root = "\(procRoot)/4242/root"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let info = """
                [Runtime]
                name=org.freedesktop.Platform

                [Application]
                # comment
                name[de]=org.example.Localised
                name = org.example.App
                runtime=runtime/org.freedesktop.Platform/x86_64/23.08

                [Instance]
                instance-id=1234567
                """
            try info.write(toFile: "\(root)/.flatpak-info", atomically: true, encoding: .utf8)

            #expect(ProcessIdentity.flatpakAppID(pid: 4242, procRoot: procRoot) == "org.example.App")
            #expect(ProcessIdentity.flatpakAppID(pid: 4243, procRoot: procRoot) == nil)
            #expect(ProcessIdentity.flatpakAppID(pid: 0, procRoot: procRoot) == nil)
        }
    }

    @Test func flatpakInfoWithoutApplicationNameGivesNil() throws {
        try withTemporaryDirectory { procRoot in
            let root = "\(procRoot)/7/root"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try "[Runtime]\nname=org.freedesktop.Platform\n[Application]\nname=\n"
                .write(toFile: "\(root)/.flatpak-info", atomically: true, encoding: .utf8)
            #expect(ProcessIdentity.flatpakAppID(pid: 7, procRoot: procRoot) == nil)
        }
    }

    @Test func thisProcessIsNotAFlatpak() {
        #expect(ProcessIdentity.flatpakAppID(pid: getpid()) == nil)
    }

    @Test func executablePathOfThisProcessMatchesProcSelfExe() throws {
        let expected = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(ProcessIdentity.executablePath(pid: getpid()) == expected)
    }

    @Test func executablePathReadsTheLinkUnderProcRoot() throws {
        try withTemporaryDirectory { procRoot in
            try FileManager.default.createDirectory(atPath: "\(procRoot)/77", withIntermediateDirectories: true)
            let longTarget = "/opt/" + String(repeating: "d/", count: 1500) + "island"
            try FileManager.default.createSymbolicLink(atPath: "\(procRoot)/77/exe", withDestinationPath: longTarget)
            #expect(ProcessIdentity.executablePath(pid: 77, procRoot: procRoot) == longTarget)
            #expect(ProcessIdentity.executablePath(pid: 78, procRoot: procRoot) == nil)
            #expect(ProcessIdentity.executablePath(pid: -1, procRoot: procRoot) == nil)
        }
    }

    @Test func systemdUnitIsNilOutsideASystemdCgroup() {
        let unit = ProcessIdentity.systemdUnit(pid: getpid())
        if Self.isSystemdBooted {
            #expect(unit.map { $0.hasSuffix(".scope") || $0.hasSuffix(".service") } ?? true)
        } else {
            #expect(unit == nil)
        }
        #expect(ProcessIdentity.systemdUnit(pid: 0) == nil)
        #expect(ProcessIdentity.systemdUnit(pid: Int32.max) == nil)
    }

    @Test func sessionOwnerIsNilOutsideALoginSession() {
        if !Self.isSystemdBooted {
            #expect(ProcessIdentity.sessionOwnerUID(pid: getpid()) == nil)
        }
        #expect(ProcessIdentity.sessionOwnerUID(pid: 0) == nil)
        #expect(ProcessIdentity.sessionOwnerUID(pid: Int32.max) == nil)
    }

    /// The daemon reads `.flatpak-info` in a root its peer chose: a symlink must not lead it
    /// to its own files, a FIFO must not block it, and neither may pass for "no Flatpak".
    @Test func aFlatpakInfoThatIsNotARegularFileIsUninspectable() throws {
        try withTemporaryDirectory { procRoot in
            for pid in [11, 12, 13] {
                try FileManager.default.createDirectory(atPath: "\(procRoot)/\(pid)/root", withIntermediateDirectories: true)
            }
            try "[Application]\nname=org.example.Secret\n".write(toFile: "\(procRoot)/secret", atomically: true, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: "\(procRoot)/11/root/.flatpak-info", withDestinationPath: "\(procRoot)/secret")
            #expect(mkfifo("\(procRoot)/12/root/.flatpak-info", 0o644) == 0)
            try FileManager.default.createDirectory(atPath: "\(procRoot)/13/root/.flatpak-info", withIntermediateDirectories: true)
            for pid: Int32 in [11, 12, 13] {
                guard case .uninspectable = ProcessIdentity.flatpakInfo(pid: pid, procRoot: procRoot) else {
                    Issue.record("pid \(pid): \(ProcessIdentity.flatpakInfo(pid: pid, procRoot: procRoot))")
                    continue
                }
            }
            #expect(ProcessIdentity.flatpakInfo(pid: 14, procRoot: procRoot) != .absent, "a process that cannot be looked at is no host process")
        }
    }

    @Test func aFlatpakInfoNamingNoAppIdIsStillAFlatpak() throws {
        try withTemporaryDirectory { procRoot in
            try FileManager.default.createDirectory(atPath: "\(procRoot)/21/root", withIntermediateDirectories: true)
            try "[Application]\nname=../../etc\n".write(toFile: "\(procRoot)/21/root/.flatpak-info", atomically: true, encoding: .utf8)
            #expect(ProcessIdentity.flatpakInfo(pid: 21, procRoot: procRoot) == .present(appID: nil))
            try FileManager.default.createDirectory(atPath: "\(procRoot)/22/root", withIntermediateDirectories: true)
            #expect(ProcessIdentity.flatpakInfo(pid: 22, procRoot: procRoot) == .absent)
        }
    }

    @Test func thisProcessIsNotSandboxed() {
        #expect(ProcessIdentity.sharesUserNamespace(pid: getpid()) == true)
        #expect(ProcessIdentity.sandbox(pid: getpid()) == .none)
        #expect(ProcessIdentity.sharesUserNamespace(pid: Int32.max) == nil)
        guard case .uninspectable = ProcessIdentity.sandbox(pid: Int32.max) else {
            Issue.record("a missing process counted as unconfined")
            return
        }
    }

    /// A process that made a user namespace of its own, as `unshare -Ur` (and unprivileged
    /// bubblewrap) does, is seen to have one.
    /// Probed once, its exit awaited off the pool the tests run on.
    static let userNamespacesWork = Task<Bool, Never> {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-Ur", "true"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        await probe.exited()
        return probe.terminationStatus == 0
    }

    @Test(.enabled("needs unshare(1) and user namespaces this process may create") { await userNamespacesWork.value })
    func aProcessInItsOwnUserNamespaceIsSeenAsSuch() async throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        child.arguments = ["-Ur", "sleep", "3600"]  // killed below; outlives any wait
        child.standardError = FileHandle.nullDevice
        try child.run()
        // Killed and reaped however the checks end; the exit awaited off the pool.
        do {
            // unshare execs sleep once the namespace exists; until then it shares ours. Waits
            // without holding a thread of the pool the other tests run on; the bound only keeps a
            // broken unshare from hanging the test.
            let deadline = ContinuousClock.now + .seconds(30)
            while ProcessIdentity.sharesUserNamespace(pid: child.processIdentifier) == true, child.isRunning, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            try #require(child.isRunning, "unshare -Ur sleep exited early")
            #expect(ProcessIdentity.sharesUserNamespace(pid: child.processIdentifier) == false)
            #expect(ProcessIdentity.sandbox(pid: child.processIdentifier) == .userNamespace)
        } catch {
            kill(child.processIdentifier, SIGKILL)
            await child.exited()
            throw error
        }
        kill(child.processIdentifier, SIGKILL)
        await child.exited()
    }

    @Test func theExecutableFileIsTheFileThisProcessRuns() throws {
        var expected = stat()
        try #require(stat("/proc/self/exe", &expected) == 0)
        #expect(ProcessIdentity.executableFile(pid: getpid()) == FileIdentity(device: UInt64(expected.st_dev), inode: UInt64(expected.st_ino)))
        #expect(ProcessIdentity.executableFile(pid: 0) == nil)
    }

    @Test func rootControlledFilesNeedRootAllTheWayUp() throws {
        #expect(ProcessIdentity.rootControlledFile(atPath: "sh") == nil, "a bare name is no path")
        #expect(ProcessIdentity.rootControlledFile(atPath: "/nonexistent/island") == nil)
        // /tmp is writable by everyone: nothing in it is root's alone, whoever owns it.
        try withTemporaryDirectory { directory in
            let file = directory + "/tool"
            try "#!/bin/sh\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(ProcessIdentity.rootControlledFile(atPath: file) == nil)
        }
        if let shell = ["/bin/sh", "/usr/bin/sh"].first(where: FileManager.default.fileExists(atPath:)) {
            var expected = stat()
            try #require(stat(shell, &expected) == 0)
            // Symlinks (a merged /bin, /bin/sh → dash) are followed to the file itself.
            let controlled = ProcessIdentity.rootControlledFile(atPath: shell)
            #expect(controlled?.identity == FileIdentity(device: UInt64(expected.st_dev), inode: UInt64(expected.st_ino)))
            #expect(controlled?.path == URL(fileURLWithPath: shell).resolvingSymlinksInPath().path)
        }
    }

    /// The directory of this test's executable, when it and every directory above it are
    /// root's alone (a build as root outside any home).
    static let rootControlledBuildDirectory: String? = {
        guard let executable = ProcessIdentity.executablePath(pid: getpid()),
            let controlled = ProcessIdentity.rootControlledFile(atPath: executable)
        else { return nil }
        return (controlled.path as NSString).deletingLastPathComponent
    }()

    /// Ownership and modes along the path, in a directory of root's that is not /tmp: the
    /// build directory next to this test.
    @Test(
        .enabled(if: getuid() == 0, "only root can make root-owned files and give them away"),
        .enabled(if: rootControlledBuildDirectory != nil, "the build directory is not root's alone, so nothing in it could be"))
    func rootControlledFilesRefuseWhatAnotherUserCouldWrite() throws {
        let here = try #require(Self.rootControlledBuildDirectory)
        try #require(ProcessIdentity.rootControlledFile(atPath: here) == nil, "a directory is not a program")
        var template = Array("\(here)/rootcheck.XXXXXX".utf8CString)
        let directory = try #require(mkdtemp(&template).map { String(cString: $0) })
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #require(chmod(directory, 0o755) == 0)
        let file = directory + "/tool"
        try "#!/bin/sh\n".write(toFile: file, atomically: true, encoding: .utf8)
        try #require(chmod(file, 0o755) == 0)
        try #require(ProcessIdentity.rootControlledFile(atPath: file) != nil)
        let cases: [(what: String, change: () -> Int32, undo: () -> Int32)] = [
            ("a file others may write", { chmod(file, 0o757) }, { chmod(file, 0o755) }),
            (
                "a file a non-root group may write", { chown(file, 0, 65534) == 0 ? chmod(file, 0o775) : -1 },
                { chown(file, 0, 0) == 0 ? chmod(file, 0o755) : -1 }
            ),
            ("a file another user owns", { chown(file, 65534, 0) }, { chown(file, 0, 0) }),
            ("a directory others may write", { chmod(directory, 0o777) }, { chmod(directory, 0o755) }),
            ("a sticky directory others may write, as /tmp", { chmod(directory, 0o1777) }, { chmod(directory, 0o755) }),
            ("a directory another user owns", { chown(directory, 65534, 0) }, { chown(directory, 0, 0) }),
        ]
        for entry in cases {
            try #require(entry.change() == 0, "\(entry.what)")
            #expect(ProcessIdentity.rootControlledFile(atPath: file) == nil, "\(entry.what)")
            try #require(entry.undo() == 0)
            #expect(ProcessIdentity.rootControlledFile(atPath: file) != nil, "\(entry.what), undone")
        }
        // Root's group may write: it is root's.
        #expect(chmod(file, 0o775) == 0)
        #expect(ProcessIdentity.rootControlledFile(atPath: file) != nil)
    }

    @Test func snapNamesComeFromAppArmorLabels() {
        #expect(ProcessIdentity.snapName(fromLabel: "snap.spotify.spotify (enforce)") == "spotify")
        #expect(ProcessIdentity.snapName(fromLabel: "snap.firefox.hook.configure (enforce)") == "firefox")
        #expect(ProcessIdentity.snapName(fromLabel: "unconfined") == nil)
        #expect(ProcessIdentity.snapName(fromLabel: "snap-update-ns.firefox (enforce)") == nil)
        #expect(ProcessIdentity.snapName(fromLabel: "snap..x (enforce)") == nil)
        #expect(ProcessIdentity.snapName(fromLabel: nil) == nil)
    }

    /// Without ptrace access (another user's process, a daemon without CAP_SYS_PTRACE) the
    /// namespaces cannot be read; what anyone may read still shows a Flatpak's unit and a
    /// pid namespace of its own.
    @Test func whatAnyoneMayReadStillShowsSomeSandboxes() throws {
        try withTemporaryDirectory { procRoot in
            try FileManager.default.createDirectory(atPath: "\(procRoot)/self/ns", withIntermediateDirectories: true)
            try "".write(toFile: "\(procRoot)/self/ns/user", atomically: true, encoding: .utf8)
            for (pid, nspid) in [(31, "31\t2"), (32, "32"), (33, "33")] {
                try FileManager.default.createDirectory(atPath: "\(procRoot)/\(pid)", withIntermediateDirectories: true)
                try "Name:\tapp\nNSpid:\t\(nspid)\nNStgid:\t\(nspid)\n".write(toFile: "\(procRoot)/\(pid)/status", atomically: true, encoding: .utf8)
            }
            let units: (Int32) -> String? = { $0 == 33 ? "app-flatpak-org.test.B-4242.scope" : "app-gnome-org.test.C-1.scope" }
            #expect(ProcessIdentity.sandbox(pid: 31, procRoot: procRoot, userUnit: units) == .pidNamespace)
            guard case .uninspectable = ProcessIdentity.sandbox(pid: 32, procRoot: procRoot, userUnit: units) else {
                Issue.record("a process that could not be inspected counted as unconfined")
                return
            }
            #expect(ProcessIdentity.sandbox(pid: 33, procRoot: procRoot, userUnit: units) == .flatpak(appID: "org.test.B", ownUserNamespace: true))
        }
        #expect(ProcessIdentity.ownsPIDNamespace(pid: getpid(), procRoot: "/proc") == false)
    }

    /// A daemon serving other users does not open the root of a process in another user
    /// namespace: its owner may have put a FUSE mount there that never answers.
    @Test func foreignRootsAreLeftAloneWhenAsked() throws {
        try withTemporaryDirectory { procRoot in
            for (path, contents) in [("self/ns/user", "ours"), ("41/ns/user", "theirs")] {
                try FileManager.default.createDirectory(
                    atPath: "\(procRoot)/" + (path as NSString).deletingLastPathComponent,
                    withIntermediateDirectories: true)
                try contents.write(toFile: "\(procRoot)/\(path)", atomically: true, encoding: .utf8)
            }
            try FileManager.default.createDirectory(atPath: "\(procRoot)/41/root", withIntermediateDirectories: true)
            #expect(mkfifo("\(procRoot)/41/root/.flatpak-info", 0o644) == 0)
            let none: (Int32) -> String? = { _ in nil }
            guard case .uninspectable = ProcessIdentity.sandbox(pid: 41, procRoot: procRoot, userUnit: none) else {
                Issue.record("the FIFO was not looked at")
                return
            }
            #expect(ProcessIdentity.sandbox(pid: 41, procRoot: procRoot, userUnit: none, readingForeignRoots: false) == .userNamespace)
            #expect(
                ProcessIdentity.sandbox(
                    pid: 41, procRoot: procRoot, userUnit: { _ in "app-flatpak-org.test.B-7.scope" },
                    readingForeignRoots: false) == .flatpak(appID: "org.test.B", ownUserNamespace: true))
        }
    }
}
