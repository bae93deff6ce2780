/// What a `.varlinkmap` file says: the methods whose parameters a program decodes, and the
/// Swift side of what the interfaces declare where their own types are not enough.
///
///     type <interface>.<Type>: <Swift type>
///       <member>: <Swift type>
///     method <interface>.<Method> [as <struct>] [readable] [: <protocols>]
///       <member> [as <property>] [: <Swift type>] [= <value when absent or null>]
///
///     import <module>
///     names <interface> as <Swift enum>
///     replies <interface> as <Swift enum>
///     access <public | package | internal>
///
/// `#` starts a comment line. The imports are those of the Swift types named.
package struct ParameterMap: Sendable {
    package struct Member: Sendable, Equatable {
        package var name: String
        /// The Swift property, when it is not the member's name.
        package var property: String?
        /// The Swift type, when it is not the one the IDL type makes.
        package var swiftType: String?
        /// What an absent or null member is read as; its property is then not optional.
        package var absent: String?
    }

    /// A type of an interface, made in Swift by `swiftType.fromWire(<members>:)`.
    package struct TypeMapping: Sendable, Equatable {
        package var interface: String
        package var name: String
        package var swiftType: String
        package var members: [Member]
    }

    package struct Method: Sendable, Equatable {
        package var interface: String
        package var name: String
        /// `<Method>Parameters` unless given.
        package var structName: String
        /// Also read straight from a call's text (`VarlinkReadableParameters`).
        package var readable: Bool
        package var conformances: [String]
        package var members: [Member]
    }

    /// Modules the generated code imports, besides those it is written with.
    package var imports: [String] = []
    package var types: [TypeMapping] = []
    package var methods: [Method] = []
    /// Interfaces whose member names are written as constants, each in an enum of this name.
    package var names: [(interface: String, swiftEnum: String)] = []
    /// Interfaces whose methods' replies (and the types within them) are written as structs
    /// read from a reply's object, each interface's in an enum of this name.
    package var replies: [(interface: String, swiftEnum: String)] = []
    /// The access level of the names' and replies' enums: `package` in a module that is no product, so the
    /// names are no part of any supported API.
    package var access = "public"

    package init(parsing text: String) throws(CodegenError) {
        // The header the indented lines that follow belong to.
        var last: Header?
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingSpaces
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let number = offset + 1
            if rawLine.first == " " {
                try append(Self.member(line, line: number), to: last, line: number)
                continue
            }
            last = nil
            if line.hasPrefix("import ") {
                imports.append(String(line.dropFirst("import ".count)).trimmingSpaces)
                continue
            }
            if line.hasPrefix("access ") {
                let level = String(line.dropFirst("access ".count)).trimmingSpaces
                guard ["public", "package", "internal"].contains(level) else {
                    throw CodegenError("line \(number): expected 'access public', 'access package' or 'access internal'")
                }
                access = level
                continue
            }
            if line.hasPrefix("names ") || line.hasPrefix("replies ") {
                let words = line.split(separator: " ").map(String.init)
                guard words.count == 4, words[2] == "as" else {
                    throw CodegenError("line \(number): expected '\(words[0]) <interface> as <Swift enum>'")
                }
                if words[0] == "names" { names.append((words[1], words[3])) } else { replies.append((words[1], words[3])) }
                continue
            }
            let (head, conformances) = line.split(at: ":")
            let words = head.split(separator: " ").map(String.init)
            guard words.count >= 2, let dot = words[1].lastIndex(of: ".") else {
                throw CodegenError("line \(number): expected 'type' or 'method' and a qualified name")
            }
            let interface = String(words[1][..<dot]), name = String(words[1][words[1].index(after: dot)...])
            switch words[0] {
            case "type":
                guard words.count == 2, let swiftType = conformances, !swiftType.isEmpty else {
                    throw CodegenError("line \(number): a type needs its Swift type: 'type <interface>.<Type>: <Swift type>'")
                }
                types.append(TypeMapping(interface: interface, name: name, swiftType: swiftType, members: []))
                last = .type
            case "method":
                var method = Method(
                    interface: interface, name: name, structName: name + "Parameters", readable: false,
                    conformances: conformances.map { $0.split(separator: ",").map { $0.trimmingSpaces } } ?? [],
                    members: [])
                var rest = words.dropFirst(2)
                if rest.first == "as", rest.count >= 2 {
                    method.structName = rest[rest.startIndex + 1]
                    rest = rest.dropFirst(2)
                }
                if rest.first == "readable" {
                    method.readable = true
                    rest = rest.dropFirst()
                }
                guard rest.isEmpty else { throw CodegenError("line \(number): unexpected '\(rest.joined(separator: " "))'") }
                methods.append(method)
                last = .method
            default:
                throw CodegenError("line \(number): expected 'type' or 'method'")
            }
        }
    }

    private enum Header { case type, method }

    private mutating func append(_ member: Member, to header: Header?, line: Int) throws(CodegenError) {
        switch header {
        case .type?:
            guard member.property == nil, member.absent == nil, member.swiftType != nil else {
                throw CodegenError("line \(line): a type's member has only a Swift type: '<member>: <Swift type>'")
            }
            types[types.count - 1].members.append(member)
        case .method?:
            methods[methods.count - 1].members.append(member)
        case nil:
            throw CodegenError("line \(line): a member outside a type or method")
        }
    }

    /// `<member> [as <property>] [: <Swift type>] [= <value>]`
    private static func member(_ line: String, line number: Int) throws(CodegenError) -> Member {
        let (declaration, absent) = line.split(at: "=")
        let (names, swiftType) = declaration.split(at: ":")
        let words = names.split(separator: " ").map(String.init)
        guard words.count == 1 || (words.count == 3 && words[1] == "as") else {
            throw CodegenError("line \(number): expected '<member> [as <property>] [: <Swift type>] [= <value>]'")
        }
        guard swiftType != nil || absent != nil || words.count == 3 else {
            throw CodegenError("line \(number): '\(words[0])' says nothing the IDL does not")
        }
        return Member(
            name: words[0], property: words.count == 3 ? words[2] : nil,
            swiftType: swiftType.flatMap { $0.isEmpty ? nil : $0 }, absent: absent.flatMap { $0.isEmpty ? nil : $0 })
    }
}

package struct CodegenError: Error, Sendable, Equatable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
    }

    /// Before and after the first `separator`, each trimmed; nil after when there is none.
    func split(at separator: Character) -> (String, String?) {
        guard let index = firstIndex(of: separator) else { return (trimmingSpaces, nil) }
        return (self[..<index].trimmingSpaces, self[self.index(after: index)...].trimmingSpaces)
    }
}
