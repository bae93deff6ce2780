import Foundation
import IslandBridge
import OrderedJSON
import IslandKit
import Logging
import OrderedCollections
import SDBus

/// KDE's job tracker, served where nothing else serves it.
extension Bridge {
    /// The names KJobWidgets' trackers call: `KUiServerV2JobTracker` the first,
    /// `KUiServerJobTracker` (KF5) the second.
    static let jobServerNames = ["org.kde.JobViewServer", "org.kde.kuiserver"]
    static let jobServerPath = "/JobViewServer"

    static let jobViewServer = ExportedInterface(name: "org.kde.JobViewServer", methods: [
        .init("requestView", parameters: "ssi", results: "o"),
    ])
    static let jobViewServerV2 = ExportedInterface(name: "org.kde.JobViewServerV2", methods: [
        .init("requestView", parameters: "sia{sv}", results: "o"),
    ])
    static let jobViewV2 = ExportedInterface(name: "org.kde.JobViewV2", methods: [
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
    static let jobViewV3 = ExportedInterface(name: "org.kde.JobViewV3", methods: [
        .init("terminate", parameters: "usa{sv}", noReply: true),
        .init("update", parameters: "a{sv}", noReply: true),
    ], signals: [.init("updateRequested"), .init("suspendRequested"), .init("resumeRequested"), .init("cancelRequested")])

    /// A peer's `a{sv}` of job properties: a few dozen keys at most are meaningful.
    static let jobLimits = DecodingLimits(maximumValues: 256, maximumStringBytes: 1024, maximumDepth: 4)

    func startJobs(on bus: Bus) {
        do {
            busSlots.append(try bus.export(Self.jobViewServer, at: Self.jobServerPath) { [self] message in
                guard let arguments = try? message.arguments(limits: Self.jobLimits), arguments.count == 3 else {
                    return .failure(BusError(name: BusError.invalidArgs, message: "requestView(ssi)"))
                }
                // The old protocol names no desktop entry: only an app unit or a Flatpak says which app it is.
                return requestView(message, version: .v2, claim: nil, label: arguments[0].string,
                                   capabilities: Int32(arguments[2].integer ?? 0), hints: [:])
            })
            busSlots.append(try bus.export(Self.jobViewServerV2, at: Self.jobServerPath) { [self] message in
                guard let arguments = try? message.arguments(limits: Self.jobLimits), arguments.count == 3 else {
                    return .failure(BusError(name: BusError.invalidArgs, message: "requestView(sia{sv})"))
                }
                return requestView(message, version: .v3, claim: arguments[0].string, label: arguments[0].string,
                                   capabilities: Int32(arguments[1].integer ?? 0), hints: arguments[2].dictionary ?? [:])
            })
            // Owned only while nobody else (Plasma) has them; Plasma, should it start later and
            // ask, takes them over. Queued, the bridge gets them when their owner leaves.
            busSlots.append(try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameLost'"
            ) { [self] message in
                if let name = (try? message.arguments())?.first?.string, Self.jobServerNames.contains(name) {
                    logger.info("another job server took the name", metadata: ["name": "\(name)"])
                }
            })
            for name in Self.jobServerNames {
                try bus.requestName(name, allowReplacement: true, queue: true) { [logger] result in
                    switch result {
                    case .success(.owner): logger.info("serving KDE jobs", metadata: ["name": "\(name)"])
                    case .success: logger.info("another job server owns the name; waiting for it", metadata: ["name": "\(name)"])
                    case .failure(let error): logger.warning("cannot own the job server's name", metadata: ["name": "\(name)", "error": "\(error)"])
                    }
                }
            }
        } catch {
            logger.error("cannot serve KDE jobs", metadata: ["error": "\(error)"])
        }
    }

    /// A new view for `message`'s sender: its job is shown once the sender is identified, as
    /// the app it is verified as (`claim` is believed no further).
    private func requestView(_ message: BusMessage, version: JobViews.Version, claim: String?, label: String?, capabilities: Int32,
                             hints: [String: BusValue]) -> MethodResult {
        guard let bus, let sender = message.sender else {
            return .failure(BusError(name: BusError.accessDenied, message: "no sender"))
        }
        let job: JobViews.Job
        let changes: [SourceChange]
        do {
            (job, changes) = try jobs.requestView(from: sender, version: version, app: nil, claim: claim, label: label,
                                                  capabilities: capabilities, hints: hints, now: Self.now)
        } catch {
            logger.info("refused a job view", metadata: ["sender": "\(sender)", "reason": "\(error.message)"])
            return .failure(BusError(name: error.name, message: error.message))
        }
        do {
            let interface = version == .v3 ? Self.jobViewV3 : Self.jobViewV2
            let path = job.path
            jobSlots[job.number] = [try bus.export(interface, at: path) { [self] call in jobViewCalled(call, path: path) }]
            if jobOwners[sender] == nil {
                jobOwners[sender] = try bus.track([sender]) { [self] in jobOwnerLeft(sender) }
            }
        } catch {
            _ = try? jobs.terminate(path: job.path, from: sender, errorCode: 0, message: "")
            jobSlots[job.number] = nil
            return .failure(error)
        }
        logger.info("a job view", metadata: ["claim": "\(claim ?? label ?? "")", "path": "\(job.path)", "owner": "\(sender)"])
        apply(changes)
        identify(sender) { [self] identity in
            apply(jobs.identified(sender, identity: identity) { entries.lookup($0) })
        }
        return .reply([.objectPath(job.path)])
    }

    private func jobViewCalled(_ message: BusMessage, path: String) -> MethodResult {
        guard let sender = message.sender, let member = message.member,
              let arguments = try? message.arguments(limits: Self.jobLimits) else {
            return .failure(BusError(name: BusError.invalidArgs, message: "unreadable arguments"))
        }
        do {
            switch (message.interface, member) {
            case ("org.kde.JobViewV3", "update"):
                apply(try jobs.update(path: path, from: sender, properties: arguments.first?.dictionary ?? [:]))
            case ("org.kde.JobViewV3", "terminate"):
                apply(try jobs.terminate(path: path, from: sender, errorCode: UInt32(clamping: arguments.first?.integer ?? 0),
                                         message: arguments.dropFirst().first?.string ?? ""))
                endJobView(path)
            case ("org.kde.JobViewV2", "terminate"):
                apply(try jobs.terminate(path: path, from: sender, errorCode: nil, message: arguments.first?.string ?? ""))
                endJobView(path)
            case ("org.kde.JobViewV2", _):
                apply(try jobs.call(path: path, from: sender, member: member, arguments: arguments))
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
    private func endJobView(_ path: String) {
        guard let number = UInt32(path.dropFirst(JobViews.pathPrefix.count)) else { return }
        Task { self.jobSlots[number] = nil }
        dropJobOwnersWithoutJobs()
    }

    private func jobOwnerLeft(_ owner: String) {
        let changes = jobs.ownerGone(owner)
        for change in changes {
            if case .finish(let source, _, _) = change, let number = source.split(separator: ":").last.flatMap({ UInt32($0) }) {
                jobSlots[number] = nil
            }
        }
        if !changes.isEmpty { logger.info("a job's owner left the bus", metadata: ["owner": "\(owner)", "jobs": "\(changes.count)"]) }
        Task { self.jobOwners[owner] = nil }
        // A job never shown (its client left before it was identified) is requested before it
        // ends, so the user sees that it stopped: the book forgets a finished thing it never
        // asked for.
        let (shows, finishes) = changes.reduce(into: ([SourceChange](), [SourceChange]())) { split, change in
            if case .show = change { split.0.append(change) } else { split.1.append(change) }
        }
        apply(shows)
        apply(finishes)
    }

    private func dropJobOwnersWithoutJobs() {
        let owners = jobs.owners
        for owner in jobOwners.keys where !owners.contains(owner) {
            Task { self.jobOwners[owner] = nil }
        }
    }

    func signalJob(source: String, action: String) {
        guard let (path, member) = jobs.signal(forButton: action, source: source), let job = jobs.job(at: path) else { return }
        let interface = job.version == .v3 ? "org.kde.JobViewV3" : "org.kde.JobViewV2"
        do {
            try bus?.emitSignal(path: path, interface: interface, member: member)
            logger.info("asked a job to \(member.dropLast("Requested".count))", metadata: ["path": "\(path)"])
        } catch {
            logger.warning("cannot signal a job", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
