// What every fuzz target shares. Built only by scripts/fuzz.sh (ISLAND_FUZZ=1).

import Glibc

/// Runs `body` on a thread with a 512 KiB stack, a sixteenth of the 8 MiB a daemon thread has,
/// so recursion that grows with the input overflows at the sizes libFuzzer tries (a few KiB)
/// rather than only at the sizes the daemon accepts.
public func onSmallStack(_ body: @escaping () -> Void) {
    final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setstacksize(&attributes, 512 * 1024)
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let created = pthread_create(
        &thread, &attributes,
        { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    pthread_attr_destroy(&attributes)
    guard created == 0 else { fatalError("pthread_create: \(created)") }
    pthread_join(thread, nil)
}
