public import IslandCore

/// A colour for cairo, 0…1 per channel.
public struct OverlayColor: Sendable, Hashable {
    public var red: Double, green: Double, blue: Double, alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public init(_ color: LayoutColor) {
        self.init(red: Double(color.red) / 255, green: Double(color.green) / 255, blue: Double(color.blue) / 255, alpha: Double(color.alpha) / 255)
    }

    public init?(hex: String) {
        guard let color = LayoutColor(hex: hex) else { return nil }
        self.init(color)
    }

    public func with(alpha: Double) -> OverlayColor { OverlayColor(red: red, green: green, blue: blue, alpha: alpha) }
}

/// The overlay's colours and font: the built-in dark style, which GTK CSS can override
/// (`@define-color island_background …` and friends in overlay.css).
public struct OverlayStyle: Sendable, Hashable {
    public var background = OverlayColor(red: 0, green: 0, blue: 0)
    public var foreground = OverlayColor(red: 1, green: 1, blue: 1)
    public var secondary = OverlayColor(red: 0.6, green: 0.6, blue: 0.62)
    public var accent = OverlayColor(red: 0.04, green: 0.52, blue: 1)
    public var button = OverlayColor(red: 0.23, green: 0.23, blue: 0.24)
    public var buttonHover = OverlayColor(red: 0.33, green: 0.33, blue: 0.35)
    public var track = OverlayColor(red: 0.28, green: 0.28, blue: 0.29)
    public var panel = OverlayColor(red: 0.07, green: 0.07, blue: 0.08, alpha: 0.96)
    public var card = OverlayColor(red: 0.11, green: 0.11, blue: 0.12)
    /// A Pango font family list.
    public var fontFamily = "Cantarell, Inter, DejaVu Sans, sans-serif"

    public init() {}

    /// The names overlay.css sets with `@define-color`, and where each goes.
    public static var colorNames: [(name: String, keyPath: WritableKeyPath<OverlayStyle, OverlayColor>)] { [
        ("island_background", \.background), ("island_foreground", \.foreground), ("island_secondary", \.secondary),
        ("island_accent", \.accent), ("island_button", \.button), ("island_button_hover", \.buttonHover),
        ("island_track", \.track), ("island_panel", \.panel), ("island_card", \.card),
    ] }

    /// The built-in style sheet: the same colours as `init()`, so CSS can see and override them.
    public static let builtInCSS = """
        @define-color island_background #000000;
        @define-color island_foreground #ffffff;
        @define-color island_secondary #99999e;
        @define-color island_accent #0a84ff;
        @define-color island_button #3a3a3d;
        @define-color island_button_hover #545459;
        @define-color island_track #47474a;
        @define-color island_panel rgba(18, 18, 20, 0.96);
        @define-color island_card #1c1c1f;
        .island-overlay { background-color: transparent; }

        """

    func fontDescription(_ font: OverlayFont) -> String {
        switch font {
        case .body: "\(fontFamily) 10.5"
        case .title: "\(fontFamily) Bold 11"
        case .caption: "\(fontFamily) 9"
        case .digits: "\(fontFamily) Medium 10.5"
        }
    }
}
