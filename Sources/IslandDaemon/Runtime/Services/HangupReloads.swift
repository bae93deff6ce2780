import ServiceLifecycle
import UnixSignals

/// SIGHUP reloads, as a unit's `ExecReload=kill -HUP $MAINPID` asks. The signal is trapped
/// before the group starts, since READY=1 promises a SIGHUP no longer ends the process.
struct HangupReloads: Service {
    let hangups: UnixSignalsSequence
    let reloader: Reloader

    func run() async {
        for await _ in hangups.cancelOnGracefulShutdown() {
            // A refused reload has been logged and keeps the running configuration.
            _ = try? await reloader.reload()
        }
    }
}
