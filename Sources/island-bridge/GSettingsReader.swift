import Foundation

/// A boolean GSettings key, read with `gsettings get` (GLib's own reader, so whatever backend
/// the session uses is read as GNOME reads it). On a thread of its own: the bus loop never
/// waits for a child process.
enum GSettingsReader {
    /// The key's value, or nil when gsettings is missing, fails, or prints something else;
    /// `answer` is called once, on that thread.
    static func readBool(schema: String, key: String, answer: @escaping @Sendable (Bool?) -> Void) {
        Thread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["gsettings", "get", schema, key]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                return answer(nil)
            }
            // "true\n" or "false\n": a few bytes, read whole before waiting so a child that
            // prints more cannot block on a full pipe.
            let data = (try? output.fileHandleForReading.readToEnd()) ?? Data()
            process.waitUntilExit()
            guard process.terminationReason == .exit, process.terminationStatus == 0 else { return answer(nil) }
            switch String(decoding: data.prefix(16), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) {
            case "true": answer(true)
            case "false": answer(false)
            default: answer(nil)
            }
        }.start()
    }
}
