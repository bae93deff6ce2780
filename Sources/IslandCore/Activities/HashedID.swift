/// An activity's id with its hash worked out once. The daemon keeps what presenters and
/// watchers were told of each activity in tables by id, and hashing a UUID's 36 bytes for each
/// of them on every update cost more than the rest of the look-ups: an activity carries this
/// with its identity, and a table keyed by it hashes one integer.
package struct HashedID: Hashable, Sendable, CustomStringConvertible {
    package let id: String
    private let hash: Int

    package init(_ id: String) {
        self.id = id
        self.hash = id.hashValue
    }

    package static func == (lhs: HashedID, rhs: HashedID) -> Bool {
        lhs.hash == rhs.hash && lhs.id == rhs.id
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    /// What `Dictionary` and `OrderedDictionary` ask a key for at every look-up, under the
    /// table's own seed. `hash` is already SipHash of the id under the process's random seed;
    /// the default would run it through a second `Hasher` (~175 instructions, and an update
    /// looks three tables up: the layout cache, the presenter's sent layouts, the watchers).
    /// Here it is mixed with the seed by a multiply and two shifts instead, which keeps each
    /// table's order of its keys its own. Equal ids still give equal values for a seed.
    package func _rawHashValue(seed: Int) -> Int {
        var mixed = UInt64(UInt(bitPattern: hash ^ seed))
        mixed ^= mixed >> 32
        mixed &*= 0xd6e8_feb8_6659_fd93
        mixed ^= mixed >> 32
        return Int(bitPattern: UInt(mixed))
    }

    package var description: String { id }
}
