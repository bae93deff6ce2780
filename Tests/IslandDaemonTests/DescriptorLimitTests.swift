#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import IslandDaemon

/// The connection limits always leave a descriptor for every connection, the reserve and the
/// daemon's own files: accept never fails for want of one.
struct DescriptorLimitTests {
    @Test(arguments: [
        // (configured total, per user, descriptors) -> (total, per user)
        (4096, 1024, 524_288, 4096, 1024),  // plenty: as configured
        (4096, 1024, 1024, 944, 944),  // systemd's default soft limit, not raised
        (100, 1024, 1024, 100, 100),  // per user never above the total
        (4096, 1024, 50, 1, 1),  // absurdly few: still one
    ])
    func limitsFitTheDescriptors(total: Int, perUser: Int, descriptors: Int, expectedTotal: Int, expectedPerUser: Int) {
        let fitted = DescriptorLimit.connectionLimits(total: total, perUser: perUser, reserve: 16, descriptors: descriptors)
        #expect(fitted.total == expectedTotal)
        #expect(fitted.perUser == expectedPerUser)
    }

    @Test func theSoftLimitIsRaisedToTheHardOne() {
        let soft = DescriptorLimit.raise()
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        #expect(Int(limit.rlim_cur) == soft)
        #expect(limit.rlim_cur == limit.rlim_max)
    }
}
