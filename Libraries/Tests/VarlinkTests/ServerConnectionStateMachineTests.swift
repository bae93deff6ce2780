import OrderedJSON
import OrderedCollections
import Synchronization
import Testing
import VarlinkCore

/// The order of one connection's calls and replies, event by event, without a channel.
@Suite struct ServerConnectionStateMachineTests {
    /// Drives a state machine the way a transport does, and records what it was told to do.
    struct Connection {
        var machine: ServerConnectionStateMachine
        /// Calls started, by serial.
        var started: [UInt64: VarlinkCall] = [:]
        var startOrder: [String] = []
        /// Replies written, as their text.
        var written: [String] = []
        var closed = false
        var reads = 0
        var budgetLeft = true
        var peerKeepsUp = true

        init(
            maximumQueuedCalls: Int = 64, maximumQueuedBytes: Int = 1 << 20,
            errors: VarlinkConnectionErrors = TestService.connectionErrors,
            reserve: ServerConnectionStateMachine.Reserve? = nil
        ) {
            machine = ServerConnectionStateMachine(
                maximumQueuedCalls: maximumQueuedCalls, maximumQueuedBytes: maximumQueuedBytes,
                errors: errors, callReader: .trees, reserve: reserve)
        }

        /// Carries out steps until the machine waits.
        mutating func advance() {
            while true {
                switch machine.nextStep(budgetLeft: budgetLeft, peerKeepsUp: peerKeepsUp) {
                case .start(let call, let serial, _):
                    started[serial] = call
                    startOrder.append(call.parameters["id"]?.stringValue ?? call.method)
                case .write(let reply):
                    written.append(String(decoding: reply.encoded(), as: UTF8.self))
                case .closeWhenWritten:
                    closed = true
                    return
                case .read:
                    reads += 1
                    return
                case .wait:
                    return
                }
            }
        }

        /// Calls read from the peer, then the steps they lead to.
        mutating func receive(_ calls: String..., moreBuffered: Bool = false) {
            for call in calls { machine.frameReceived(Array(call.utf8), moreBuffered: moreBuffered) }
            advance()
        }

        /// The serial of the call whose `id` parameter, or else method, is `id`.
        func serial(_ id: String) -> UInt64 {
            started.first { ($0.value.parameters["id"]?.stringValue ?? $0.value.method) == id }!.key
        }

        /// A reply to the call `id`, from its handler.
        mutating func reply(_ id: String, _ text: String = "", final: Bool = true) {
            let reply = VarlinkReply(parameters: ["id": .string(id), "text": .string(text)], continues: !final)
            if machine.replyArrived(reply, final: final, serial: serial(id)) {
                written.append(String(decoding: reply.encoded(), as: UTF8.self))
            }
            if final { advance() }
        }

        mutating func release(_ id: String) {
            if machine.release(serial: serial(id)) { advance() }
        }
    }

    static func call(_ id: String, _ flags: String = "") -> String {
        #"{"method":"org.example.test.Hold","parameters":{"id":"\#(id)"}\#(flags)}"#
    }

    static func answer(_ id: String, _ text: String = "", continues: Bool = false) -> String {
        #"{"parameters":{"id":"\#(id)","text":"\#(text)"}\#(continues ? #","continues":true"# : "")}"#
    }

    static let shuttingDown = #"{"error":"org.example.connection.ShuttingDown","parameters":{}}"#

    @Test func callsStartOneAtATimeInTheOrderTheyCame() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("b"), Self.call("c"))
        #expect(connection.startOrder == ["a"])
        connection.reply("a")
        #expect(connection.startOrder == ["a", "b"])
        connection.reply("b")
        connection.reply("c")
        #expect(connection.startOrder == ["a", "b", "c"])
        #expect(connection.written == [Self.answer("a"), Self.answer("b"), Self.answer("c")])
        #expect(connection.machine.lifecycle == .open)
    }

    @Test func aReleasedCallLetsTheNextStartButItsRepliesComeFirst() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("b"), Self.call("c"))
        connection.release("a")
        #expect(connection.startOrder == ["a", "b"])
        connection.release("b")
        #expect(connection.startOrder == ["a", "b", "c"])
        // The later calls finish first: their replies wait for the first's.
        connection.reply("c")
        connection.reply("b")
        #expect(connection.written.isEmpty)
        connection.reply("a")
        #expect(connection.written == [Self.answer("a"), Self.answer("b"), Self.answer("c")])
    }

    @Test func aStreamsRepliesGoAtOnceAndItHoldsTheConnectionUntilItEnds() {
        var connection = Connection()
        connection.receive(Self.call("s", #","more":true"#), Self.call("b"))
        connection.release("s")
        #expect(connection.startOrder == ["s"], "a stream has no decision point to release at")
        connection.reply("s", "1", final: false)
        connection.reply("s", "2", final: false)
        #expect(connection.written == [Self.answer("s", "1", continues: true), Self.answer("s", "2", continues: true)])
        connection.reply("s", "3")
        #expect(connection.startOrder == ["s", "b"])
    }

    @Test func aStreamBehindAReleasedCallWaitsItsTurnToWrite() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("s", #","more":true"#))
        connection.release("a")
        connection.reply("s", "1", final: false)
        connection.reply("s", "2", final: false)
        #expect(connection.written.isEmpty)
        connection.reply("a")
        #expect(connection.written == [Self.answer("a"), Self.answer("s", "1", continues: true), Self.answer("s", "2", continues: true)])
        connection.reply("s", "3", final: false)
        #expect(connection.written.last == Self.answer("s", "3", continues: true))
    }

    @Test func aOnewayCallIsAnsweredWithNothing() {
        var connection = Connection()
        connection.receive(Self.call("quiet", #","oneway":true"#), Self.call("b"))
        connection.reply("quiet")
        connection.reply("b")
        #expect(connection.written == [Self.answer("b")])
    }

    @Test func nothingStartsWhileThePeerIsNotReadingOrTheBudgetIsSpent() {
        var connection = Connection()
        connection.peerKeepsUp = false
        connection.receive(Self.call("a"))
        #expect(connection.startOrder.isEmpty)
        connection.peerKeepsUp = true
        connection.budgetLeft = false
        connection.advance()
        #expect(connection.startOrder.isEmpty)
        connection.budgetLeft = true
        connection.advance()
        #expect(connection.startOrder == ["a"])
    }

    /// Read-ahead is bounded by calls and by bytes; a held read resumes once there is room.
    @Test(arguments: [(2, 1 << 20), (64, 60)])
    func readsStopWhileTooMuchWaitsToStart(maximumQueuedCalls: Int, maximumQueuedBytes: Int) {
        var connection = Connection(maximumQueuedCalls: maximumQueuedCalls, maximumQueuedBytes: maximumQueuedBytes)
        connection.receive(Self.call("a"), Self.call("b"), Self.call("c"))
        let mayReadWhileFull = connection.machine.readRequested(peerKeepsUp: true)
        #expect(!mayReadWhileFull)
        connection.reply("a")
        connection.reply("b")
        #expect(connection.reads == 1, "the held read is given back once calls have left the queue")
        let mayRead = connection.machine.readRequested(peerKeepsUp: true)
        #expect(mayRead)
        let mayReadWhileUnread = connection.machine.readRequested(peerKeepsUp: false)
        #expect(!mayReadWhileUnread, "nor while the peer is not reading")
    }

    @Test func releasedCallsUnansweredAreBoundedToo() {
        var connection = Connection(maximumQueuedCalls: 2)
        connection.receive(Self.call("a"), Self.call("b"), Self.call("c"))
        connection.release("a")
        connection.release("b")
        #expect(connection.startOrder == ["a", "b"])
        connection.reply("a")
        #expect(connection.startOrder == ["a", "b", "c"])
    }

    @Test func afterAHalfCloseEveryCallIsAnsweredThenTheConnectionCloses() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("b"))
        connection.machine.inputClosed()
        connection.advance()
        #expect(connection.machine.lifecycle == .inputClosed)
        connection.reply("a")
        #expect(!connection.closed)
        connection.reply("b")
        #expect(connection.written == [Self.answer("a"), Self.answer("b")])
        #expect(connection.closed)
        #expect(connection.machine.lifecycle == .closed)
    }

    /// A fatal frame is answered after every call read before it — a released one included —
    /// and nothing after it starts.
    @Test func aFatalFrameBehindAPendingCallIsAnsweredAfterIt() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("b"))
        connection.machine.inputFailed(.messageTooLarge(limit: 8))
        connection.receive(Self.call("after"))
        connection.release("a")
        connection.release("b")
        #expect(connection.startOrder == ["a", "b"])
        #expect(connection.machine.lifecycle == .ending)
        connection.reply("b")
        #expect(connection.written.isEmpty && !connection.closed)
        connection.reply("a")
        #expect(
            connection.written == [
                Self.answer("a"), Self.answer("b"),
                #"{"error":"org.example.connection.MessageTooLarge","parameters":{"limit":8}}"#,
            ])
        #expect(connection.closed)
        #expect(connection.startOrder == ["a", "b"])
    }

    @Test func aMalformedMessageEndsTheConnectionWithItsReason() {
        var connection = Connection()
        connection.receive(Self.call("a"), "{not json}", Self.call("after"))
        connection.reply("a")
        #expect(connection.written.count == 2)
        #expect(connection.written.last?.contains("org.example.connection.InvalidMessage") == true)
        #expect(connection.written.last?.contains("invalid JSON") == true)
        #expect(connection.closed)
        #expect(connection.startOrder == ["a"])
    }

    @Test func withoutConnectionErrorsAFatalFrameClosesWithoutAWord() {
        var connection = Connection(errors: .silent)
        connection.receive(Self.call("a"), "{not json}")
        connection.reply("a")
        #expect(connection.written == [Self.answer("a")])
        #expect(connection.closed)
    }

    /// The peer leaves with a call in progress and calls queued behind it: the call runs to its
    /// end unheard, the oneway calls still start in order, the one that wanted a reply does not.
    @Test func aPeerGoneStillHasItsOnewayCallsMade() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("o1", #","oneway":true"#), Self.call("b"), Self.call("o2", #","oneway":true"#))
        let cancelled = connection.machine.peerClosed()
        #expect(cancelled.isEmpty)
        #expect(connection.machine.lifecycle == .peerGone)
        connection.peerKeepsUp = false
        connection.budgetLeft = false
        connection.reply("a")
        #expect(connection.startOrder == ["a", "o1"], "a peer gone neither reads nor is owed a turn")
        connection.reply("o1")
        #expect(connection.startOrder == ["a", "o1", "o2"])
        connection.reply("o2")
        #expect(connection.written.isEmpty)
        #expect(connection.machine.lifecycle == .closed)
        #expect(!connection.closed, "a connection whose peer is gone is already closed")
    }

    @Test func aPeerGoneEndsItsStreamsAndAMalformedMessageEndsTheRest() {
        var connection = Connection()
        let ended = Mutex(0)
        connection.receive(Self.call("s", #","more":true"#), Self.call("o", #","oneway":true"#), "{not json}", Self.call("o2", #","oneway":true"#))
        let kept = connection.machine.onCancel(serial: connection.serial("s")) { ended.withLock { $0 += 1 } }
        #expect(kept)
        let callbacks = connection.machine.peerClosed()
        #expect(callbacks.count == 1)
        for callback in callbacks { callback() }
        #expect(ended.withLock { $0 } == 1)
        // The stream's handler does not know yet: what it says goes nowhere.
        connection.reply("s", "late", final: false)
        connection.advance()
        connection.reply("o")
        #expect(connection.startOrder == ["s", "o"], "nothing after a malformed message would have run anyway")
        #expect(connection.written.isEmpty)
        #expect(connection.machine.lifecycle == .closed)
    }

    /// Shutting down with a stream open: the stream ends with ShuttingDown, in its turn; calls
    /// not started are refused, in order, after the replies of the calls before them; a oneway
    /// one is dropped; then the connection closes.
    @Test func shutdownWithAStreamOpen() {
        var connection = Connection()
        let ended = Mutex(0)
        connection.receive(Self.call("a"), Self.call("s", #","more":true"#), Self.call("o", #","oneway":true"#), Self.call("b"))
        connection.release("a")
        let kept = connection.machine.onCancel(serial: connection.serial("s")) { ended.withLock { $0 += 1 } }
        #expect(kept)
        connection.reply("s", "1", final: false)

        let callbacks = connection.machine.quiesce()
        #expect(callbacks.count == 1)
        for callback in callbacks { callback() }
        connection.advance()
        #expect(connection.machine.lifecycle == .quiescing)
        #expect(connection.written.isEmpty, "all of it waits for the call in progress")
        // The stream's handler learns late; what it still says is not written.
        connection.reply("s", "2", final: false)
        connection.reply("a")
        #expect(connection.written == [Self.answer("a"), Self.answer("s", "1", continues: true), Self.shuttingDown, Self.shuttingDown])
        #expect(connection.startOrder == ["a", "s"])
        #expect(connection.closed)
        #expect(ended.withLock { $0 } == 1)
        let again = connection.machine.quiesce()
        #expect(again.isEmpty, "a connection shuts down once")
    }

    @Test func shutdownWhileIdleClosesAtOnce() {
        var connection = Connection()
        connection.receive(Self.call("a"))
        connection.reply("a")
        let streamsEnded = connection.machine.quiesce()
        #expect(streamsEnded.isEmpty)
        connection.advance()
        #expect(connection.closed)
    }

    @Test func aPeerLeavingWhileShuttingDownLeavesNothingToStart() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("o", #","oneway":true"#))
        _ = connection.machine.quiesce()
        _ = connection.machine.peerClosed()
        connection.reply("a")
        #expect(connection.startOrder == ["a"])
        #expect(connection.written.isEmpty)
        #expect(connection.machine.lifecycle == .closed)
    }

    @Test func closingCutsEveryCallOffAndIgnoresWhatComesAfter() {
        var connection = Connection()
        let cancelled = Mutex(0)
        connection.receive(Self.call("a"), Self.call("b"))
        connection.release("a")
        for id in ["a", "b"] {
            let kept = connection.machine.onCancel(serial: connection.serial(id)) { cancelled.withLock { $0 += 1 } }
            #expect(kept)
        }
        for callback in connection.machine.close() { callback() }
        #expect(cancelled.withLock { $0 } == 2)
        connection.reply("a")
        connection.receive(Self.call("c"))
        #expect(connection.written.isEmpty)
        #expect(connection.startOrder == ["a", "b"])
        let released = connection.machine.release(serial: 1)
        #expect(!released)
        let kept = connection.machine.onCancel(serial: 1) {}
        #expect(!kept, "the caller runs it at once")
    }

    @Test func aCallOverKeepsNoCancellation() {
        var connection = Connection()
        connection.receive(Self.call("a"), Self.call("b"))
        connection.release("a")
        connection.reply("b")
        let serial = connection.serial("b")
        let kept = connection.machine.onCancel(serial: serial) { Issue.record("a call that was answered is not cancelled") }
        #expect(kept)
        for callback in connection.machine.close() { callback() }
    }

    static let reserve: ServerConnectionStateMachine.Reserve = (.tooManyConnections(limit: 1, scope: .user), ["org.example.test"])
    static let refusal = #"{"error":"org.example.connection.TooManyConnections","parameters":{"limit":1,"scope":"user"}}"#

    @Test func aConnectionInTheReserveMayAskForDescriptionsThenMustCallAReservedInterface() {
        var connection = Connection(reserve: Self.reserve)
        connection.receive(#"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"org.example.test"}}"#)
        connection.reply("org.varlink.service.GetInterfaceDescription")
        connection.receive(Self.call("a"))
        connection.reply("a")
        connection.machine.probationExpired()
        connection.advance()
        #expect(connection.startOrder == ["org.varlink.service.GetInterfaceDescription", "a"])
        #expect(connection.written.count == 2)
        #expect(!connection.closed, "having kept to its terms, it stays")
    }

    @Test func aConnectionInTheReserveThatCallsAnythingElseIsRefused() {
        var connection = Connection(reserve: Self.reserve)
        connection.receive(#"{"method":"org.varlink.service.GetInfo"}"#, Self.call("a"))
        #expect(connection.startOrder.isEmpty)
        #expect(connection.written == [Self.refusal])
        #expect(connection.closed)
    }

    @Test func aConnectionInTheReserveThatCallsNothingInTimeIsRefusedAfterTheCallsInProgress() {
        var connection = Connection(reserve: Self.reserve)
        connection.receive(#"{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"org.example.test"}}"#)
        connection.machine.probationExpired()
        connection.advance()
        #expect(connection.written.isEmpty)
        connection.reply("org.varlink.service.GetInterfaceDescription")
        #expect(connection.written.count == 2)
        #expect(connection.written.last == Self.refusal)
        #expect(connection.closed)
    }
}
