import OrderedJSON
import OrderedCollections
import Synchronization

/// What one template render may still spend, in units of about a byte of output.
/// swift-mustache has no bound of its own: sections nested over one repeated array multiply
/// (16 over 3 elements is 3^16 passes), so the values it walks charge this instead. Every
/// member looked up and every element iterated costs `step` — the template's length, which
/// bounds the literal text and the tags one pass over a section adds — and every value
/// rendered as text costs its length. Once spent, lookups find nothing, iterations end and
/// values render empty, so what remains of the render is one pass per section already open.
final class MustacheBudget {
    private(set) var remaining: Int
    let step: Int
    /// The instant and time zone the `time` transform writes dates for.
    let clock: MustacheClock

    init(remaining: Int, step: Int, clock: MustacheClock = .epoch) {
        self.remaining = remaining
        self.step = max(1, step)
        self.clock = clock
    }

    var isExhausted: Bool { remaining < 0 }

    /// Spends `units`; false, and nothing spent any more, once that overdraws the budget.
    func spend(_ units: Int) -> Bool {
        guard remaining >= 0 else { return false }
        remaining -= units
        return remaining >= 0
    }

    /// `text` if the budget pays for it, else nothing.
    func charge(_ text: @autoclosure () -> String) -> String {
        guard !isExhausted else { return "" }
        let text = text()
        return spend(text.utf8.count) ? text : ""
    }
}

/// The work every template of one `LayoutRenderer` may do together
/// (`LayoutLimits.maximumRenderWork`), so a layout's 64 views cannot multiply the bound.
final class MustacheWork: Sendable {
    private let remaining: Mutex<Int>
    let clock: MustacheClock

    init(_ total: Int = LayoutLimits.maximumRenderWork, clock: MustacheClock = .epoch) {
        remaining = Mutex(total)
        self.clock = clock
    }

    /// Runs one render with what is left, and keeps what it did not spend.
    func spending<T>(step: Int, _ render: (MustacheBudget) -> T) -> T {
        let budget = MustacheBudget(remaining: remaining.withLock { $0 }, step: step, clock: clock)
        let result = render(budget)
        remaining.withLock { $0 = budget.remaining }
        return result
    }
}

/// What templates see, `attributes` and `state`, with the work their renders share.
struct MustacheRoot: Sendable {
    let object: JSONObject
    let work: MustacheWork

    static func root(attributes: JSONObject, state: JSONObject, clock: MustacheClock = .epoch) -> MustacheRoot {
        MustacheRoot(object: ["attributes": .object(attributes), "state": .object(state)], work: MustacheWork(clock: clock))
    }
}
