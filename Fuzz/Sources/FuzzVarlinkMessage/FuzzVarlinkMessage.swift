// libFuzzer target `fuzz-varlink-message`: what a peer's bytes go through before any handler
// runs. Built only by scripts/fuzz.sh (ISLAND_FUZZ=1); see Fuzz/README.md.
//
// bytes → NULFrameDecoder (in one read, and again in small reads: both must give the same
//         frames and the same error) → VarlinkCall(frame:) → VarlinkService.dispatch against
//         the real Protocol/*.varlink interfaces, with no handlers registered, so a call that
//         passes validation ends in MethodNotImplemented and nothing but validation runs.
//
// Each input runs on a thread with a small stack (see onSmallStack). Errors are expected; a
// trap, a sanitizer report or a broken invariant (fatalError) is a bug.

import FuzzSupport
import Glibc
import OrderedJSON
import IslandProtocol
import NIOCore
import NIOEmbedded
import OrderedCollections
import Synchronization
import VarlinkCore
import VarlinkNIO

/// The daemon's interfaces, validation only: every method is declared, none is implemented.
private let service: VarlinkService = {
    let implementations = IslandInterfaces.daemon.map { text in
        VarlinkImplementation(interface: try! VarlinkInterface(parsing: text), handlers: [:])
    }
    return VarlinkService(
        info: VarlinkServiceInfo(vendor: "Island", product: "fuzz", version: "0", url: "https://example.invalid"),
        implementations: implementations,
        connectionErrors: VarlinkConnectionErrors(declaredBy: try! VarlinkInterface(parsing: IslandInterfaces.connection)))
}()

/// A small limit, so inputs of libFuzzer's sizes reach MessageTooLarge too.
private let maximumMessageSize = 2048

private final class CollectingSink: VarlinkReplySink {
    let replies = Mutex<[(VarlinkReply, Bool)]>([])
    func send(_ reply: VarlinkReply, final: Bool) { replies.withLock { $0.append((reply, final)) } }
    func onCancel(_ callback: @escaping @Sendable () -> Void) {}
    var isWritable: Bool { true }
}

/// The frames the decoder produces for `chunks` written one after another, and the error
/// that ended the stream (at the latest when the input closes), if any.
private func frames(of chunks: [ArraySlice<UInt8>]) -> (frames: [[UInt8]], error: String?) {
    let channel = EmbeddedChannel(handler: ByteToMessageHandler(NULFrameDecoder(maximumMessageSize: maximumMessageSize)))
    var frames: [[UInt8]] = []
    var failure: String?
    func drain() {
        while let frame = try? channel.readInbound(as: NULFrameDecoder.Frame.self) {
            frames.append(frame.bytes)
        }
    }
    for chunk in chunks {
        do {
            try channel.writeInbound(channel.allocator.buffer(bytes: chunk))
        } catch {
            failure = "\(error)"
            break
        }
        drain()
    }
    if failure == nil {
        do {
            _ = try channel.finish(acceptAlreadyClosed: true)
        } catch {
            failure = "\(error)"
        }
    } else {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
    drain()
    return (frames, failure)
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}

private func fuzzOne(_ bytes: [UInt8]) {
    // Framing: all at once, then in reads of 1…7 bytes; the incremental scan must not matter.
    let whole = frames(of: [bytes[...]])
    let step = bytes.count % 7 + 1
    let pieces = stride(from: 0, to: bytes.count, by: step).map { bytes[$0..<min($0 + step, bytes.count)] }
    let split = frames(of: pieces)
    check(whole.frames == split.frames, "frames differ between one read and reads of \(step) bytes")
    check((whole.error == nil) == (split.error == nil), "errors differ: \(whole.error ?? "none") / \(split.error ?? "none")")
    for frame in whole.frames {
        check(frame.count <= maximumMessageSize && !frame.contains(0), "a frame over the limit or with a NUL")
    }

    let connection = VarlinkConnectionContext(id: 1, peer: nil)
    for frame in whole.frames {
        let call: VarlinkCall
        do {
            call = try VarlinkCall(frame: frame)
        } catch {
            continue
        }
        // What the server would write for the call decodes back to the same call.
        let again: VarlinkCall
        do {
            again = try VarlinkCall(frame: call.encoded())
        } catch {
            fatalError("an encoded call does not decode: \(error)")
        }
        check(
            again.method == call.method && again.parameters == call.parameters
                && again.more == call.more && again.oneway == call.oneway && again.upgrade == call.upgrade,
            "a call does not survive encoding")

        let sink = CollectingSink()
        service.dispatch(call, connection: connection, sink: sink)
        let replies = sink.replies.withLock { $0 }
        check(replies.count == 1 && replies[0].1, "dispatch without handlers gave \(replies.count) replies")
        // The reply is a valid Varlink reply.
        do {
            _ = try VarlinkReply(frame: replies[0].0.encoded())
        } catch {
            fatalError("a reply does not decode: \(error)")
        }
    }
    connection.markClosed()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    onSmallStack { fuzzOne(bytes) }
    return 0
}
