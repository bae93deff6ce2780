#if canImport(Glibc)
import Glibc
#endif
import Foundation
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
}
