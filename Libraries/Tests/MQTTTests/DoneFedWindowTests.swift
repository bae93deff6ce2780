import Foundation
import Glibc
import MQTT
import ProcessTesting
import Synchronization
import Testing

/// The link process's window, told of the dones on a socket of their own that nobody reads
/// until a session wants a place: the dones that came free places without any wait, and a
/// thread that finds the window full goes on when the next done comes.
@Suite struct DoneFedWindowTests {
    /// A window over one end of a socket pair; the test writes the daemon's dones to the other.
    final class Rig: Sendable {
        let window: DoneFedWindow
        let daemonEnd: Int32
        let linkEnd: Int32

        init(_ window: MessageWindow) throws {
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            (linkEnd, daemonEnd) = (pair[0], pair[1])
            self.window = try DoneFedWindow(window, descriptor: linkEnd)
        }

        func done(_ session: String, split: Bool = false) {
            let bytes = MQTTLinkFrame.done(session: session).encoded
            for part in split ? [Array(bytes.prefix(3)), Array(bytes.dropFirst(3))] : [bytes] {
                _ = part.withUnsafeBytes { send(daemonEnd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }

        /// `session` enters on a thread of its own; signalled once it is in. The test waits for
        /// it off the pool (`signalled(within:)`): the thread may wait as long as the test lets it.
        func enterOnThread(_ session: String) -> DispatchSemaphore {
            let entered = DispatchSemaphore(value: 0)
            let window = window
            Thread {
                window.enter(session)
                entered.signal()
            }.start()
            return entered
        }

        deinit {
            close(linkEnd)
            close(daemonEnd)
        }
    }

    @Test func donesThatCameFreePlacesWithoutWaiting() async throws {
        let rig = try Rig(MessageWindow(capacity: 2, reserve: 1))
        rig.window.enter("a")
        rig.window.enter("b")
        rig.done("a")
        // Its frame in two writes: read whole across them.
        rig.done("b", split: true)
        // Full but for the two dones waiting on the socket, read before a place is taken.
        #expect(await rig.enterOnThread("a").signalled(within: .seconds(30)))
        #expect(await rig.enterOnThread("b").signalled(within: .seconds(30)))
    }

    @Test func aThreadThatFindsTheWindowFullGoesOnWhenADoneComes() async throws {
        let rig = try Rig(MessageWindow(capacity: 2, reserve: 1))
        rig.window.enter("a")
        rig.window.enter("b")
        let first = rig.enterOnThread("a")
        let second = rig.enterOnThread("c")
        // Both wait (one on the socket, one on the lock) until the dones come.
        #expect(await !first.signalled(within: .milliseconds(200)))
        rig.done("a")
        rig.done("b")
        #expect(await first.signalled(within: .seconds(30)))
        #expect(await second.signalled(within: .seconds(30)))
    }

    @Test func aThreadWaitingOnTheSocketGoesOnWhenAPlaceIsFreedOtherwise() async throws {
        let rig = try Rig(MessageWindow(capacity: 2, reserve: 0))
        rig.window.enter("a")
        rig.window.enter("a")
        let waiting = rig.enterOnThread("a")
        #expect(await !waiting.signalled(within: .milliseconds(200)))
        // A done that does not come on the socket the thread waits on (the main socket's).
        rig.window.leave("a")
        #expect(await waiting.signalled(within: .seconds(30)))
    }

    /// The window fills without reading a done while nobody waits; the dones then read free
    /// exactly the places their sessions held, however they come — runs of one session's
    /// and single ones in one read, more than a session holds (the extra ones ignored).
    @Test func donesReadLateFreeExactlyThePlacesTheyStandFor() async throws {
        let rig = try Rig(MessageWindow(capacity: 4, reserve: 0))
        for session in ["a", "a", "b", "a"] { rig.window.enter(session) }
        for session in ["a", "a", "b", "a", "a", "b"] { rig.done(session) }
        // All four places free, and no more: four enter at once, the fifth waits.
        for session in ["c", "c", "c", "d"] {
            #expect(await rig.enterOnThread(session).signalled(within: .seconds(30)))
        }
        let fifth = rig.enterOnThread("e")
        #expect(await !fifth.signalled(within: .milliseconds(200)))
        rig.done("d")
        #expect(await fifth.signalled(within: .seconds(30)))
    }
}
