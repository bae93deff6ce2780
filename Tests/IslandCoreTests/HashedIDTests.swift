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

    /// Each table hashes its keys under a seed of its own: the same id lands elsewhere in
    /// another table, and a table filled in a larger one's order finds every key.
    @Test func hashesUnderEachTablesSeed() {
        let ids = (0..<1000).map { HashedID("activity-\($0)") }
        #expect(ids.allSatisfy { $0._rawHashValue(seed: 1) != $0._rawHashValue(seed: 2) })
        #expect(ids.allSatisfy { $0._rawHashValue(seed: 7) == HashedID($0.id)._rawHashValue(seed: 7) })
        var large = [HashedID: Int](minimumCapacity: 8192)
        for (n, id) in ids.enumerated() { large[id] = n }
        var small: [HashedID: Int] = [:]
        for (id, n) in large { small[id] = n }
        #expect(small.count == ids.count)
        for (n, id) in ids.enumerated() { #expect(small[id] == n, "\(id)") }
    }
}
