import IslandCore
import OrderedJSON

/// Drives a bar module: folds updates into the model and writes a line whenever the rendered
/// line changes, re-rendering every second while something on screen ticks, and only then:
/// `tickingStarts` says when to start the clock, and `tick()` when to stop it, so an idle
/// bar sleeps (docs/design.md §9: no wake-up while nothing changes).
///
/// It also keeps what a click on the bar may act on (`shown`): a `ClickGuard` fed with the
/// targets of every scene it puts out, on `monotonic`; `publish` hands the record to whoever
/// answers the bar's clicks (a file for `island-presenter click`) each time it changes.
package actor BarDriver {
    /// Yields each time the screen starts ticking.
    package nonisolated let tickingStarts: AsyncStream<Void>
    private let tickingContinuation: AsyncStream<Void>.Continuation
    private var ticking = false
    package let format: BarFormat
    package let maxLength: Int
    private var model = PresenterModel()
    private var lastLine: String?
    private let output: @Sendable (String) -> Void
    private let clock: @Sendable () -> Double
    private let monotonic: @Sendable () -> Double
    private let pid: Int32
    private let publish: @Sendable (BarShown) -> Void
    private var clickGuard: ClickGuard<ClickTarget, Int>
    /// What clicks on the bar may act on, as last published.
    package private(set) var shown: BarShown

    /// `clock` is the wall clock scenes are rendered at (timers); `monotonic` the one the
    /// click guard runs on (`BootClock.now` in the presenter).
    package init(
        format: BarFormat, maxLength: Int = BarFormat.defaultMaxLength, clock: @escaping @Sendable () -> Double,
        monotonic: @escaping @Sendable () -> Double = BootClock.now,
        settleTime: Double = ClickTarget.defaultSettleTime, pid: Int32 = 0,
        publish: @escaping @Sendable (BarShown) -> Void = { _ in },
        output: @escaping @Sendable (String) -> Void
    ) {
        self.format = format
        self.maxLength = maxLength
        self.clock = clock
        self.monotonic = monotonic
        self.pid = pid
        self.publish = publish
        self.clickGuard = ClickGuard(settleTime: settleTime)
        self.shown = BarShown(pid: pid, id: nil, actionableAt: [:])
        self.output = output
        (tickingStarts, tickingContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    package func handle(_ event: SubscriptionLoop.Event) {
        switch event {
        case .update(let update):
            model.apply(update)
            guard model.hasSnapshot else { return }
        case .disconnected:
            // Nothing is known to be live while the daemon is away: hide the module.
            model.reset()
        }
        emit()
    }

    /// Called every second while ticking: re-renders; false once nothing on screen ticks.
    package func tick() -> Bool {
        guard model.hasSnapshot else { ticking = false; return false }
        emit()
        return ticking
    }

    private func emit() {
        let scene = IslandScene(model: model, now: clock())
        let nowTicking = model.hasSnapshot && scene.isTicking
        if nowTicking && !ticking { tickingContinuation.yield() }
        ticking = nowTicking
        let line = format.line(for: scene, maxLength: maxLength)
        if line != lastLine {
            lastLine = line
            output(line)
        }
        // After the line is out: a click that comes before this is about the line before.
        // A target that stays (the same activity, its line re-rendered) keeps its time.
        let targets = BarShown.targets(of: scene)
        clickGuard.shown(targets, at: monotonic())
        let record = BarShown.record(pid: pid, targets: targets.keys, guard: clickGuard)
        if record != shown {
            shown = record
            publish(record)
        }
    }
}
