#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import IslandPaths

/// A directory another user controls is refused; one that is ours (or root's, or sticky) is not.
@Suite struct PrivateDirectoryTests {
    func makeDirectory(mode: mode_t) throws -> String {
        let path = NSTemporaryDirectory() + "island-private-\(UUID().uuidString)"
        #expect(mkdir(path, 0o700) == 0)
        #expect(chmod(path, mode) == 0)
        return path
    }

    @Test func aRuntimeDirectoryMustBeOursAndMode0700() throws {
        let uid = getuid()
        let good = try makeDirectory(mode: 0o700)
        defer { rmdir(good) }
        #expect(throws: Never.self) { try PrivateDirectory.checkRuntimeDirectory(good, uid: uid) }

        let open = try makeDirectory(mode: 0o755)
        defer { rmdir(open) }
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkRuntimeDirectory(open, uid: uid) }
        // Another user's directory, as seen by that user: this process's directories are not theirs.
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkRuntimeDirectory(good, uid: uid &+ 4242) }
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkRuntimeDirectory(good + "/missing", uid: uid) }
    }

    @Test func aLinkToADirectoryIsNotTheDirectory() throws {
        let target = try makeDirectory(mode: 0o700)
        defer { rmdir(target) }
        let link = target + "-link"
        #expect(symlink(target, link) == 0)
        defer { unlink(link) }
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkRuntimeDirectory(link, uid: getuid()) }
    }

    @Test func aDirectoryOthersMayWriteIsRefusedUnlessSticky() throws {
        let uid = getuid()
        let writable = try makeDirectory(mode: 0o777)
        defer { rmdir(writable) }
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkOwned(writable, uid: uid) }
        let groupWritable = try makeDirectory(mode: 0o770)
        defer { rmdir(groupWritable) }
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkOwned(groupWritable, uid: uid) }
        let sticky = try makeDirectory(mode: 0o1777)
        defer { rmdir(sticky) }
        #expect(throws: Never.self) { try PrivateDirectory.checkOwned(sticky, uid: uid) }
    }

    @Test func everyDirectoryAboveIsCheckedToo() throws {
        let uid = getuid()
        let top = try makeDirectory(mode: 0o777)
        defer { rmdir(top) }
        let inner = top + "/inner"
        #expect(mkdir(inner, 0o700) == 0)
        defer { rmdir(inner) }
        #expect(throws: Never.self) { try PrivateDirectory.checkOwned(inner, uid: uid) }
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkTree(inner, uid: uid) }
        #expect(chmod(top, 0o755) == 0)
        #expect(throws: Never.self) { try PrivateDirectory.checkTree(inner, uid: uid) }
    }

    @Test func aDirectoryOwnedByAnotherUserIsRefused() throws {
        let directory = try makeDirectory(mode: 0o755)
        defer { rmdir(directory) }
        // Root-owned directories are accepted for every uid, so as root give it away first.
        var stranger = getuid() &+ 4242
        if getuid() == 0 {
            #expect(chown(directory, 4242, 4242) == 0)
            stranger = 4343
        }
        #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.checkOwned(directory, uid: stranger) }
        #expect(throws: Never.self) { try PrivateDirectory.checkOwned("/usr", uid: stranger) }
    }
}
