import IslandJSON

/// Drives a bar module: folds updates into the model and writes a line whenever the rendered
/// line changes, re-rendering every second while something on screen ticks.
public actor BarDriver {
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

    /// Called every second: re-renders when a timer or progress is visible.
    public func tick() {
        guard model.hasSnapshot, IslandScene(model: model, now: clock()).isTicking else { return }
        emit()
    }

    private func emit() {
        let line = format.line(for: IslandScene(model: model, now: clock()), maxLength: maxLength)
        guard line != lastLine else { return }
        lastLine = line
        output(line)
    }
}
