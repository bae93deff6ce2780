import IslandJSON

/// Drives a bar module: folds updates into the model and writes a line whenever the rendered
/// line changes, re-rendering every second while something on screen ticks, and only then:
/// `tickingStarts` says when to start the clock, and `tick()` when to stop it, so an idle
/// bar sleeps (DESIGN.md §9: no wake-up while nothing changes).
public actor BarDriver {
    /// Yields each time the screen starts ticking.
    public nonisolated let tickingStarts: AsyncStream<Void>
    private let tickingContinuation: AsyncStream<Void>.Continuation
    private var ticking = false
    public let format: BarFormat
    public let maxLength: Int
    private var model = PresenterModel()
    private var lastLine: String?
    private let output: @Sendable (String) -> Void
    private let clock: @Sendable () -> Double

    public init(format: BarFormat, maxLength: Int = BarFormat.defaultMaxLength, clock: @escaping @Sendable () -> Double,
                output: @escaping @Sendable (String) -> Void) {
        self.format = format
        self.maxLength = maxLength
        self.clock = clock
        self.output = output
        (tickingStarts, tickingContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    public func handle(_ event: SubscriptionLoop.Event) {
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
    public func tick() -> Bool {
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
        guard line != lastLine else { return }
        lastLine = line
        output(line)
    }
}
