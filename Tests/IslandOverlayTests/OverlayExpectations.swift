@testable import IslandOverlay
import Testing

// One typed `#expect` each for the comparisons the overlay suites make most. An
// `#expect(desk.form == .compact)` at every call site costs the test build 10-60 ms more of
// type-checking than a call of these (each `#expect` expansion is type-checked on its own, its
// operands' types inferred through it); a failure still shows both values, at the caller's line.

/// Expects the island's form to be `expected` (nil: nothing shown yet).
func expectForm(_ form: OverlayForm?, _ expected: OverlayForm?, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(form == expected, comment, sourceLocation: sourceLocation)
}

/// Expects a point of a frame to be `expected` to a click.
func expectTarget(_ target: OverlayTarget, _ expected: OverlayTarget, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(target == expected, comment, sourceLocation: sourceLocation)
}

/// Expects a click's decision (what it targets, and whether it acts) to be `expected`.
func expectClick(
    _ decision: OverlayClicks.Decision, _ expected: OverlayClicks.Decision, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(decision == expected, comment, sourceLocation: sourceLocation)
}

/// Expects a placement step, between monitors named by strings, to be `expected` (the monitor
/// type fixed here rather than inferred from the literals through the macro).
func expectStep(
    _ step: OverlayPlacementStep<String>, _ expected: OverlayPlacementStep<String>, _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(step == expected, comment, sourceLocation: sourceLocation)
}
