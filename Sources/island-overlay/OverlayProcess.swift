import ArgumentParser
import FreeDesktop
import Foundation
import IslandOverlay
import IslandPaths
import IslandPresenter

/// The running overlay as other processes find it: its pid file, which `--toggle-list` signals.
extension IslandOverlayCommand {
    func toggleRunningList(_ paths: OverlayPaths) throws {
        let running = OverlayCommandLine.runningOverlay(pidFile: try? String(contentsOfFile: paths.pidFile, encoding: .utf8)) { pid in
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

func log(_ message: String) {
    _ = writeAll("island-overlay: \(message)\n", to: 2)
}

/// Says why, and ends the command with `status`.
func fail(_ message: String, status: Int32) -> ExitCode {
    log(message)
    return ExitCode(status)
}
