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

    package var description: String { id }
}
