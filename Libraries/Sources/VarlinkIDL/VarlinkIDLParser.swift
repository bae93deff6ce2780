/// A recursive-descent parser for the Varlink IDL (varlink.org/Interface-Definition).
struct VarlinkIDLParser {
    private let text: [UInt8]
    private let source: String
    private var index = 0

    init(_ source: String) {
        self.source = source
        self.text = Array(source.utf8)
    }

    mutating func parseInterface() throws(VarlinkIDLError) -> VarlinkInterface {
        skipTrivia()
        try keyword("interface")
        try requireSpace()
        let name = try interfaceName()
        var types: [String: VarlinkType] = [:]
        var methods: [String: VarlinkMethodSignature] = [:]
        var errors: [String: [VarlinkField]] = [:]
        var memberNames: Set<String> = []

        skipTrivia()
        while index < text.count {
            let start = index
            let kind = word()
            try requireSpace()
            let memberStart = index
            let member = try memberName()
            guard memberNames.insert(member).inserted else {
                index = memberStart
                throw failure("duplicate member '\(member)'")
            }
            skipTrivia()
            switch kind {
            case "type":
                types[member] = try structOrEnum()
            case "method":
                let input = try structFields()
                skipTrivia()
                try symbol("->")
                skipTrivia()
                let output = try structFields()
                methods[member] = VarlinkMethodSignature(name: member, input: input, output: output)
            case "error":
                errors[member] = try structFields()
            default:
                index = start
                throw failure("expected 'type', 'method' or 'error'")
            }
            skipTrivia()
        }
        guard !memberNames.isEmpty else { throw failure("an interface needs at least one member") }

        let interface = VarlinkInterface(name: name, types: types, methods: methods, errors: errors, description: source)
        try Self.checkReferences(interface)
        return interface
    }

    // MARK: Types

    private mutating func type() throws(VarlinkIDLError) -> VarlinkType {
        guard index < text.count else { throw failure("expected a type") }
        switch text[index] {
        case UInt8(ascii: "?"):
            index += 1
            if index < text.count, text[index] == UInt8(ascii: "?") { throw failure("a type cannot be nullable twice") }
            return .nullable(try type())
        case UInt8(ascii: "["):
            index += 1
            if index < text.count, text[index] == UInt8(ascii: "]") {
                index += 1
                return .array(try type())
            }
            let key = word()
            guard key == "string" else { throw failure("only '[]' and '[string]' are valid here") }
            try symbol("]")
            return .dictionary(try type())
        case UInt8(ascii: "("):
            return try structOrEnum()
        default:
            let start = index
            let name = word()
            switch name {
            case "bool": return .bool
            case "int": return .int
            case "float": return .float
            case "string": return .string
            case "object": return .object
            default:
                guard Self.isMemberName(name) else {
                    index = start
                    throw failure("expected a type")
                }
                return .named(name)
            }
        }
    }

    /// `( … )`: a struct when its first item has a `:`, an enum otherwise; `()` is the empty struct.
    private mutating func structOrEnum() throws(VarlinkIDLError) -> VarlinkType {
        let save = index
        try symbol("(")
        skipTrivia()
        if peek(")") { index += 1; return .struct([]) }
        _ = try fieldName()
        skipTrivia()
        let isStruct = peek(":")
        index = save
        if isStruct { return .struct(try structFields()) }

        try symbol("(")
        var cases: [String] = []
        while true {
            skipTrivia()
            let start = index
            let name = try fieldName()
            guard !cases.contains(name) else {
                index = start
                throw failure("duplicate enum value '\(name)'")
            }
            cases.append(name)
            skipTrivia()
            if peek(")") { index += 1; return .enum(cases) }
            try symbol(",")
        }
    }

    private mutating func structFields() throws(VarlinkIDLError) -> [VarlinkField] {
        try symbol("(")
        var fields: [VarlinkField] = []
        skipTrivia()
        if peek(")") { index += 1; return fields }
        while true {
            skipTrivia()
            let start = index
            let name = try fieldName()
            guard !fields.contains(where: { $0.name == name }) else {
                index = start
                throw failure("duplicate field '\(name)'")
            }
            skipTrivia()
            try symbol(":")
            skipTrivia()
            fields.append(VarlinkField(name, try type()))
            skipTrivia()
            if peek(")") { index += 1; return fields }
            try symbol(",")
        }
    }

    private static func checkReferences(_ interface: VarlinkInterface) throws(VarlinkIDLError) {
        func check(_ type: VarlinkType, in member: String) throws(VarlinkIDLError) {
            switch type {
            case .named(let name):
                guard interface.types[name] != nil else {
                    throw VarlinkIDLError(message: "'\(member)' refers to undeclared type '\(name)'", line: 0, column: 0)
                }
            case .struct(let fields): for f in fields { try check(f.type, in: member) }
            case .array(let t), .dictionary(let t), .nullable(let t): try check(t, in: member)
            default: break
            }
        }
        for (name, type) in interface.types { try check(type, in: name) }
        for (name, method) in interface.methods {
            for f in method.input + method.output { try check(f.type, in: name) }
        }
        for (name, fields) in interface.errors {
            for f in fields { try check(f.type, in: name) }
        }
    }

    // MARK: Lexing

    private mutating func skipTrivia() {
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "#"):
                while index < text.count, text[index] != UInt8(ascii: "\n") { index += 1 }
            default:
                return
            }
        }
    }

    private mutating func requireSpace() throws(VarlinkIDLError) {
        let start = index
        skipTrivia()
        guard index > start else { throw failure("expected white space") }
    }

    private func peek(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        return text.count - index >= bytes.count && Array(text[index..<index + bytes.count]) == bytes
    }

    private mutating func symbol(_ s: String) throws(VarlinkIDLError) {
        guard peek(s) else { throw failure("expected '\(s)'") }
        index += s.utf8.count
    }

    private mutating func keyword(_ s: String) throws(VarlinkIDLError) {
        let start = index
        guard word() == s else {
            index = start
            throw failure("expected '\(s)'")
        }
    }

    /// The longest run of name characters at the current position.
    private mutating func word() -> String {
        let start = index
        while index < text.count, Self.isWordByte(text[index]) { index += 1 }
        return String(decoding: text[start..<index], as: UTF8.self)
    }

    private static func isWordByte(_ b: UInt8) -> Bool {
        isAlpha(b) || isDigit(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
    }

    private static func isAlpha(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private mutating func interfaceName() throws(VarlinkIDLError) -> String {
        let start = index
        let name = word()
        guard Self.isInterfaceName(name) else {
            index = start
            throw failure("invalid interface name '\(name)'")
        }
        return name
    }

    private mutating func memberName() throws(VarlinkIDLError) -> String {
        let start = index
        let name = word()
        guard Self.isMemberName(name) else {
            index = start
            throw failure("invalid member name '\(name)': it must start with an upper-case letter and be alphanumeric")
        }
        return name
    }

    private mutating func fieldName() throws(VarlinkIDLError) -> String {
        let start = index
        let name = word()
        guard Self.isFieldName(name) else {
            index = start
            throw failure("invalid field name '\(name)'")
        }
        return name
    }

    /// `[A-Za-z]([-]*[A-Za-z0-9])*` labels, two or more, joined by dots.
    static func isInterfaceName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for (i, label) in labels.enumerated() {
            let bytes = Array(label.utf8)
            guard let first = bytes.first, let last = bytes.last else { return false }
            guard isAlpha(first) || (i > 0 && isDigit(first)), isAlpha(last) || isDigit(last) else { return false }
            guard bytes.allSatisfy({ isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "-") }) else { return false }
        }
        return true
    }

    /// `[A-Z][A-Za-z0-9]*`
    static func isMemberName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return false }
        return bytes.allSatisfy { isAlpha($0) || isDigit($0) }
    }

    /// `[A-Za-z](_?[A-Za-z0-9])*`
    static func isFieldName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, isAlpha(first), bytes.last != UInt8(ascii: "_") else { return false }
        var previousUnderscore = false
        for b in bytes.dropFirst() {
            if b == UInt8(ascii: "_") {
                if previousUnderscore { return false }
                previousUnderscore = true
            } else if isAlpha(b) || isDigit(b) {
                previousUnderscore = false
            } else {
                return false
            }
        }
        return true
    }

    private func failure(_ message: String) -> VarlinkIDLError {
        var line = 1
        var column = 1
        for b in text[..<min(index, text.count)] {
            if b == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
        }
        return VarlinkIDLError(message: message, line: line, column: column)
    }
}
