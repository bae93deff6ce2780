import Testing
@testable import IslandPaths

/// The daemon and every client must name the same socket from the same environment.
@Suite struct SocketLocationTests {
    @Test func clientsTakeTheirVariableFirstThenTheRuntimeDirectory() {
        #expect(SocketLocation.client(environment: ["ISLAND_SOCKET": "/x.sock", "XDG_RUNTIME_DIR": "/run/user/5"], uid: 5) == "/x.sock")
        #expect(SocketLocation.client(environment: ["XDG_RUNTIME_DIR": "/run/user/5"], uid: 5) == "/run/user/5/island/islandd.sock")
        #expect(SocketLocation.client(environment: ["ISLAND_SOCKET": ""], uid: 7) == "/run/user/7/island/islandd.sock")
    }

    @Test func withoutAnAbsoluteRuntimeDirectoryBothUseRunUser() {
        for environment in [[:], ["XDG_RUNTIME_DIR": ""], ["XDG_RUNTIME_DIR": "relative/run"]] {
            #expect(SocketLocation.user(environment: environment, uid: 7) == "/run/user/7/island/islandd.sock")
            #expect(SocketLocation.client(environment: environment, uid: 7) == SocketLocation.user(environment: environment, uid: 7))
        }
    }
}
