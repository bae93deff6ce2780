import IslandCore

/// The open producer connections per owner, for the producer-death policies: an owner's first
/// connection brings its activities back, and the close of its last applies the policies. Per
/// owner, so one user's producer keeps nothing of another user's alive.
struct ProducerConnections {
    private var open: [ActivityOwner: Int] = [:]

    /// Every owner's, together.
    var total: Int { open.values.reduce(0, +) }

    /// Counts a connection of `owner`; returns whether it is the only one now.
    mutating func connected(_ owner: ActivityOwner) -> Bool {
        open[owner, default: 0] += 1
        return open[owner] == 1
    }

    /// Counts a connection of `owner` gone; returns whether none is left.
    mutating func disconnected(_ owner: ActivityOwner) -> Bool {
        let remaining = (open[owner] ?? 1) - 1
        open[owner] = remaining > 0 ? remaining : nil
        return remaining <= 0
    }
}
