internal import VarlinkIDL

/// The replies of an interface as Swift, for its clients: for each method with a reply a struct
/// of its members, read from the reply's object (`init(_ reply: JSONObject)`), and for each struct
/// type a struct read from a member's value (`ReplyValue`), all in one enum per interface. Each
/// also keeps the object it was read from (`json`), for a client that passes it on whole.
///
/// What a client may rely on is what the interface says, and no more: a member it does not
/// declare is ignored (a newer daemon may send more), one it declares missing or of another type
/// is an `UnexpectedReply` naming the method, where, and what was expected. An enum's value is
/// read as its name, a `String`, so a value a newer daemon adds still reads. An anonymous
/// struct's struct is named after its member (`alert` → `Alert`) inside the struct that has it.
///
/// The code is written against `ReplyValue` (a value of one Swift type, read from JSON, with
/// the interface's name for its type), `ReplyMembers` (members by name) and `UnexpectedReply`,
/// which the program declares.
extension ParameterCodegen {
    func emitReplies(of name: String, as swiftEnum: String, to out: inout String) throws(CodegenError) {
        let interface = try interface(name)
        var structs: [(name: String, lines: [String])] = []
        for (type, declared) in interface.types {
            guard case .struct(let fields) = declared else { continue }
            structs.append((type, try replyStruct(type, fields: fields, of: "\(name).\(type)", doc: "\(name).\(type)", method: nil, in: interface)))
        }
        // The IDL gives a type and a method no one name, so no struct hides another.
        for (method, signature) in interface.methods where !signature.output.isEmpty {
            let doc = "\(name).\(method)(\(signature.input.map(\.name).joined(separator: ", "))) -> (\(signature.output.map(\.name).joined(separator: ", ")))"
            structs.append(
                (method, try replyStruct(method, fields: signature.output, of: "\(name).\(method)", doc: doc, method: "\(name).\(method)", in: interface)))
        }
        out += "\n/// The replies of `\(name)`'s methods, and its struct types, read from JSON: a member the\n"
        out += "/// interface does not declare is ignored, one missing or of another type is an `UnexpectedReply`.\n"
        out += "\(map.access) enum \(swiftEnum) {"
        for (_, lines) in structs.sorted(by: { $0.name < $1.name }) {
            out += "\n" + lines.map { $0.isEmpty ? "\n" : "    \($0)\n" }.joined()
        }
        out += "}\n"
    }

    /// A struct of `fields`: a method's reply when `method` names it, else a type's (`ReplyValue`),
    /// whose `replyType` is its name, or `object` for an anonymous struct's (`anonymous`).
    private func replyStruct(
        _ structName: String, fields: [VarlinkField], of owner: String, doc: String, method: String?, anonymous: Bool = false,
        in interface: VarlinkInterface
    ) throws(CodegenError) -> [String] {
        let access = map.access
        var nested: [[String]] = []
        var properties: [(id: String, type: String, read: String)] = []
        for field in fields {
            guard field.name != "json" else { throw CodegenError("\(owner): a member named 'json' would hide the object read") }
            var type = field.type, nullable = false
            if case .nullable(let inner) = type { (type, nullable) = (inner, true) }
            let valueType = try replySwiftType(of: type, member: field.name, of: owner, in: interface, nested: &nested)
            let read = nullable ? "optional" : "required"
            properties.append((Self.identifier(field.name), nullable ? valueType + "?" : valueType, "try ReplyMembers.\(read)(members, \"\(field.name)\")"))
        }
        var lines = ["/// `\(doc)`"]
        lines.append("\(access) struct \(structName): \(method == nil ? "ReplyValue" : "Sendable"), Equatable {")
        for property in properties {
            lines.append("    \(access) var \(property.id): \(property.type)")
        }
        lines.append("    /// The object as received, with any member the interface does not declare.")
        lines.append("    \(access) var json: JSONObject")
        for inner in nested {
            lines.append("")
            lines += inner.map { $0.isEmpty ? "" : "    " + $0 }
        }
        lines.append("")
        if let method {
            lines.append("    /// Reads the reply of `\(method)`.")
            lines.append("    \(access) init(_ members: JSONObject) throws(UnexpectedReply) {")
            lines.append("        do throws(UnexpectedReply) {")
            lines += properties.map { "            self.\($0.id) = \($0.read)" }
            lines.append("            self.json = members")
            lines.append("        } catch {")
            lines.append("            throw error.replying(to: \"\(method)\")")
            lines.append("        }")
            lines.append("    }")
        } else {
            lines.append("    \(access) static var replyType: String { \"\(anonymous ? "object" : structName)\" }")
            lines.append("")
            lines.append("    \(access) init(reply value: JSON) throws(UnexpectedReply) {")
            lines.append("        let members = try ReplyMembers.object(value, Self.self)")
            lines += properties.map { "        self.\($0.id) = \($0.read)" }
            lines.append("        self.json = members")
            lines.append("    }")
        }
        lines.append("}")
        return lines
    }

    /// The Swift type a value of `type` is read as; an anonymous struct's struct is added to `nested`.
    private func replySwiftType(
        of type: VarlinkType, member: String, of owner: String, in interface: VarlinkInterface, nested: inout [[String]]
    ) throws(CodegenError) -> String {
        switch type {
        case .string, .enum: return "String"
        case .bool: return "Bool"
        case .float: return "Double"
        case .int: return "Int"
        case .object: return "JSONObject"
        case .named(let name):
            switch interface.types[name] {
            case .struct?: return name
            case .enum?: return "String"
            case let declared?: return try replySwiftType(of: declared, member: member, of: owner, in: interface, nested: &nested)
            case nil: throw CodegenError("\(owner).\(member) is a '\(name)', which \(interface.name) does not declare")
            }
        case .struct(let fields):
            let name = member.prefix(1).uppercased() + member.dropFirst()
            guard interface.types[name] == nil else {
                throw CodegenError("\(owner).\(member): its struct would hide the type '\(name)'")
            }
            nested.append(
                try replyStruct(name, fields: fields, of: "\(owner).\(member)", doc: "\(owner).\(member)", method: nil, anonymous: true, in: interface))
            return name
        case .array(let element):
            return "[" + (try replySwiftType(of: element, member: member, of: owner, in: interface, nested: &nested)) + "]"
        case .dictionary(let element):
            return "[String: " + (try replySwiftType(of: element, member: member, of: owner, in: interface, nested: &nested)) + "]"
        case .nullable:
            throw CodegenError("\(owner).\(member): a nullable value within an array or a dictionary is not read")
        }
    }
}
