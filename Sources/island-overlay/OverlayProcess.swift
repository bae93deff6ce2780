import ArgumentParser
import FreeDesktop
import Foundation
import IslandOverlay
import IslandPaths
import IslandPresenter
import SmallFiles

/// The running overlay as other processes find it: its pid file, which `--toggle-list` signals.
extension IslandOverlayCommand {
    func toggleRunningList(_ paths: OverlayPaths) throws {
        // Any program of the user's may put a file of gigabytes where the pid file goes (it was
        // read whole), or a FIFO or a device: only a small regular file is read.
        let pidFile = try? readRegularText(paths.pidFile, limit: 64, followingLinks: false)
        let running = OverlayCommandLine.runningOverlay(pidFile: pidFile) { pid in
            try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        }
        switch running {
        case .failure(.noPidFile):
            throw fail("no running overlay (no \(paths.pidFile))", status: 1)
        case .failure(.notAnOverlay(let pid)):
            throw fail("no running overlay (pid \(pid) is not island-overlay)", status: 1)
        case .success(let pid):
            guard kill(pid, SIGUSR1) == 0 else { throw fail("no running overlay (pid \(pid) is not island-overlay)", status: 1) }
        }
    }
}

/// Where the overlay's files are: the XDG base directories as every Island program reads them
/// (FreeDesktop), and the runtime directory as the daemon's clients find it (IslandPaths).
struct OverlayPaths {
    var configHome: String
    /// <runtime directory>/island, where the running overlay's pid is kept.
    var runtimeDirectory: String

    init(environment: [String: String]) {
        configHome = BaseDirectories(environment: environment).configHome
        runtimeDirectory = SocketLocation.userRuntimeDirectory(environment: environment, uid: getuid()) + "/island"
    }

    var pidFile: String { runtimeDirectory + "/overlay.pid" }

    /// For `--toggle-list`; returns the file written, for removal at exit.
    func writePidFile() -> String? {
        mkdir(runtimeDirectory, 0o700)
        return (try? "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8)) != nil ? pidFile : nil
    }
}

/// The text of the user's configuration file or style sheet at `path`, or nil when there is
/// none or it cannot be read (said in the log). Any program of the user's can write the
/// configuration folder: only a regular file of at most 1 MiB is read (`readRegularFile`), and
/// what else is there is refused by name, never opened for reading. GTK's own loading of a
/// style sheet blocked the start for good on a FIFO and read /dev/zero into 2 GiB; a file of
/// gigabytes was read whole.
func readConfigurationFile(_ path: String, what: String) -> String? {
    do {
        return try readRegularText(path, limit: 1 << 20, followingLinks: true)
    } catch .system(errno: ENOENT) {
        return nil
    } catch {
        log("\(path): \(error.description); the \(what) is not read")
        return nil
    }
}

func log(_ message: String) {
    _ = writeAll("island-overlay: \(message)\n", to: 2)
}

/// Says why, and ends the command with `status`.
func fail(_ message: String, status: Int32) -> ExitCode {
    log(message)
    return ExitCode(status)
}
