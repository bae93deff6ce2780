import OrderedCollections
import OrderedJSON
import Synchronization
import Testing
import VarlinkCore

/// Calls of a method whose parameters are read from text (`VarlinkMethodHandler.reading`):
/// read without a tree when written the usual way, as trees otherwise, and answered alike
/// either way — the same values for the handler, the same refusals.
@Suite struct CallReaderTests {
    static let interface = try! VarlinkInterface(
        parsing: """
            interface org.example.read
            type Size (width: float, height: ?float)
            method Put(name: string, size: ?Size, note: ?string) -> (name: string, width: float, height: float, note: string)
            """)

    /// `Put`'s parameters, read as the daemon's are: from the tree, or from the text.
    struct PutParameters: VarlinkReadableParameters, Equatable {
        var name: String
        var size: (width: Double, height: Double?)?
        var note: String?

        static func == (a: PutParameters, b: PutParameters) -> Bool {
            a.name == b.name && a.size?.width == b.size?.width && a.size?.height == b.size?.height && a.note == b.note
        }

        init(_ call: VarlinkCall) throws(VarlinkError) {
            let p = call.parameters
            guard let name = p["name"]?.stringValue else { throw .invalidParameter("name") }
            self.name = name
            if let size = p["size"]?.objectValue {
                guard let width = size["width"]?.doubleValue else { throw .invalidParameter("size.width") }
                self.size = (width, size["height"]?.doubleValue)
            }
            note = p["note"]?.stringValue
        }

        init(reading reader: inout JSONReader) throws(JSONReader.Mismatch) {
            var seen = JSONReader.MembersSeen()
            var name: String?
            try reader.enterObject()
            while let key = try reader.nextKey() {
                switch key {
                case "name": try seen.insert(0); name = try reader.readString()
                case "size":
                    try seen.insert(1)
                    guard !reader.readNull() else { continue }
                    var inner = JSONReader.MembersSeen()
                    var width: Double?, height: Double?
                    try reader.enterObject()
                    while let key = try reader.nextKey() {
                        switch key {
                        case "width": try inner.insert(0); width = try reader.readNumber()
                        case "height": try inner.insert(1); height = reader.readNull() ? nil : try reader.readNumber()
                        default: throw JSONReader.Mismatch()
                        }
                    }
                    guard let width else { throw JSONReader.Mismatch() }
                    size = (width, height)
                case "note": try seen.insert(2); note = reader.readNull() ? nil : try reader.readString()
                default: throw JSONReader.Mismatch()
                }
            }
            guard let name else { throw JSONReader.Mismatch() }
            self.name = name
        }
    }

    /// What `Put`'s handler saw, and what it answered.
    final class Sink: VarlinkReplySink {
        let replies = Mutex<[VarlinkReply]>([])
        func send(_ reply: VarlinkReply, final: Bool) { replies.withLock { $0.append(reply) } }
        func onCancel(_ callback: @escaping @Sendable () -> Void) {}
        var isWritable: Bool { true }
    }

    /// A service whose `Put` reads its parameters from text, or, without `reading`, from trees.
    static func service(reading: Bool) -> VarlinkService {
        let handler = VarlinkMethodHandler.immediate { request throws(VarlinkError) in
            let p = try request.parameters(as: PutParameters.self)
            return [
                "name": .string(p.name), "width": .double(p.size?.width ?? -1), "height": .double(p.size?.height ?? -1),
                "note": .string(p.note ?? "-"),
            ]
        }
        return VarlinkService(
            info: VarlinkServiceInfo(vendor: "test", product: "test", version: "0", url: "https://example.invalid"),
            implementations: [VarlinkImplementation(interface: interface, handlers: ["Put": reading ? handler.reading(PutParameters.self) : handler])],
            connectionErrors: .silent)
    }

    /// The reply a service gives a frame, or the reason it refuses it as a message.
    static func outcome(of frame: String, by service: VarlinkService) -> String {
        let call: VarlinkCall
        do {
            call = try service.callReader.call(frame: Array(frame.utf8))
        } catch {
            return "refused: " + error.reason
        }
        let sink = Sink()
        service.dispatch(call, connection: VarlinkConnectionContext(id: 1, peer: nil), sink: sink)
        return sink.replies.withLock { $0.map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: " | ") }
    }

    static let frames = [
        // Read from their text:
        #"{"method":"org.example.read.Put","parameters":{"name":"a"}}"#,
        #"{"method":"org.example.read.Put","parameters":{"note":null,"size":{"height":2,"width":1.5},"name":"é"}}"#,
        #" { "method" : "org.example.read.Put" , "parameters" : { "name" : "a" , "size" : null } , "more" : false } "#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a\nb"},"oneway":null,"upgrade":false}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a"},"upgrade":true}"#,
        // Left to the tree, and answered or refused by it:
        #"{"parameters":{"name":"a"},"method":"org.example.read.Put"}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a","extra":1}}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a","name":"b"}}"#,
        #"{"method":"org.example.read.Put","parameters":{"\u006eame":"a"}}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":1}}"#,
        #"{"method":"org.example.read.Put","parameters":{"size":{"width":1}}}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a","size":{"height":1}}}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a","size":{"width":"1"}}}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a"},"more":1}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a"},"other":[1]}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a"},"method":"x.Y"}"#,
        #"{"method":"org.example.read.Put","parameters":null}"#,
        #"{"method":"org.example.read.Put"}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a"}} x"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a"}"#,
        #"{"method":"org.example.read.Put","parameters":{"name":"a\x"}}"#,
        #"{"method":"org.example.read.Pu","parameters":{"name":"a"}}"#,
    ]

    @Test func aCallIsAnsweredAlikeReadFromTextOrAsATree() {
        let reading = Self.service(reading: true), trees = Self.service(reading: false)
        for frame in Self.frames {
            #expect(Self.outcome(of: frame, by: reading) == Self.outcome(of: frame, by: trees), "\(frame)")
        }
        #expect(
            Self.outcome(of: Self.frames[1], by: reading)
                == #"{"parameters":{"name":"é","width":1.5,"height":2.0,"note":"-"}}"#)
    }

    @Test func onlyACallWrittenTheUsualWayIsReadFromText() throws {
        let reader = Self.service(reading: true).callReader
        for (index, frame) in Self.frames.enumerated() {
            guard let call = try? reader.call(frame: Array(frame.utf8)) else { continue }
            #expect((call.readParameters != nil) == (index < 5), "\(frame)")
            // The tree is there for whoever asks, read or not.
            #expect(call.parameters == (try VarlinkCall(frame: Array(frame.utf8))).parameters, "\(frame)")
        }
        let read = try reader.call(frame: Array(Self.frames[1].utf8))
        #expect(read.method == "org.example.read.Put" && !read.more && !read.oneway && !read.upgrade)
        #expect(read.readParameters?.value(as: PutParameters.self) == (try PutParameters(read)))
        #expect(read.readParameters?.value(as: Int.self) == nil, "read as one type, not another")
    }

    /// A handler may skip making the reply of a `oneway` call, which the transport throws away:
    /// its responder says so, and takes whatever it is sent (debug builds check every other
    /// reply against the method's output type).
    @Test func aOnewayCallsResponderSaysItsReplyIsDiscarded() throws {
        let seen = Mutex<[Bool]>([])
        let service = VarlinkService(
            info: VarlinkServiceInfo(vendor: "test", product: "test", version: "0", url: "https://example.invalid"),
            implementations: [
                VarlinkImplementation(
                    interface: Self.interface,
                    handlers: [
                        "Put": .responding { _, responder in
                            seen.withLock { $0.append(responder.discardsReply) }
                            responder.reply(
                                encoded: responder.discardsReply
                                    ? VarlinkEncodedParameters([:])
                                    : VarlinkEncodedParameters(["name": "a", "width": 1.0, "height": 2.0, "note": "-"]))
                        }
                    ])
            ],
            connectionErrors: .silent)
        for frame in [
            #"{"method":"org.example.read.Put","parameters":{"name":"a"},"oneway":true}"#,
            #"{"method":"org.example.read.Put","parameters":{"name":"a"}}"#,
        ] {
            let sink = Sink()
            service.dispatch(try VarlinkCall(frame: Array(frame.utf8)), connection: VarlinkConnectionContext(id: 1, peer: nil), sink: sink)
            #expect(sink.replies.withLock { $0.count } == 1, "\(frame)")
        }
        #expect(seen.withLock { $0 } == [true, false])
    }
}
