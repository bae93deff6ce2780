import Logging
import SDBus

/// KDE's job tracker on one bus connection, served where nothing else serves it: the
/// `org.kde.JobViewServer` names and object, and one `JobViewV2`/`JobViewV3` object per job,
/// whose calls `JobViews` turns into Transfer activities. Buttons emit the view's
/// `cancelRequested`, `suspendRequested` or `resumeRequested`.
package final class JobSource {
    /// The names KJobWidgets' trackers call: `KUiServerV2JobTracker` the first,
    /// `KUiServerJobTracker` (KF5) the second.
    package static let serverNames = ["org.kde.JobViewServer", "org.kde.kuiserver"]
    package static let serverPath = "/JobViewServer"

    static let viewServer = ExportedInterface(
        name: "org.kde.JobViewServer",
        methods: [
            .init("requestView", parameters: "ssi", results: "o")
        ])
    static let viewServerV2 = ExportedInterface(
        name: "org.kde.JobViewServerV2",
        methods: [
            .init("requestView", parameters: "sia{sv}", results: "o")
        ])
    static let viewV2 = ExportedInterface(
        name: "org.kde.JobViewV2",
        methods: [
            .init("terminate", parameters: "s", noReply: true),
            .init("setSuspended", parameters: "b", noReply: true),
            .init("setTotalAmount", parameters: "ts", noReply: true),
            .init("setProcessedAmount", parameters: "ts", noReply: true),
            .init("setPercent", parameters: "u", noReply: true),
            .init("setSpeed", parameters: "t", noReply: true),
            .init("setInfoMessage", parameters: "s", noReply: true),
            .init("setDescriptionField", parameters: "uss", results: "b"),
            .init("clearDescriptionField", parameters: "u", noReply: true),
            .init("setDestUrl", parameters: "v", noReply: true),
            .init("setError", parameters: "u", noReply: true),
        ], signals: [.init("suspendRequested"), .init("resumeRequested"), .init("cancelRequested")])
    static let viewV3 = ExportedInterface(
        name: "org.kde.JobViewV3",
        methods: [
            .init("terminate", parameters: "usa{sv}", noReply: true),
            .init("update", parameters: "a{sv}", noReply: true),
        ], signals: [.init("updateRequested"), .init("suspendRequested"), .init("resumeRequested"), .init("cancelRequested")])

    /// A peer's `a{sv}` of job properties: a few dozen keys at most are meaningful.
    static let limits = DecodingLimits(maximumValues: 256, maximumStringBytes: 1024, maximumDepth: 4)

    private let bus: any SourceBus
    private let senders: SenderIdentities
    private let context: SourceContext
    package private(set) var jobs: JobViews
    private var subscriptions: [BusSubscription] = []
    /// Each job's served view.
    private var views: [UInt32: BusSubscription] = [:]
    /// The connections with jobs, each followed until it leaves the bus.
    private var owners: [String: BusSubscription] = [:]

    package init(bus: any SourceBus, senders: SenderIdentities, context: SourceContext, maximumJobs: Int, maximumJobsPerSender: Int) {
        self.bus = bus
        self.senders = senders
        self.context = context
        jobs = JobViews(busID: context.busID, maximumJobs: maximumJobs, maximumJobsPerSender: maximumJobsPerSender)
    }

    /// Serves the job server and asks for its names.
    package func start() {
        do {
            try serve()
        } catch {
            context.logger.error("cannot serve KDE jobs", metadata: ["error": "\(error)"])
        }
    }

    private func serve() throws(BusError) {
        subscriptions.append(
            try bus.export(Self.viewServer, at: Self.serverPath) { [weak self] message in
                guard let self, let arguments = try? message.arguments(limits: Self.limits), arguments.count == 3 else {
                    return .failure(BusError(name: BusError.invalidArgs, message: "requestView(ssi)"))
                }
                // The old protocol names no desktop entry: only an app unit or a Flatpak says which app it is.
                return requestView(
                    message, version: .v2, claim: nil, label: arguments[0].string,
                    capabilities: Int32(arguments[2].integer ?? 0), hints: [:])
            })
        subscriptions.append(
            try bus.export(Self.viewServerV2, at: Self.serverPath) { [weak self] message in
                guard let self, let arguments = try? message.arguments(limits: Self.limits), arguments.count == 3 else {
                    return .failure(BusError(name: BusError.invalidArgs, message: "requestView(sia{sv})"))
                }
                return requestView(
                    message, version: .v3, claim: arguments[0].string, label: arguments[0].string,
                    capabilities: Int32(arguments[1].integer ?? 0), hints: arguments[2].dictionary ?? [:])
            })
        // Owned only while nobody else (Plasma) has them; Plasma, should it start later and
        // ask, takes them over. Queued, the bridge gets them when their owner leaves.
        subscriptions.append(
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameLost'"
            ) { [logger = context.logger] message in
                if let name = (try? message.arguments())?.first?.string, Self.serverNames.contains(name) {
                    logger.info("another job server took the name", metadata: ["name": "\(name)"])
                }
            })
        for name in Self.serverNames {
            try bus.requestName(name, allowReplacement: true, queue: true) { [logger = context.logger] result in
                switch result {
                case .success(.owner): logger.info("serving KDE jobs", metadata: ["name": "\(name)"])
                case .success: logger.info("another job server owns the name; waiting for it", metadata: ["name": "\(name)"])
                case .failure(let error): logger.warning("cannot own the job server's name", metadata: ["name": "\(name)", "error": "\(error)"])
                }
            }
        }
    }

    /// Every job's activity ends, dismissed: the bus is going away, and their clients cannot
    /// reach these views any more.
    package func end() -> [SourceChange] {
        subscriptions = []
        views = [:]
        owners = [:]
        return jobs.removeAll()
    }

    // MARK: Bus calls to activities

    /// A new view for `message`'s sender: its job is shown once the sender is identified, as
    /// the app it is verified as (`claim` is believed no further).
    private func requestView(
        _ message: any IncomingMessage, version: JobViews.Version, claim: String?, label: String?,
        capabilities: Int32, hints: [String: BusValue]
    ) -> MethodResult {
        guard let sender = message.sender else {
            return .failure(BusError(name: BusError.accessDenied, message: "no sender"))
        }
        let job: JobViews.Job
        let changes: [SourceChange]
        do {
            (job, changes) = try jobs.requestView(
                from: sender, version: version, app: nil, claim: claim, label: label,
                capabilities: capabilities, hints: hints, now: context.now())
        } catch {
            context.logger.info("refused a job view", metadata: ["sender": "\(sender)", "reason": "\(error.message)"])
            return .failure(BusError(name: error.name, message: error.message))
        }
        do {
            let path = job.path
            views[job.number] = try bus.export(version == .v3 ? Self.viewV3 : Self.viewV2, at: path) { [weak self] call in
                self?.viewCalled(call, path: path) ?? .failure(BusError(name: BusError.unknownObject, message: path))
            }
            if owners[sender] == nil {
                owners[sender] = try bus.track(sender) { [weak self] in self?.ownerLeft(sender) }
            }
        } catch {
            _ = try? jobs.terminate(path: job.path, from: sender, errorCode: 0, message: "")
            views[job.number] = nil
            return .failure(error)
        }
        context.logger.info("a job view", metadata: ["claim": "\(claim ?? label ?? "")", "path": "\(job.path)", "owner": "\(sender)"])
        context.apply(changes)
        senders.identify(sender) { [weak self] identity in
            guard let self else { return }
            context.apply(jobs.identified(sender, identity: identity, lookup: context.lookup))
        }
        return .reply([.objectPath(job.path)])
    }

    private func viewCalled(_ message: any IncomingMessage, path: String) -> MethodResult {
        guard let sender = message.sender, let member = message.member,
            let arguments = try? message.arguments(limits: Self.limits)
        else {
            return .failure(BusError(name: BusError.invalidArgs, message: "unreadable arguments"))
        }
        do {
            switch (message.interface, member) {
            case ("org.kde.JobViewV3", "update"):
                context.apply(try jobs.update(path: path, from: sender, properties: arguments.first?.dictionary ?? [:]))
            case ("org.kde.JobViewV3", "terminate"):
                context.apply(
                    try jobs.terminate(
                        path: path, from: sender, errorCode: UInt32(clamping: arguments.first?.integer ?? 0),
                        message: arguments.dropFirst().first?.string ?? ""))
                viewEnded(path)
            case ("org.kde.JobViewV2", "terminate"):
                context.apply(try jobs.terminate(path: path, from: sender, errorCode: nil, message: arguments.first?.string ?? ""))
                viewEnded(path)
            case ("org.kde.JobViewV2", _):
                context.apply(try jobs.call(path: path, from: sender, member: member, arguments: arguments))
                if member == "setDescriptionField" { return .reply([.boolean(true)]) }
            default:
                break
            }
        } catch {
            return .failure(BusError(name: error.name, message: error.message))
        }
        return .reply([])
    }

    /// The view's object goes once the reply (if any) is on its way.
    private func viewEnded(_ path: String) {
        guard let number = UInt32(path.dropFirst(JobViews.pathPrefix.count)) else { return }
        bus.afterDispatch { [weak self] in self?.views[number] = nil }
        let current = jobs.owners
        for owner in owners.keys where !current.contains(owner) {
            bus.afterDispatch { [weak self] in self?.owners[owner] = nil }
        }
    }

    /// The owner's jobs end as `ownerGone`.
    private func ownerLeft(_ owner: String) {
        let changes = jobs.ownerGone(owner)
        for change in changes {
            if case .finish(let source, _, _) = change, case .job(_, let number)? = SourceKey(source) { views[number] = nil }
        }
        if !changes.isEmpty {
            context.logger.info("a job's owner left the bus", metadata: ["owner": "\(owner)", "jobs": "\(changes.count)"])
        }
        // Not from inside the tracker's own callback.
        bus.afterDispatch { [weak self] in self?.owners[owner] = nil }
        // A job never shown (its client left before it was identified) is requested before it
        // ends, so the user sees that it stopped: the book forgets a finished thing it never
        // asked for.
        let (shows, finishes) = changes.reduce(into: ([SourceChange](), [SourceChange]())) { split, change in
            if case .show = change { split.0.append(change) } else { split.1.append(change) }
        }
        context.apply(shows)
        context.apply(finishes)
    }

    // MARK: Buttons

    /// A button of job `number`'s activity: the signal it stands for, from the job's view.
    package func pressed(_ action: String, job number: UInt32) {
        guard let job = jobs.jobs[number], let (path, member) = jobs.signal(forButton: action, source: jobs.source(of: job))
        else { return }
        let interface = job.version == .v3 ? Self.viewV3.name : Self.viewV2.name
        do {
            try bus.emitSignal(path: path, interface: interface, member: member)
            context.logger.info("asked a job to \(member.dropLast("Requested".count))", metadata: ["path": "\(path)"])
        } catch {
            context.logger.warning("cannot signal a job", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
