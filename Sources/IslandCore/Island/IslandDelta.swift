/// Which parts of the presentation a change touched.
package struct IslandChanges: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The island: mode, attached, detached or the expansion.
    package static let island = IslandChanges(rawValue: 1 << 0)
    /// The lock-screen list: membership or order.
    package static let lockScreen = IslandChanges(rawValue: 1 << 1)
}

/// A new presentation, numbered, with what changed since the previous one: what the arbiter
/// answers. Presenters are sent their own updates, numbered per view (the daemon's
/// Wire.PresenterUpdate), not this.
package struct IslandDelta: Sendable, Hashable {
    package var sequence: UInt64
    package var presentation: IslandPresentation
    package var changes: IslandChanges

    package init(sequence: UInt64, presentation: IslandPresentation, changes: IslandChanges) {
        self.sequence = sequence
        self.presentation = presentation
        self.changes = changes
    }
}

/// The arbiter's current presentation and its number.
package struct IslandSnapshot: Sendable, Hashable {
    package var sequence: UInt64
    package var presentation: IslandPresentation

    package init(sequence: UInt64, presentation: IslandPresentation) {
        self.sequence = sequence
        self.presentation = presentation
    }
}
