import Foundation
import Glibc
import Synchronization
import MQTT
import ProcessTesting
import Testing

/// The daemon and its MQTT link process speak in frames the reader bounds before it allocates
/// them: whatever a broker sends the link process, the daemon takes at most a push's largest
/// packet and its topic.
@Suite struct MQTTLinkFrameTests {
    static let frames: [MQTTLinkFrame] = [
        .open(session: "kitchen-42/org.example.Coffee", configuration: Array(#"{"clientID":"kitchen-42"}"#.utf8)),
        .subscribe(session: "d/a", topic: "island/d/a/0123"),
        .unsubscribe(session: "d/a", topic: "island/d/a/0123"),
        .publish(session: "d/a", topic: "island/d/a/f/feedback", payload: Array("{}".utf8)),
        .publish(session: "d/a", topic: "island/d/a/f/feedback", payload: Array(#"{"outcome":"revoked"}"#.utf8), retain: true),
        .done(session: "d/a"),
        .message(session: "d/a", topic: "island/d/a/0123", payload: []),
        .message(session: "d/a", topic: "island/d/a/0123", payload: [UInt8](repeating: 7, count: 70_000)),
        .connected(session: "d", broker: 0, sessionPresent: true),
        .connected(session: "d", broker: 2, sessionPresent: false),
        .disconnected(session: "d", reason: "Out of memory.", retryIn: 1.25),
        .takenOver(session: "d", retryIn: 60),
        .packetTooLarge(session: "d/a", retryIn: 0.75, discardingSession: false),
        .packetTooLarge(session: "d/a", retryIn: 1.5, discardingSession: true),
        .subscription(session: "d/a", event: .granted(topic: "island/d/a/0123")),
        .subscription(session: "d/a", event: .refused(topic: "island/channels/a/xyz", code: 0x87, retryIn: 0.5)),
    ]

    /// Reads frames from `bytes` as from a stream.
    static func read(_ bytes: [UInt8], limit: Int) throws(MQTTLinkFrame.Invalid) -> [MQTTLinkFrame] {
        var offset = 0
        var frames: [MQTTLinkFrame] = []
        while let frame = try MQTTLinkFrame.read(
            limit: limit,
            { buffer in
                guard bytes.count - offset >= buffer.count else { return false }
                buffer.copyBytes(from: bytes[offset..<offset + buffer.count])
                offset += buffer.count
                return true
            })
        {
            frames.append(frame)
        }
        return frames
    }

    @Test func everyFrameReadsBackAsWritten() throws {
        let stream = Self.frames.flatMap(\.encoded)
        #expect(try Self.read(stream, limit: 1 << 20) == Self.frames)
    }

    /// The link process writes a message's frame from libmosquitto's bytes: the same bytes as
    /// the frame's own encoding, empty, multi-byte and large payloads alike.
    @Test(arguments: [0, 1, 300, 70_000])
    func aMessageWrittenFromItsBytesIsTheMessagesFrame(size: Int) {
        let topic = Array("island/channels/org.example.Café/☕".utf8)
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let written = topic.withUnsafeBufferPointer { topic in
            payload.withUnsafeBytes { MQTTLinkFrame.encodedMessage(session: "kitchen-42/org.example.Café", topic: topic, payload: $0) }
        }
        let frame = MQTTLinkFrame.message(
            session: "kitchen-42/org.example.Café", topic: String(decoding: topic, as: UTF8.self), payload: payload)
        #expect(written == frame.encoded)
    }

    /// A string's length is two bytes: a longer one is cut to its first 65,535 bytes.
    @Test func aStringLongerThanItsLengthCanSayIsCut() throws {
        let long = String(repeating: "x", count: 70_000)
        let frame = MQTTLinkFrame.disconnected(session: "d", reason: long, retryIn: 1)
        #expect(frame.encoded.count == MQTTLinkFrame.headerBytes + 1 + 3 + 8 + 2 + 65_535)
        #expect(try Self.read(frame.encoded, limit: 1 << 20) == [.disconnected(session: "d", reason: String(long.prefix(65_535)), retryIn: 1)])
    }

    /// Frames read from a socket through the buffered reader, written in pieces that cut
    /// across them (a length split from its body, several frames in one write, a body larger
    /// than the buffer), come out as written; the end of the stream between frames ends them,
    /// within one is refused.
    @Test(arguments: [3, 7, 4096, 100_000])
    func framesReadThroughTheBufferAreTheFramesWritten(piece: Int) async throws {
        let stream = Self.frames.flatMap(\.encoded)
        for (truncated, waitsWithPoll) in [(false, false), (true, false), (false, true), (true, true)] {
            var pair: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            let sent = truncated ? Array(stream.dropLast(3)) : stream
            let writer = Thread { [writing = pair[1]] in
                var offset = 0
                while offset < sent.count {
                    let count = min(piece, sent.count - offset)
                    let written = sent[offset..<offset + count].withUnsafeBytes { send(writing, $0.baseAddress!, count, Int32(MSG_NOSIGNAL)) }
                    guard written > 0 else { break }
                    offset += written
                }
                close(writing)
            }
            writer.start()
            defer { close(pair[0]) }
            // Read on a thread of its own: the reader blocks for as long as the writer takes.
            let (frames, failure) = await offThePool { [reading = pair[0]] () -> ([MQTTLinkFrame], String?) in
                var reader = BufferedStreamReader(descriptor: reading, capacity: 4096, waitsWithPoll: waitsWithPoll)
                var frames: [MQTTLinkFrame] = []
                do {
                    while let frame = try MQTTLinkFrame.read(limit: 1 << 20, { reader.fill($0) }) { frames.append(frame) }
                    return (frames, nil)
                } catch {
                    return (frames, "\(error)")
                }
            }
            if let failure {
                #expect(truncated && frames == Array(Self.frames.dropLast()), "\(failure)")
            } else {
                #expect(!truncated && frames == Self.frames)
            }
        }
    }

    /// The link process's main thread waits for the daemon's commands on the socket its
    /// sessions' threads write every message to; each time the daemon reads one, room is freed
    /// in the socket, which wakes a thread asleep in `read` there (to find nothing and sleep
    /// again), but not one asleep in `poll` for input.
    @Test func aReaderWaitingWithPollIsNotWokenAsTheOtherSideReadsWhatItsSocketWrote() async throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        let (ours, theirs) = (pair[0], pair[1])
        let frame = MQTTLinkFrame.message(session: "d/a", topic: "island/d/a/0123", payload: [UInt8](repeating: 7, count: 300)).encoded
        // The reader's own count of the times it went to sleep, until the one frame it is sent.
        let sleeps = Mutex<Int?>(nil)
        let readerPath = Mutex<String?>(nil)
        let readerEnded = DispatchSemaphore(value: 0)
        let reader = Thread {
            // `/proc/thread-self` names this thread's directory, `PID/task/TID`.
            let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
            readerPath.withLock { $0 = path }
            var stream = BufferedStreamReader(descriptor: ours, waitsWithPoll: true)
            let before = Self.voluntarySwitchesOfThisThread()
            let read = try? MQTTLinkFrame.read(limit: 1 << 20) { stream.fill($0) }
            let after = Self.voluntarySwitchesOfThisThread()
            sleeps.withLock { $0 = read == .done(session: "d/a") ? after - before : nil }
            readerEnded.signal()
        }
        reader.start()
        // Once the reader is asleep, waiting (a liveness bound, not a timing).
        let deadline = ContinuousClock.now + .seconds(60)
        while !Self.isAsleep(readerPath.withLock { $0 }) {
            try #require(ContinuousClock.now < deadline, "the reader never went to sleep")
            // Not `usleep`: a test never blocks a thread of the pool the others run on.
            try await Task.sleep(for: .milliseconds(1))
        }
        // 200 messages written on our side and read on theirs, one at a time, each read
        // freeing the room its message took while the reader sleeps.
        for _ in 0..<200 {
            let written = frame.withUnsafeBytes { send(ours, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            try #require(written == frame.count)
            var received = [UInt8](repeating: 0, count: frame.count)
            try #require(received.withUnsafeMutableBytes { recv(theirs, $0.baseAddress!, $0.count, Int32(MSG_WAITALL)) } == frame.count)
        }
        let done = MQTTLinkFrame.done(session: "d/a").encoded
        try #require(done.withUnsafeBytes { send(theirs, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) } == done.count)
        // Awaited off the pool; the bound only keeps a reader that never ends from hanging the test.
        try #require(await readerEnded.signalled(within: .seconds(60)), "the reader did not end")
        close(theirs)
        // Asleep once (until the frame came), not once for each of the 200 messages; a few
        // more allowed for whatever else puts a thread to sleep.
        let count = try #require(sleeps.withLock { $0 })
        #expect(count <= 5, "the reader slept \(count) times")
    }

    /// Whether the thread at `path` (under `/proc`) sleeps (its state there, `S`).
    static func isAsleep(_ path: String?) -> Bool {
        guard let path, let stat = try? String(contentsOfFile: "/proc/\(path)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).hasPrefix("S")
    }

    /// Voluntary context switches of the calling thread so far: the times it went to sleep.
    static func voluntarySwitchesOfThisThread() -> Int {
        var usage = rusage()
        // RUSAGE_THREAD, which the Glibc module leaves out (it is a GNU extension).
        getrusage(__rusage_who_t(1), &usage)
        return usage.ru_nvcsw
    }

    @Test func aFrameOverTheLimitIsRefusedFromItsHeaderAlone() {
        // A header announcing 256 MiB, and nothing after it: refused before any body is read.
        let header: [UInt8] = [0x10, 0, 0, 0]
        #expect(throws: MQTTLinkFrame.Invalid.self) { try Self.read(header, limit: 320 * 1024) }
        let large = MQTTLinkFrame.message(session: "d/a", topic: "t", payload: [UInt8](repeating: 0, count: 400 * 1024)).encoded
        #expect(throws: MQTTLinkFrame.Invalid.self) { try Self.read(large, limit: 320 * 1024) }
    }

    @Test func truncatedAndUnknownFramesAreRefused() {
        let whole = MQTTLinkFrame.subscribe(session: "d/a", topic: "island/d/a/0123").encoded
        #expect(throws: MQTTLinkFrame.Invalid.self) { try Self.read(Array(whole.dropLast()), limit: 1 << 20) }
        #expect(throws: MQTTLinkFrame.Invalid.self) { try Self.read([0, 0, 0, 1, 99], limit: 1 << 20) }
        #expect(throws: MQTTLinkFrame.Invalid.self) { try Self.read([0, 0, 0, 0], limit: 1 << 20) }
        #expect(throws: MQTTLinkFrame.Invalid.self) { try Self.read([0, 0, 0, 3, 2, 0, 9], limit: 1 << 20) }
    }

    @Test func theDaemonsLimitFitsTheLargestPacketItAsksForAndItsTopic() {
        let configuration = MQTTConfiguration(broker: MQTTBrokerAddress(host: "localhost", port: 1883, secure: false), clientID: "d")
        let limit = MQTTLinkProcess.frameLimit(for: configuration)
        let largest = MQTTLinkFrame.message(
            session: String(repeating: "s", count: 65_535), topic: String(repeating: "t", count: 65_535),
            payload: [UInt8](repeating: 0, count: Int(configuration.maximumPacketSize)))
        #expect(largest.encoded.count - MQTTLinkFrame.headerBytes <= limit)
        #expect(limit < 1 << 20)
    }
}
