import Foundation
import IslandJSON
import OrderedCollections
import Synchronization
import Testing
import VarlinkCore

/// The fuzz corpus of Fuzz/Corpus/fuzz-varlink-message (issue #6), replayed in a debug build
/// with assertions: every frame of every input decodes or is refused, and every call that
/// decodes gets exactly one final reply from validation against the daemon's interfaces.
@Suite struct FuzzCorpusTests {
    static let corpus = RepositoryFiles.root.appendingPathComponent("Fuzz/Corpus/fuzz-varlink-message")

    private final class Sink: VarlinkReplySink {
        let finals = Mutex(0)
        func send(_ reply: VarlinkReply, final: Bool) { if final { finals.withLock { $0 += 1 } } }
        func onCancel(_ callback: @escaping @Sendable () -> Void) {}
        var isWritable: Bool { true }
    }

    @Test func everyInputIsAnsweredOrRefused() throws {
        let service = VarlinkService(
            info: VarlinkServiceInfo(vendor: "test", product: "test", version: "0", url: "https://example.invalid"),
            implementations: try RepositoryFiles.interfaceFiles.filter { $0 != "org.island.Connection.varlink" }.map { file in
                VarlinkImplementation(interface: try VarlinkInterface(parsing: try RepositoryFiles.interface(file)), handlers: [:])
            },
            connectionErrors: VarlinkConnectionErrors(declaredBy: try VarlinkInterface(parsing: try RepositoryFiles.interface("org.island.Connection.varlink"))),
            canonicalTextOf: ["content", "state"])
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(files.count > 10)
        let connection = VarlinkConnectionContext(id: 1, peer: nil)
        var calls = 0
        for file in files {
            let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent(file)))
            // Complete frames only, as the NUL framing hands them on.
            for frame in bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast() {
                // Keeping the state as text changes what is refused in nothing, and keeps it only
                // as the canonical text of what a full parse makes of it.
                let whole = Result { () throws(VarlinkMessageError) in try VarlinkCall(frame: frame) }
                let kept = Result { () throws(VarlinkMessageError) in
                    try VarlinkCall(frame: frame, canonicalTextAt: ["parameters", "content", "state"])
                }
                switch (whole, kept) {
                case (.failure(let a), .failure(let b)):
                    #expect(a.reason == b.reason, "\(file)")
                    continue
                case (.success(let whole), .success(let call)):
                    calls += 1
                    if let text = call.canonicalText {
                        let state = whole.parameters["content"]?["state"]
                        #expect(state?.serialized() == text, "\(file)")
                        #expect((try? JSONParser.parse(text)) == state, "\(file)")
                    } else {
                        #expect(call.parameters == whole.parameters, "\(file)")
                    }
                    let sink = Sink()
                    service.dispatch(call, connection: connection, sink: sink)
                    #expect(sink.finals.withLock { $0 } == 1, "\(file)")
                default:
                    Issue.record("\(file): refused with the state kept as text and not without, or the reverse")
                }
            }
        }
        #expect(calls > 0)
    }
}
