import OrderedCollections
import OrderedJSON
package import SDBus

/// KDE's job tracker as the bridge serves it where Plasma does not: a client (KIO's
/// `KUiServerV2JobTracker`, or the older `KUiServerJobTracker`) asks for a view of a job with
/// `requestView`, then reports the job's progress to that view until it calls `terminate`.
/// Each job is a Transfer activity; its cancel and pause/resume buttons become the view's
/// `cancelRequested`, `suspendRequested` and `resumeRequested` signals, which the client acts on.
///
/// Any process on the session bus may ask for views, so they are bounded: `maximumJobs` in
/// all and `maximumJobsPerSender` per client connection; past either, `requestView` is
/// refused with `LimitsExceeded`. Only the client that asked for a view may update or end it.
/// A client that leaves the bus ends its jobs (`ownerGone`). A job is shown once the bridge
/// knows who its client is (`identified`): its app is the one the client is verified as.
package struct JobViews: Sendable {
    package static let pathPrefix = "/org/island/bridge/JobView/"

    /// Which interface a view speaks: `org.kde.JobViewV2` for the old server's views,
    /// `org.kde.JobViewV3` for `org.kde.JobViewServerV2`'s.
    package enum Version: Sendable, Hashable {
        case v2, v3
    }

    package struct Job: Sendable {
        package var number: UInt32
        package var version: Version
        package var owner: String
        /// Nil until the owner is identified: the job is not shown before.
        package var app: SourceApp?
        /// The desktop entry the client claims (V3's `requestView`), and its own label (V2's).
        package var claim: String?
        package var label: String?
        /// 1: may be cancelled; 2: may be suspended and resumed.
        package var capabilities: Int32
        package var title: String?
        package var infoMessage: String?
        package var descriptions: [Int: (label: String, value: String)] = [:]
        package var percent: Int?
        package var processed: [String: UInt64] = [:]
        package var total: [String: UInt64] = [:]
        package var speed: UInt64?
        package var suspended = false
        /// An error the client reported before terminating (`setError`, `errorCode`).
        package var errorCode: UInt32?
        package var startedAt: Double

        package var path: String { JobViews.pathPrefix + String(number) }
        package var canCancel: Bool { capabilities & 1 != 0 }
        package var canSuspend: Bool { capabilities & 2 != 0 }
    }

    /// Why a view was refused or a call about one was.
    package struct Refusal: Error, Sendable, Hashable {
        package var name: String
        package var message: String
    }

    package let maximumJobs: Int
    package let maximumJobsPerSender: Int
    private let busID: String
    package private(set) var jobs: [UInt32: Job] = [:]
    private var nextNumber: UInt32 = 1

    package init(busID: String, maximumJobs: Int, maximumJobsPerSender: Int) {
        self.busID = busID
        self.maximumJobs = maximumJobs
        self.maximumJobsPerSender = maximumJobsPerSender
    }

    package func source(of job: Job) -> String { SourceKey.job(busID: busID, number: job.number).description }

    /// The job served at `path`.
    package func job(at path: String) -> Job? {
        guard path.hasPrefix(Self.pathPrefix), let number = UInt32(path.dropFirst(Self.pathPrefix.count)) else { return nil }
        return jobs[number]
    }

    /// The job whose activity is `source`.
    package func job(forSource source: String) -> Job? {
        jobs.values.first { self.source(of: $0) == source }
    }

    /// Owners with jobs now, each to be followed until it leaves the bus.
    package var owners: Set<String> { Set(jobs.values.map(\.owner)) }

    // MARK: The server's calls

    /// `requestView` from `sender`: a new job, its view's path and its activity.
    /// `app` is nil while the sender is not identified yet: the job shows once `identified`.
    package mutating func requestView(
        from sender: String, version: Version, app: SourceApp?, claim: String? = nil,
        label: String? = nil, capabilities: Int32,
        hints: [String: BusValue], now: Double
    ) throws(Refusal) -> (job: Job, changes: [SourceChange]) {
        guard jobs.count < maximumJobs else {
            throw Refusal(name: BusError.limitsExceeded, message: "the bridge follows \(maximumJobs) jobs already")
        }
        guard jobs.values.count(where: { $0.owner == sender }) < maximumJobsPerSender else {
            throw Refusal(name: BusError.limitsExceeded, message: "this connection has \(maximumJobsPerSender) jobs already")
        }
        var job = Job(
            number: nextNumber, version: version, owner: sender, app: app, claim: claim, label: label,
            capabilities: capabilities, startedAt: now)
        nextNumber &+= 1
        // KJobWidgets sends the state it has so far with the request.
        job.apply(hints)
        jobs[job.number] = job
        return (job, shown(job))
    }

    /// `owner` is identified: its jobs not shown yet show as the app it is verified as.
    package mutating func identified(_ owner: String, identity: SenderIdentity, lookup: (String) -> DesktopEntry?) -> [SourceChange] {
        var changes: [SourceChange] = []
        for number in jobs.keys.sorted() where jobs[number]?.owner == owner && jobs[number]?.app == nil {
            guard var job = jobs[number] else { continue }
            job.app = SourceApp.resolve(claim: job.claim, identity: identity, kind: .transfer, label: job.label, lookup: lookup)
            jobs[number] = job
            changes += shown(job)
        }
        return changes
    }

    private func shown(_ job: Job) -> [SourceChange] {
        job.app == nil ? [] : [.show(activity(of: job))]
    }

    /// `org.kde.JobViewV3.update` of the view at `path`.
    package mutating func update(path: String, from sender: String, properties: [String: BusValue]) throws(Refusal) -> [SourceChange] {
        var job = try owned(path, by: sender)
        job.apply(properties)
        jobs[job.number] = job
        return shown(job)
    }

    /// A method of `org.kde.JobViewV2` (every one but `terminate`).
    package mutating func call(path: String, from sender: String, member: String, arguments: [BusValue]) throws(Refusal) -> [SourceChange] {
        var job = try owned(path, by: sender)
        let first = arguments.first
        switch member {
        case "setSuspended": job.suspended = first?.bool ?? job.suspended
        case "setTotalAmount", "setProcessedAmount":
            guard let amount = first?.integer.flatMap(UInt64.init(exactly:)), let unit = arguments.dropFirst().first?.string else { break }
            let key = Job.amountKey(unit: unit)
            if member == "setTotalAmount" { job.total[key] = amount } else { job.processed[key] = amount }
        case "setPercent": job.percent = first?.integer.map { Int(min(100, max(0, $0))) }
        case "setSpeed": job.speed = first?.integer.flatMap(UInt64.init(exactly:))
        case "setInfoMessage": job.infoMessage = first?.string.map(Job.text)
        case "setDescriptionField":
            if let number = first?.integer, (1...2).contains(number), arguments.count == 3 {
                job.descriptions[Int(number)] = (Job.text(arguments[1].string ?? ""), Job.text(arguments[2].string ?? ""))
            }
        case "setError": job.errorCode = first?.integer.flatMap(UInt32.init(exactly:))
        case "clearDescriptionField":
            if let number = first?.integer { job.descriptions[Int(number)] = nil }
        default: return []
        }
        jobs[job.number] = job
        return shown(job)
    }

    /// `terminate` of the view at `path`: the job ended, with `errorCode` 0 (done), 1 (killed,
    /// that is cancelled) or another error and its message. V2's `terminate` says no code:
    /// the one `setError` reported counts, else none.
    package mutating func terminate(path: String, from sender: String, errorCode: UInt32?, message: String) throws(Refusal) -> [SourceChange] {
        let job = try owned(path, by: sender)
        jobs[job.number] = nil
        let outcome: JSONObject =
            switch errorCode ?? job.errorCode ?? 0 {
            case 0: ["done": true]
            case 1: ["canceled": true]
            case let code: ["failed": true, "message": .string(Job.text(message.isEmpty ? "error \(code)" : message))]
            }
        return [.finish(source: source(of: job), content: content(of: job, outcome: outcome), keep: true)]
    }

    /// `sender` left the bus: its jobs end as `ownerGone`. One whose client left before it was
    /// identified (a client that crashed, or `gdbus call` that asks and leaves) is shown as what
    /// an unidentified client is, the bridge's Transfer, and ends at once: the user still sees
    /// that the transfer stopped, and no one is believed to be an app.
    package mutating func ownerGone(_ owner: String) -> [SourceChange] {
        let gone = jobs.values.filter { $0.owner == owner }.sorted { $0.number < $1.number }
        var changes: [SourceChange] = []
        for var job in gone {
            jobs[job.number] = nil
            if job.app == nil {
                job.app = SourceApp.resolve(claim: job.claim, identity: .unknown, kind: .transfer, label: job.label) { _ in nil }
                changes += shown(job)
            }
            changes.append(.finish(source: source(of: job), content: content(of: job, outcome: ["ownerGone": true]), keep: true))
        }
        return changes
    }

    /// Every job, as when the bus goes away: their clients cannot reach these views any more.
    package mutating func removeAll() -> [SourceChange] {
        defer { jobs = [:] }
        return jobs.values.sorted { $0.number < $1.number }.map { .finish(source: source(of: $0), content: nil, keep: false) }
    }

    /// The signal a layout button of job `source` stands for, and the view that emits it.
    package func signal(forButton action: String, source: String) -> (path: String, member: String)? {
        guard let job = job(forSource: source) else { return nil }
        switch action {
        case "cancel" where job.canCancel: return (job.path, "cancelRequested")
        case "suspendResume" where job.canSuspend: return (job.path, job.suspended ? "resumeRequested" : "suspendRequested")
        default: return nil
        }
    }

    private func owned(_ path: String, by sender: String) throws(Refusal) -> Job {
        guard let job = job(at: path) else {
            throw Refusal(name: BusError.unknownObject, message: "no job view at \(path)")
        }
        guard job.owner == sender else {
            throw Refusal(name: BusError.accessDenied, message: "only the connection that requested this view may change it")
        }
        return job
    }

    // MARK: The activity

    package static let maximumTextBytes = 128

    private func content(of job: Job, outcome: JSONObject = [:]) -> BridgedContent {
        var state: JSONObject = ["title": .string(job.title ?? job.infoMessage ?? job.app?.name ?? SourceApp.Kind.transfer.rawValue)]
        if let detail = job.detail { state["detail"] = .string(detail) }
        if let percent = job.effectivePercent { state["percent"] = .int(percent) }
        if let amount = job.amountText { state["amount"] = .string(amount) }
        if let speed = job.speed, speed > 0, outcome.isEmpty { state["speed"] = .string(ByteCount.text(speed) + "/s") }
        if job.suspended { state["suspended"] = true }
        state["canCancel"] = .bool(job.canCancel)
        state["canSuspend"] = .bool(job.canSuspend)
        for (key, value) in outcome { state[key] = value }
        return BridgedContent(state: state, relevance: Rank.Tier.progress.relevance)
    }

    private func activity(of job: Job) -> BridgedActivity {
        BridgedActivity(
            source: source(of: job), type: "Transfer",
            attributes: [
                "app": (job.app ?? SourceApp(name: SourceApp.Kind.transfer.rawValue, icon: SourceApp.bridgeIcon)).json,
                "via": "jobview",
            ],
            content: content(of: job), rank: Rank(tier: .progress, since: job.startedAt))
    }
}

extension JobViews.Job {
    static func text(_ text: String) -> String { BoundedText.line(text, maximumBytes: JobViews.maximumTextBytes) }

    /// V2's units as V3's keys (`processedBytes`…).
    static func amountKey(unit: String) -> String {
        switch unit {
        case "bytes": "Bytes"
        case "files": "Files"
        case "dirs": "Directories"
        default: "Items"
        }
    }

    /// Applies a V3 `update` (or `requestView`'s hints): the keys KJobWidgets sends.
    mutating func apply(_ properties: [String: BusValue]) {
        for (key, value) in properties {
            switch key {
            case "title": title = value.string.map(Self.text)
            case "infoMessage": infoMessage = value.string.map(Self.text)
            case "descriptionLabel1", "descriptionValue1", "descriptionLabel2", "descriptionValue2":
                let number = key.hasSuffix("1") ? 1 : 2
                var field = descriptions[number] ?? ("", "")
                if key.hasPrefix("descriptionLabel") { field.label = Self.text(value.string ?? "") } else { field.value = Self.text(value.string ?? "") }
                descriptions[number] = field.label.isEmpty && field.value.isEmpty ? nil : field
            case "percent": percent = value.integer.map { Int(min(100, max(0, $0))) }
            case "speed": speed = value.integer.flatMap(UInt64.init(exactly:))
            case "suspended": suspended = value.bool ?? suspended
            case "errorCode": errorCode = value.integer.flatMap(UInt32.init(exactly:))
            default:
                for unit in ["Bytes", "Files", "Directories", "Items"] {
                    if key == "processed" + unit { processed[unit] = value.integer.flatMap(UInt64.init(exactly:)) }
                    if key == "total" + unit { total[unit] = value.integer.flatMap(UInt64.init(exactly:)) }  // not Island's wire: KDE's
                }
            }
        }
    }

    /// The percent given, else worked out from bytes, else files.
    var effectivePercent: Int? {
        if let percent { return percent }
        for unit in ["Bytes", "Files", "Items"] {
            if let done = processed[unit], let all = total[unit], all > 0 {
                return Int(min(100, Double(done) / Double(all) * 100))
            }
        }
        return nil
    }

    /// `12 MB of 45 MB`, or `3 of 10 files`.
    var amountText: String? {
        if let all = total["Bytes"], all > 0 {
            return "\(ByteCount.text(processed["Bytes"] ?? 0)) of \(ByteCount.text(all))"
        }
        if let all = total["Files"], all > 0 {
            return "\(processed["Files"] ?? 0) of \(all) files"
        }
        return nil
    }

    /// The info message when there is a title, else the first description field.
    var detail: String? {
        if title != nil, let infoMessage, !infoMessage.isEmpty { return infoMessage }
        guard let field = descriptions[1] ?? descriptions[2] else { return nil }
        return Self.text(field.label.isEmpty ? field.value : "\(field.label): \(field.value)")
    }
}

/// Sizes for people, in decimal units: `950 B`, `1.2 kB`, `45 MB`.
package enum ByteCount {
    package static func text(_ bytes: UInt64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let rounded = value < 10 ? (value * 10).rounded() / 10 : value.rounded()
        let text = rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        return "\(text) \(units[unit])"
    }
}
