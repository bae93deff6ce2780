package import Foundation
package import OrderedJSON
import FreeDesktop

/// Resolves layouts against one activity's attributes and state at one instant.
///
/// Rendering never fails: a missing key renders as nothing, a number template that does not
/// render to a number leaves its timer unresolved and its progress at 0, and a URL that does
/// not render to an allowed URL is nil.
package struct LayoutRenderer: Sendable {
    package let attributes: JSONObject
    package let state: JSONObject
    /// Seconds since the Unix epoch.
    package let now: Double
    /// Every template rendered here shares one work budget (`LayoutLimits.maximumRenderWork`).
    private let root: MustacheRoot

    /// - Parameter timeZone: where the `time` transform writes dates for; the presenter's own
    ///   unless given (tests give one).
    package init(attributes: JSONObject, state: JSONObject, now: Double, timeZone: TimeZone = .current) {
        self.attributes = attributes
        self.state = state
        self.now = now
        self.root = .root(attributes: attributes, state: state, clock: MustacheClock(now: now, timeZone: timeZone))
    }

    package func render(_ layout: Layout) -> RenderedLayout {
        let fallback = layout.url
        return RenderedLayout(
            lockScreen: layout.lockScreen.map { render($0, fallbackURL: fallback) },
            compactLeading: layout.compactLeading.map { render($0, fallbackURL: fallback) },
            compactTrailing: layout.compactTrailing.map { render($0, fallbackURL: fallback) },
            minimal: layout.minimal.map { render($0, fallbackURL: fallback) },
            expandedLeading: layout.expanded.leading.map { render($0, fallbackURL: fallback) },
            expandedTrailing: layout.expanded.trailing.map { render($0, fallbackURL: fallback) },
            expandedCenter: layout.expanded.center.map { render($0, fallbackURL: fallback) },
            expandedBottom: layout.expanded.bottom.map { render($0, fallbackURL: fallback) },
            keylineTint: layout.keylineTint,
            backgroundTint: layout.backgroundTint,
            chip: layout.chip,
            lockScreenVisibility: layout.lockScreenVisibility,
            url: fallback.flatMap(resolve)
        )
    }

    /// - Parameter fallbackURL: the layout's URL, opened when the region has none.
    package func render(_ region: LayoutRegion, fallbackURL: LayoutURL? = nil) -> RenderedRegion {
        let ownURL: LayoutURL? = if case .link(let link) = region.view { link.url } else { region.url }
        return RenderedRegion(
            view: render(region.view),
            priority: region.priority,
            belowIfTooWide: region.belowIfTooWide,
            url: (ownURL ?? fallbackURL).flatMap(resolve)
        )
    }

    package func render(_ view: LayoutView) -> RenderedView {
        switch view {
        case .text(let template): .text(DisplayText.neutralized(template.render(root)))
        case .symbol(let symbol): .symbol(DisplayText.neutralized(render(symbol)))
        case .timer(let timer): .timer(render(timer))
        case .progress(let progress): .progress(render(progress))
        case .hstack(let stack): .hstack(stack.children.map(render), spacing: stack.spacing)
        case .vstack(let stack): .vstack(stack.children.map(render), spacing: stack.spacing)
        case .spacer: .spacer
        case .link(let link): .link(url: resolve(link.url), child: render(link.child))
        case .button(let button):
            // A symbol that renders to nothing is no symbol: the label stands alone.
            .button(
                action: button.action, label: DisplayText.neutralized(button.label.render(root)),
                symbol: button.symbol.map { DisplayText.neutralized(render($0)) }.flatMap { $0.isEmpty ? nil : $0 })
        case .image(let image): render(image)
        }
    }

    /// A number written out, or what its template renders to if that is a finite number.
    package func resolve(_ number: LayoutNumber) -> Double? {
        switch number {
        case .constant(let value): return value
        case .template(let template):
            let text = Substring(template.render(root)).trimmingWhitespace()
            guard let value = Double(text), value.isFinite else { return nil }
            return value
        }
    }

    /// The URL for this activity, or nil if the template did not produce an allowed one.
    package func resolve(_ url: LayoutURL) -> String? { url.resolve(root) }

    private func render(_ symbol: LayoutSymbol) -> String {
        let name = symbol.name.render(root)
        return symbol.names[name] ?? name
    }

    /// The picture when its source renders, whole, to a local file (`LocalFile.path(from:)`);
    /// else its fallback, or nothing.
    private func render(_ image: LayoutImage) -> RenderedView {
        let fallback = image.fallback.map(render)
        guard let source = image.source.renderUncut(root), let path = LocalFile.path(from: source) else { return fallback ?? .text("") }
        return .image(path: path, fallback: fallback)
    }

    private func render(_ timer: LayoutTimer) -> RenderedTimer {
        let from = timer.from.flatMap(resolve)
        let to = timer.to.flatMap(resolve)
        let seconds: Double? =
            if timer.countsDown {
                to.map { max(0, $0 - now) }
            } else {
                from.map { from in max(0, min(now, to ?? now) - from) }
            }
        return RenderedTimer(from: from, to: to, countsDown: timer.countsDown, seconds: seconds)
    }
}
