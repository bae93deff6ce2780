import Foundation
import OrderedJSON
import OrderedCollections
import Synchronization
import Testing
import VarlinkCore

/// The fuzz corpus of Fuzz/Corpus/fuzz-varlink-message, replayed in a debug build with
/// assertions: every frame of every input decodes or is refused, and every call that decodes gets
/// exactly one final reply from validation against the daemon's interfaces. (IslandDaemonTests
/// replays it through the daemon's readers of calls from text.)
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
            connectionErrors: VarlinkConnectionErrors(declaredBy: try VarlinkInterface(parsing: try RepositoryFiles.interface("org.island.Connection.varlink")))
        )
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(files.count > 10)
        let connection = VarlinkConnectionContext(id: 1, peer: nil)
        var calls = 0
        for file in files {
            let bytes = Array(try Data(contentsOf: Self.corpus.appendingPathComponent(file)))
            // Complete frames only, as the NUL framing hands them on.
            for frame in bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast() {
                guard let call = try? VarlinkCall(frame: frame) else { continue }
                calls += 1
                let sink = Sink()
                service.dispatch(call, connection: connection, sink: sink)
                #expect(sink.finals.withLock { $0 } == 1, "\(file)")
            }
        }
        #expect(calls > 0)
    }
}
