package import IslandCore
import Foundation

/// A colour for cairo, 0…1 per channel.
package struct OverlayColor: Sendable, Hashable {
    package var red: Double, green: Double, blue: Double, alpha: Double

    package init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    package init(_ color: LayoutColor) {
        self.init(red: Double(color.red) / 255, green: Double(color.green) / 255, blue: Double(color.blue) / 255, alpha: Double(color.alpha) / 255)
    }

    package init?(hex: String) {
        guard let color = LayoutColor(hex: hex) else { return nil }
        self.init(color)
    }

    package func with(alpha: Double) -> OverlayColor { OverlayColor(red: red, green: green, blue: blue, alpha: alpha) }
}

/// The overlay's colours and font: the built-in dark style, which GTK CSS can override
/// (`@define-color island_background …` and friends in overlay.css).
package struct OverlayStyle: Sendable, Hashable {
    package var background = OverlayColor(red: 0, green: 0, blue: 0)
    package var foreground = OverlayColor(red: 1, green: 1, blue: 1)
    package var secondary = OverlayColor(red: 0.6, green: 0.6, blue: 0.62)
    package var accent = OverlayColor(red: 0.04, green: 0.52, blue: 1)
    package var button = OverlayColor(red: 0.23, green: 0.23, blue: 0.24)
    package var buttonHover = OverlayColor(red: 0.33, green: 0.33, blue: 0.35)
    package var track = OverlayColor(red: 0.28, green: 0.28, blue: 0.29)
    package var panel = OverlayColor(red: 0.07, green: 0.07, blue: 0.08, alpha: 0.96)
    package var card = OverlayColor(red: 0.11, green: 0.11, blue: 0.12)
    /// Text and symbols on a light card (a layout's light `backgroundTint`).
    package var foregroundOnLight = OverlayColor(red: 0, green: 0, blue: 0)
    package var secondaryOnLight = OverlayColor(red: 0.3, green: 0.3, blue: 0.32)
    /// A Pango font family list: Inter, the package's UI font (fonts-inter), first.
    package var fontFamily = "Inter, Cantarell, DejaVu Sans, sans-serif"
    /// The type sizes follow the island's (`Size=`).
    package var geometry = IslandGeometry.medium

    package init() {}

    /// The names overlay.css sets with `@define-color`, and where each goes.
    package static var colorNames: [(name: String, keyPath: WritableKeyPath<OverlayStyle, OverlayColor>)] {
        [
            ("island_background", \.background), ("island_foreground", \.foreground), ("island_secondary", \.secondary),
            ("island_accent", \.accent), ("island_button", \.button), ("island_button_hover", \.buttonHover),
            ("island_track", \.track), ("island_panel", \.panel), ("island_card", \.card),
            ("island_foreground_on_light", \.foregroundOnLight), ("island_secondary_on_light", \.secondaryOnLight),
        ]
    }

    /// The built-in style sheet: the same colours as `init()`, so CSS can see and override them.
    package static let builtInCSS = """
        @define-color island_background #000000;
        @define-color island_foreground #ffffff;
        @define-color island_secondary #99999e;
        @define-color island_accent #0a84ff;
        @define-color island_button #3a3a3d;
        @define-color island_button_hover #545459;
        @define-color island_track #47474a;
        @define-color island_panel rgba(18, 18, 20, 0.96);
        @define-color island_card #1c1c1f;
        @define-color island_foreground_on_light #000000;
        @define-color island_secondary_on_light #4d4d52;
        .island-overlay { background-color: transparent; }

        """

    /// A Pango font description: absolute sizes in logical pixels (never points, which
    /// would follow the display's DPI setting instead of `Size=`).
    func fontDescription(_ font: OverlayFont) -> String {
        let weight =
            switch font {
            case .title, .largeDigits: "Semi-Bold "
            case .digits: "Medium "
            case .body, .caption: ""
            }
        let size = (geometry.fontSize(font) * 100).rounded() / 100
        return "\(fontFamily) \(weight)\(size)px"
    }

    /// The keyline round the island and the bubble: a thin line just outside their edge,
    /// mostly white with a little of the layout's tint, half transparent. Over dark content (a
    /// terminal, a black window) it is the island's visible edge, at least 3:1 against the
    /// window as a component's boundary needs (WCAG 1.4.11); over light content, where the
    /// black shape stands out by itself, it all but vanishes into what is behind it rather
    /// than ringing the island.
    package func keyline(tint: LayoutColor?) -> OverlayColor {
        let white = 0.9, alpha = 0.45
        guard let tint else { return OverlayColor(red: 1, green: 1, blue: 1, alpha: alpha) }
        let color = OverlayColor(tint)
        func mix(_ channel: Double) -> Double { white + (1 - white) * channel }
        return OverlayColor(red: mix(color.red), green: mix(color.green), blue: mix(color.blue), alpha: alpha * color.alpha)
    }

    /// Whether a card of this colour needs dark ink: white text on it would fall short of
    /// 4.5:1. A translucent tint is judged over black, as the panel under it nearly is.
    package static func isLight(_ color: LayoutColor) -> Bool {
        let tint = OverlayColor(color)
        let over = OverlayColor(red: tint.red * tint.alpha, green: tint.green * tint.alpha, blue: tint.blue * tint.alpha)
        return contrast(OverlayColor(red: 1, green: 1, blue: 1), over) < 4.5
    }

    /// WCAG 2 contrast ratio of two opaque colours (1…21): text needs at least 4.5.
    package static func contrast(_ a: OverlayColor, _ b: OverlayColor) -> Double {
        func luminance(_ c: OverlayColor) -> Double {
            func linear(_ v: Double) -> Double { v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
            return 0.2126 * linear(c.red) + 0.7152 * linear(c.green) + 0.0722 * linear(c.blue)
        }
        let (la, lb) = (luminance(a), luminance(b))
        return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
    }
}

extension OverlayStyle {
    /// Why the user's style sheet is not loaded, or nil when it may be. GTK reads on the main
    /// thread every file a style sheet names, through `@import` and `url()`, and any program of
    /// the user's can write overlay.css: an import of a FIFO held the overlay's start for good.
    /// The sheet is for colours and fonts, so neither is taken; nor is a backslash, since CSS
    /// escapes can spell either (`@\69mport`, `u\72l(`).
    package static func refusal(ofUserCSS text: String) -> String? {
        let lowered = text.lowercased()
        if lowered.contains("@import") { return "it has an @import, and GTK would read the file it names" }
        if lowered.contains("url(") { return "it has a url(), and GTK would read the file it names" }
        if text.contains("\\") { return "it has a backslash, which CSS escapes could spell @import or url() with" }
        return nil
    }
}
