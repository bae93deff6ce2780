import Foundation
import OrderedJSON
import OrderedCollections
import Synchronization
import VarlinkCore

/// `org.varlink.certification`, served the way the reference implementation serves it:
/// each client walks Start, Test01 … Test11, End, and every call must carry exactly the
/// parameters the previous reply implies, or it fails with `CertificationError`.
final class CertificationService: Sendable {
    static let interface = try! VarlinkInterface(
        parsing: String(decoding: PackageResources.org_varlink_certification_varlink, as: UTF8.self))

    /// The method each client id must call next.
    private let nextMethod = Mutex<[String: String]>([:])

    static let order = [
        "Start", "Test01", "Test02", "Test03", "Test04", "Test05", "Test06", "Test07", "Test08",
        "Test09", "Test10", "Test11", "End",
    ]

    static let pi = JSON.double(Double.pi)

    static let struct6: JSON = ["bool": false, "int": 2, "float": pi, "string": "a lot of string"]

    static let map: JSON = ["foo": "Foo", "bar": "Bar"]

    static let set: JSON = ["one": [:], "two": [:], "three": [:]]

    static let myType: JSON = [
        "object": ["method": "org.varlink.certification.Test09", "parameters": ["map": ["foo": "Foo", "bar": "Bar"]]],
        "enum": "two",
        "struct": ["first": 1, "second": "2"],
        "array": ["one", "two", "three"],
        "dictionary": ["foo": "Foo", "bar": "Bar"],
        "stringset": ["one": [:], "two": [:], "three": [:]],
        "nullable": nil,
        "nullable_array_struct": nil,
        "interface": [
            "foo": [nil, ["foo": "foo", "bar": "bar"], nil, ["one": "foo", "two": "bar"]],
            "anon": ["foo": true, "bar": false],
        ],
    ]

    static let replies10: [String] = (1...10).map { "Reply number \($0)" }

    var implementation: VarlinkImplementation {
        VarlinkImplementation(
            interface: Self.interface,
            handlers: [
                "Start": .immediate { [self] request throws(VarlinkError) in
                    let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                    nextMethod.withLock { $0[id] = "Start" }
                    try advance(id, from: "Start")
                    try expect(request, [:], id: id)
                    return ["client_id": .string(id)]
                },
                "Test01": step("Test01", wants: [:], reply: ["bool": true]),
                "Test02": step("Test02", wants: ["bool": true], reply: ["int": 1]),
                "Test03": step("Test03", wants: ["int": 1], reply: ["float": 1.0]),
                "Test04": step("Test04", wants: ["float": 1.0], reply: ["string": "ping"]),
                "Test05": step(
                    "Test05", wants: ["string": "ping"],
                    reply: ["bool": false, "int": 2, "float": Self.pi, "string": "a lot of string"]),
                "Test06": step(
                    "Test06", wants: ["bool": false, "int": 2, "float": Self.pi, "string": "a lot of string"],
                    reply: ["struct": Self.struct6]),
                "Test07": step("Test07", wants: ["struct": Self.struct6], reply: ["map": Self.map]),
                "Test08": step("Test08", wants: ["map": Self.map], reply: ["set": Self.set]),
                "Test09": step("Test09", wants: ["set": Self.set], reply: ["mytype": Self.myType]),
                "Test10": .streaming { [self] request, responder in
                    do throws(VarlinkError) {
                        let id = try clientID(request)
                        try advance(id, from: "Test10")
                        var wants = Self.myType.objectValue!
                        var got = request.parameters["mytype"]?.objectValue ?? [:]
                        // The nullable members may be null or absent.
                        for key in ["nullable", "nullable_array_struct"] {
                            if got[key] == .null { got[key] = nil }
                            wants[key] = nil
                        }
                        guard JSON.object(got).numericallyEquals(.object(wants)) else {
                            throw failure(id, wants: .object(["mytype": .object(wants)]), got: request)
                        }
                        for (i, text) in Self.replies10.enumerated() {
                            responder.reply(["string": .string(text)], continues: i < Self.replies10.count - 1)
                        }
                    } catch {
                        responder.fail(error)
                    }
                },
                "Test11": .immediate { [self] request throws(VarlinkError) in
                    let id = try clientID(request)
                    try advance(id, from: "Test11")
                    guard request.call.oneway else {
                        throw failure(id, wants: ["oneway": true], got: request)
                    }
                    try expect(request, ["last_more_replies": .array(Self.replies10.map { .string($0) })], id: id)
                    return [:]
                },
                "End": .immediate { [self] request throws(VarlinkError) in
                    let id = try clientID(request)
                    try advance(id, from: "End")
                    try expect(request, [:], id: id)
                    nextMethod.withLock { $0[id] = nil }
                    return ["all_ok": true]
                },
            ])
    }

    private func step(_ method: String, wants: JSONObject, reply: JSONObject) -> VarlinkMethodHandler {
        .immediate { [self] request throws(VarlinkError) in
            let id = try clientID(request)
            try advance(id, from: method)
            try expect(request, wants, id: id)
            return reply
        }
    }

    private func clientID(_ request: VarlinkRequest) throws(VarlinkError) -> String {
        guard let id = request.parameters["client_id"]?.stringValue else {
            throw VarlinkError("org.varlink.certification.ClientIdError")
        }
        return id
    }

    /// Checks that `method` is the one this client must call now, and moves it on.
    private func advance(_ id: String, from method: String) throws(VarlinkError) {
        let expected: String? = nextMethod.withLock { table in
            guard let expected = table[id] else { return nil }
            if expected == method, let i = Self.order.firstIndex(of: method) {
                table[id] = Self.order[(i + 1) % Self.order.count]
            }
            return expected
        }
        guard let expected else { throw VarlinkError("org.varlink.certification.ClientIdError") }
        guard expected == method else {
            throw VarlinkError(
                "org.varlink.certification.CertificationError",
                [
                    "wants": ["method": .string("org.varlink.certification.\(expected)")],
                    "got": ["method": .string("org.varlink.certification.\(method)")],
                ])
        }
    }

    /// Checks the call's parameters (besides `client_id`) and flags against the reference's.
    private func expect(_ request: VarlinkRequest, _ wants: JSONObject, id: String) throws(VarlinkError) {
        var got = request.parameters
        got["client_id"] = nil
        guard JSON.object(got).numericallyEquals(.object(wants)), !request.call.more || request.call.methodName == "Test10" else {
            throw failure(id, wants: .object(wants), got: request)
        }
    }

    private func failure(_ id: String, wants: JSON, got request: VarlinkRequest) -> VarlinkError {
        nextMethod.withLock { $0[id] = nil }
        var message: JSONObject = ["method": .string(request.call.method), "parameters": .object(request.parameters)]
        if request.call.more { message["more"] = true }
        if request.call.oneway { message["oneway"] = true }
        return VarlinkError("org.varlink.certification.CertificationError", ["wants": wants, "got": .object(message)])
    }
}
