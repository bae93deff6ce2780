import Foundation
import OrderedJSON

/// Converts Codable values to and from the daemon's JSON objects. Dates travel as seconds
/// since the Unix epoch, like every date of the protocol, so layouts can use them.
enum JSONCoding {
    struct NotAnObject: Error, CustomStringConvertible {
        var typeName: String
        var description: String { "\(typeName) does not encode as a JSON object" }
    }

    static func object(_ value: some Encodable) throws -> JSONObject {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.nonConformingFloatEncodingStrategy = .throw
        // Deterministic: the same value is always the same JSON (and the same size).
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(value)
        let json = try JSONParser.parse(Array(data))
        guard let object = json.objectValue else { throw NotAnObject(typeName: String(describing: type(of: value))) }
        return object
    }

    static func decode<T: Decodable>(_ type: T.Type, from object: JSONObject) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(type, from: Data(JSON.object(object).serialized()))
    }
}

extension Date {
    var epochSeconds: Double { timeIntervalSince1970 }
}
