import Foundation
import Glibc
import MQTT
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import IslandDaemon

/// The link process's frames read on the event loop: in order, bounded as the link's own
/// reader bounded them, and never more pushes in than the window holds.
@Suite struct LinkLoopReaderTests {
    /// A socket pair whose first end the reader reads on a loop of its own; the test writes
    /// frames to the second.
    final class Rig: Sendable {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let window: LoopWindow
        let reader: LinkLoopReader
        let writeEnd: Int32
        let record = Record()

        /// What the reader handed on, and how its stream ended (nil while it has not).
        final class Record: Sendable {
            let frames = Mutex<[MQTTLinkFrame]>([])
            let ended = Mutex<String??>(nil)
        }

        /// `refuse`: frames the sink refuses, with the reason it gives.
        init(capacity: Int, limit: Int = 1000, refuse: @escaping @Sendable (MQTTLinkFrame) -> String? = { _ in nil }) throws {
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            writeEnd = pair[1]
            let loop = group.next()
            window = LoopWindow(loop: loop, capacity: capacity)
            reader = try #require(LinkLoopReader(loop: loop, window: window))
            let (record, window) = (record, window)
            reader.read(
                pair[0], limit: limit,
                frame: { frame in
                    if let refusal = refuse(frame) { return refusal }
                    // As the push service does: a message takes a place until it is done.
                    if case .message = frame { window.enter() }
                    record.frames.withLock { $0.append(frame) }
                    return nil
                },
                ended: { reason in record.ended.withLock { $0 = .some(reason) } })
        }

        func write(_ bytes: [UInt8]) {
            let written = bytes.withUnsafeBytes { send(writeEnd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            #expect(written == bytes.count)
        }

        func closeWriting() { Glibc.shutdown(writeEnd, Int32(SHUT_WR)) }

        /// A push is done, on the loop, as the engine's completion frees it.
        func leave() async throws {
            // Not `self`: the rig must never be released on the loop, whose group it shuts down.
            let window = window
            // Awaited, not `wait()`ed: a test never blocks a thread of the pool the others run on.
            try await group.next().submit { window.leave() }.get()
        }

        /// Everything the loop had to do before now is done: a read already under way, and
        /// what it handed on.
        func settle() async throws {
            for _ in 0..<3 { try await group.next().submit {}.get() }
        }

        var handed: [MQTTLinkFrame] { record.frames.withLock { $0 } }
        var end: String?? { record.ended.withLock { $0 } }

        /// Waits, up to the liveness bound, for `condition`.
        func until(_ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while !condition() {
                guard ContinuousClock.now < deadline else {
                    Issue.record("not within 30 s")
                    return
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }

        deinit {
            close(writeEnd)
            // Not `syncShutdownGracefully`: it would block the pool's thread that releases the
            // rig until the loop's thread has ended.
            group.shutdownGracefully { _ in }
        }
    }

    static func message(_ n: Int) -> MQTTLinkFrame {
        .message(session: "kitchen/org.example.Pizza", topic: "island/kitchen/channel/\(n)", payload: Array("{\"n\": \(n)}".utf8))
    }

    @Test func framesAreHandedOnInOrderWhateverTheReadsCutThem() async throws {
        let rig = try Rig(capacity: 64)
        let frames: [MQTTLinkFrame] = [.connected(session: "kitchen", broker: 0, sessionPresent: true), Self.message(1), Self.message(2)]
        let bytes = frames.flatMap(\.encoded)
        // A frame's length alone, then the rest of it with part of the next, then the rest.
        rig.write(Array(bytes[0..<2]))
        try await rig.settle()
        rig.write(Array(bytes[2..<20]))
        try await rig.settle()
        rig.write(Array(bytes[20...]))
        try await rig.until { rig.handed.count == 3 }
        #expect(rig.handed == frames)
        rig.closeWriting()
        try await rig.until { rig.end != nil }
        #expect(rig.end == .some(nil), "a stream that ends between frames ends cleanly")
    }

    @Test func nothingMoreIsReadWhileTheWindowIsFull() async throws {
        let rig = try Rig(capacity: 2)
        rig.write((1...4).flatMap { Self.message($0).encoded })
        try await rig.until { rig.handed.count == 2 }
        try await rig.settle()
        #expect(rig.handed == [Self.message(1), Self.message(2)], "two pushes in, and the window holds two")
        try await rig.leave()
        try await rig.until { rig.handed.count == 3 }
        try await rig.settle()
        #expect(rig.handed.count == 3)
        try await rig.leave()
        try await rig.until { rig.handed.count == 4 }
        #expect(rig.handed == (1...4).map(Self.message))
    }

    @Test func framesReadBeforeTheStreamEndedAreHandedOnAsRoomIsMade() async throws {
        let rig = try Rig(capacity: 1)
        rig.write((1...3).flatMap { Self.message($0).encoded })
        rig.closeWriting()
        try await rig.until { rig.handed.count == 1 }
        try await rig.settle()
        #expect(rig.end == nil, "the stream is not over while what it brought waits for room")
        try await rig.leave()
        try await rig.until { rig.handed.count == 2 }
        try await rig.leave()
        try await rig.until { rig.end != nil }
        #expect(rig.handed == (1...3).map(Self.message))
        #expect(rig.end == .some(nil))
    }

    @Test func aFrameOverTheLimitEndsTheStreamBeforeItIsRead() async throws {
        let rig = try Rig(capacity: 64, limit: 100)
        // Its header alone: the reader must refuse it without waiting for the body.
        rig.write([0, 0, 0, 101])
        try await rig.until { rig.end != nil }
        #expect(rig.end??.contains("a frame of 101 bytes, over the limit of 100") == true)
        #expect(rig.handed.isEmpty)
    }

    @Test func aStreamThatEndsWithinAFrameIsNoCleanEnd() async throws {
        let rig = try Rig(capacity: 64)
        rig.write(Array(Self.message(1).encoded.dropLast(3)))
        rig.closeWriting()
        try await rig.until { rig.end != nil }
        #expect(rig.end??.contains("the stream ended within a frame") == true)
        #expect(rig.handed.isEmpty)
    }

    @Test func aFrameTheSinkRefusesEndsTheStreamAndClosesTheSocket() async throws {
        let rig = try Rig(capacity: 64) { frame in
            if case .done = frame { "the MQTT link process sent a frame only the daemon sends" } else { nil }
        }
        rig.write(Self.message(1).encoded + MQTTLinkFrame.done(session: "kitchen").encoded + Self.message(2).encoded)
        try await rig.until { rig.end != nil }
        #expect(rig.end == .some("the MQTT link process sent a frame only the daemon sends"))
        #expect(rig.handed == [Self.message(1)], "nothing after the refused frame")
        // The daemon's end is closed: the link process reads the end of its stream.
        var byte: UInt8 = 0
        #expect(Glibc.read(rig.writeEnd, &byte, 1) == 0)
    }
}
