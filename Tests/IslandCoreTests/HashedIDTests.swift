import IslandCore
import Testing

/// An id hashed once looks an activity up as its string would: the same string, made anew,
/// finds it; another does not.
@Suite struct HashedIDTests {
    @Test func findsWhatItsStringWouldFind() {
        let ids = (0..<200).map { "activity-\($0)" }
        var table: [HashedID: Int] = [:]
        for (n, id) in ids.enumerated() { table[HashedID(id)] = n }
        for (n, id) in ids.enumerated() {
            #expect(table[HashedID(String(id.utf8.map { Character(Unicode.Scalar($0)) }))] == n, "\(id)")
        }
        #expect(table[HashedID("activity-200")] == nil)
        #expect(HashedID("a") != HashedID("b") && HashedID("a") == HashedID("a"))
        #expect(HashedID("é").description == "é")
    }
}
