extension Substring {
    /// Without leading and trailing whitespace (IslandCore does not import Foundation for this).
    func trimmingWhitespace() -> Substring {
        let leadingTrimmed = drop(while: \.isWhitespace)
        return leadingTrimmed.dropLast(leadingTrimmed.reversed().prefix(while: \.isWhitespace).count)
    }
}
