/// Which parts of the presentation a change touched.
public struct IslandChanges: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The island: mode, attached, detached or the expansion.
    public static let island = IslandChanges(rawValue: 1 << 0)
    /// The lock-screen list: membership or order.
    public static let lockScreen = IslandChanges(rawValue: 1 << 1)
}

/// A new presentation, numbered, with what changed since the previous one: what the arbiter
/// answers. Presenters are sent their own updates, numbered per view (the daemon's
/// Wire.PresenterUpdate), not this.
public struct IslandDelta: Sendable, Hashable {
    public var sequence: UInt64
    public var presentation: IslandPresentation
    public var changes: IslandChanges

    public init(sequence: UInt64, presentation: IslandPresentation, changes: IslandChanges) {
        self.sequence = sequence
        self.presentation = presentation
        self.changes = changes
    }
}

/// The arbiter's current presentation and its number.
public struct IslandSnapshot: Sendable, Hashable {
    public var sequence: UInt64
    public var presentation: IslandPresentation

    public init(sequence: UInt64, presentation: IslandPresentation) {
        self.sequence = sequence
        self.presentation = presentation
    }
}
