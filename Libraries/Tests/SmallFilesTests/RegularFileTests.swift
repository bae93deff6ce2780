#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

import SmallFiles

/// `readRegularFile` reads what a folder other programs write holds, and nothing else: each
/// of these would block or never end with a plain open and read.
@Suite struct RegularFileTests {
    @Test func aRegularFileIsReadWhole() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/x.desktop"
            try "[Desktop Entry]\n".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(try readRegularFile(path, limit: 64, followingLinks: false) == Array("[Desktop Entry]\n".utf8))
        }
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/x.desktop"
            #expect(mkfifo(path, 0o600) == 0)
            #expect(throws: SmallFileError.notRegularFile) { try readRegularFile(path, limit: 64, followingLinks: true) }
        }
    }

    @Test func aLinkToADeviceOrADirectoryIsRefused() throws {
        try withTemporaryDirectory { directory in
            for (name, target) in [("zero", "/dev/zero"), ("tty", "/dev/tty"), ("folder", directory)] {
                let path = "\(directory)/\(name).desktop"
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
                #expect(throws: SmallFileError.notRegularFile) { try readRegularFile(path, limit: 64, followingLinks: true) }
            }
        }
    }

    @Test func aLinkIsFollowedOnlyWhenAsked() throws {
        try withTemporaryDirectory { directory in
            try "entry".write(toFile: directory + "/target", atomically: false, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: directory + "/link", withDestinationPath: directory + "/target")
            #expect(try readRegularFile(directory + "/link", limit: 64, followingLinks: true) == Array("entry".utf8))
            #expect(throws: SmallFileError.notRegularFile) {
                try readRegularFile(directory + "/link", limit: 64, followingLinks: false)
            }
        }
    }

    @Test func aLargeFileIsRefusedBeforeItIsRead() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/huge.desktop"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            // Sparse: a terabyte that takes no room.
            #expect(truncate(path, 1 << 40) == 0)
            #expect(throws: SmallFileError.tooLarge(limit: 64)) { try readRegularFile(path, limit: 64, followingLinks: false) }
        }
    }

    @Test func aFileWithoutASizeStopsAtTheLimit() {
        // /proc's files say they hold nothing and then go on.
        #expect(throws: SmallFileError.tooLarge(limit: 16)) {
            try readRegularFile("/proc/self/maps", limit: 16, followingLinks: true)
        }
    }
}
