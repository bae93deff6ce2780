extension IslandConfiguration {
    /// The candidate closest to `word` by edit distance, ignoring case, so a typo or a wrong
    /// capitalisation gets a "did you mean" instead of a bare "unknown".
    static func closest(to word: String, among candidates: [String]) -> String? {
        let target = Array(word.lowercased())
        return candidates.min { editDistance(target, Array($0.lowercased())) < editDistance(target, Array($1.lowercased())) }
    }

    /// Levenshtein distance, two rows at a time.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
