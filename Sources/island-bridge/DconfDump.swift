import Foundation
import IslandBridge

/// `dconf dump` of one directory: the values set there, and none of the schemas' defaults,
/// which GSettings cannot tell apart. On a thread of its own: the bus loop never waits for a
/// child process.
enum DconfDump {
    /// The dump of `directory`, or nil when dconf is missing, fails, or prints more than
    /// `GnomeLockScreen.maximumDumpBytes`; `answer` is called once, on that thread.
    static func read(_ directory: String, answer: @escaping @Sendable (String?) -> Void) {
        Thread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["dconf", "dump", directory]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                return answer(nil)
            }
            // Read as it comes, up to the bound; past it the child is ended rather than left
            // blocked on a full pipe.
            var data = Data()
            let handle = output.fileHandleForReading
            while data.count <= GnomeLockScreen.maximumDumpBytes, let chunk = try? handle.read(upToCount: 65536), !chunk.isEmpty {
                data.append(chunk)
            }
            let tooLong = data.count > GnomeLockScreen.maximumDumpBytes
            if tooLong { process.terminate() }
            process.waitUntilExit()
            guard !tooLong, process.terminationReason == .exit, process.terminationStatus == 0 else { return answer(nil) }
            answer(String(decoding: data, as: UTF8.self))
        }.start()
    }
}
