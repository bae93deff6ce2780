/// The sources following one bus connection, each there when turned on, sharing what they
/// learn of the senders they meet; taps and buttons are routed to the source an activity's
/// key names. A new connection (the bus restarted) gets new sources.
package final class SessionSources {
    package struct Enabled: Sendable, Hashable {
        package var mpris: Bool
        package var notifications: Bool
        package var jobs: Bool

        package init(mpris: Bool, notifications: Bool, jobs: Bool) {
            self.mpris = mpris
            self.notifications = notifications
            self.jobs = jobs
        }
    }

    package let busID: String
    package let mpris: MPRISSource?
    package let notifications: NotificationSource?
    package let jobs: JobSource?

    package init(
        bus: any SourceBus, context: SourceContext, enabled: Enabled, staleAfterPause: Double,
        maximumJobs: Int, maximumJobsPerSender: Int
    ) {
        busID = context.busID
        let senders = SenderIdentities(bus: bus, logger: context.logger)
        mpris = enabled.mpris ? MPRISSource(bus: bus, senders: senders, context: context, staleAfterPause: staleAfterPause) : nil
        notifications = enabled.notifications ? NotificationSource(bus: bus, senders: senders, context: context) : nil
        jobs =
            enabled.jobs
            ? JobSource(
                bus: bus, senders: senders, context: context, maximumJobs: maximumJobs,
                maximumJobsPerSender: maximumJobsPerSender) : nil
    }

    package func start() {
        mpris?.start()
        notifications?.start()
        jobs?.start()
    }

    /// Whether the first scan of the bus is over: every source read what was there.
    package var isScanned: Bool {
        (mpris?.readsUnderWay ?? 0) + (notifications?.readsUnderWay ?? 0) == 0
    }

    /// What every source showed ends: the bus is going away.
    package func end() -> [SourceChange] {
        (mpris?.end() ?? []) + (notifications?.end() ?? []) + (jobs?.end() ?? [])
    }

    /// A tap on the activity of `key`: a player is raised. A key of another bus names
    /// nothing here.
    package func tapped(_ key: SourceKey) {
        guard key.busID == busID else { return }
        switch key {
        case .player(_, let owner): mpris?.tapped(owner: owner)
        case .notification, .job: break
        }
    }

    /// A button (`action`, as the layout names it) of the activity of `key`.
    package func pressed(_ action: String, on key: SourceKey) {
        guard key.busID == busID else { return }
        switch key {
        case .player(_, let owner): mpris?.pressed(action, owner: owner)
        case .job(_, let number): jobs?.pressed(action, job: number)
        case .notification: break
        }
    }
}
