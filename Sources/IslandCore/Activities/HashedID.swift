/// An activity's id with its hash worked out once. The daemon keeps what presenters and
/// watchers were told of each activity in tables by id, and hashing a UUID's 36 bytes for each
/// of them on every update cost more than the rest of the look-ups: an activity carries this
/// with its identity, and a table keyed by it hashes one integer.
public struct HashedID: Hashable, Sendable, CustomStringConvertible {
    public let id: String
    private let hash: Int

    public init(_ id: String) {
        self.id = id
        self.hash = id.hashValue
    }

    public static func == (lhs: HashedID, rhs: HashedID) -> Bool {
        lhs.hash == rhs.hash && lhs.id == rhs.id
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    public var description: String { id }
}
