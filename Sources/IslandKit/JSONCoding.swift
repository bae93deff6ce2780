import Foundation
import OrderedJSON

/// Converts Codable values to and from the daemon's JSON objects, dates as the app's
/// configuration says (`ContentDateEncoding`).
enum JSONCoding {
    struct NotAnObject: Error, CustomStringConvertible {
        var typeName: String
        var description: String { "\(typeName) does not encode as a JSON object" }
    }

    static func object(_ value: some Encodable, dates: ContentDateEncoding) throws -> JSONObject {
        let encoder = JSONEncoder()
        switch dates {
        case .unixSeconds: encoder.dateEncodingStrategy = .secondsSince1970
        // What ActivityKit's server side encodes with: Foundation's default.
        case .activityKit: encoder.dateEncodingStrategy = .deferredToDate
        }
        encoder.nonConformingFloatEncodingStrategy = .throw
        // Deterministic: the same value is always the same JSON (and the same size).
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(value)
        let json = try JSONParser.parse(Array(data))
        guard let object = json.objectValue else { throw NotAnObject(typeName: String(describing: type(of: value))) }
        return object
    }

    static func decode<T: Decodable>(_ type: T.Type, from object: JSONObject, dates: ContentDateEncoding) throws -> T {
        let decoder = JSONDecoder()
        switch dates {
        case .unixSeconds: decoder.dateDecodingStrategy = .secondsSince1970
        case .activityKit: decoder.dateDecodingStrategy = .deferredToDate
        }
        return try decoder.decode(type, from: Data(JSON.object(object).serialized()))
    }
}

extension Date {
    var epochSeconds: Double { timeIntervalSince1970 }
}
