/// The one rule every producer string passes before any presenter draws it, whatever the sink:
/// what a string may *mean* on screen, not how a sink escapes it (terminals, bars and SVG each
/// escape their own syntax on top of this).
///
/// - **No bidi controls.** Embeddings, overrides, isolates and directional marks
///   (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) are dropped: with them a producer
///   draws `Pay \u{202E}0001\u{202C}$` as "Pay 1000$" and can reorder the text around its own.
///   Text in a right-to-left script keeps its direction (the Unicode bidi algorithm still runs on
///   its letters); a sink that lays strings out in one paragraph isolates each string on top of
///   this (the overlay wraps each in FSI … PDI).
/// - **Bounded clusters.** A grapheme cluster keeps at most `maximumScalarsPerCluster` scalars:
///   1,900 combining marks on one letter cost a shaper (HarfBuzz through Pango) quadratic work
///   and tripled the overlay's paint time, and no script needs more than a few marks on a letter.
///   The longest emoji sequences (a family with four skin tones, 11 scalars) fit.
package enum DisplayText {
    /// The most scalars one grapheme cluster keeps; the rest of the cluster is dropped.
    package static let maximumScalarsPerCluster = 12

    /// `text` with bidi controls dropped and every grapheme cluster bounded.
    package static func neutralized(_ text: String) -> String {
        // The common case (plain text) costs one pass and no copy.
        guard needsWork(text) else { return text }
        var out = String.UnicodeScalarView()
        for cluster in text {
            var kept = 0
            for scalar in cluster.unicodeScalars where !isBidiControl(scalar) {
                guard kept < maximumScalarsPerCluster else { break }
                out.append(scalar)
                kept += 1
            }
        }
        return String(out)
    }

    /// Whether `scalar` is an explicit bidi formatting character or an implicit directional mark.
    package static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Text below U+0300 (Latin, no combining marks, no bidi controls) has nothing to change;
    /// the rest is walked cluster by cluster, which is exact (a ZWJ chain of pictographs is one
    /// cluster of bases) and cheap for the 512 scalars a string may have.
    private static func needsWork(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value >= 0x300 }
    }
}
