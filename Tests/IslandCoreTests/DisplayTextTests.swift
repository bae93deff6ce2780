import IslandCore
import Testing

@Suite struct DisplayTextTests {
    @Test func plainTextIsUnchanged() {
        #expect(DisplayText.neutralized("Coffee · 3 min") == "Coffee · 3 min")
        #expect(DisplayText.neutralized("") == "")
    }

    @Test func bidiOverrideCannotReorderDigits() {
        #expect(DisplayText.neutralized("Pay \u{202E}0001\u{202C}$") == "Pay 0001$")
        for control in ["\u{061C}", "\u{200E}", "\u{200F}", "\u{202A}", "\u{202B}", "\u{202D}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}"] {
            #expect(DisplayText.neutralized("a\(control)b") == "ab")
        }
    }

    @Test func rightToLeftLettersKeepTheirOrder() {
        #expect(DisplayText.neutralized("שלום world") == "שלום world")
        #expect(DisplayText.neutralized("مرحبا") == "مرحبا")
    }

    @Test func combiningMarksAreBoundedPerCluster() {
        let zalgo = "e" + String(repeating: "\u{0301}", count: 1900)
        let out = DisplayText.neutralized(zalgo)
        #expect(out.count == 1)
        #expect(out.unicodeScalars.count == DisplayText.maximumScalarsPerCluster)
        // Real text with a few marks is kept whole.
        #expect(DisplayText.neutralized("Crème brûlée, Tiếng Việt") == "Crème brûlée, Tiếng Việt")
        let decomposed = "e\u{0302}\u{0301}"
        #expect(DisplayText.neutralized(decomposed).unicodeScalars.count == 3)
    }

    @Test func longEmojiSequencesFit() {
        let family = "👨🏻‍👩🏻‍👧🏻‍👦🏻"
        #expect(family.unicodeScalars.count == 11)
        #expect(DisplayText.neutralized(family) == family)
        #expect(DisplayText.neutralized("🏴󠁧󠁢󠁥󠁮󠁧󠁿") == "🏴󠁧󠁢󠁥󠁮󠁧󠁿")
    }

    @Test func aLongZeroWidthJoinerChainIsCut() {
        let chain = Array(repeating: "👨", count: 200).joined(separator: "\u{200D}")
        let out = DisplayText.neutralized(chain)
        #expect(out.unicodeScalars.count <= 200 * 2)
        for cluster in out { #expect(cluster.unicodeScalars.count <= DisplayText.maximumScalarsPerCluster) }
    }
}
