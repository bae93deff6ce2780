import Foundation
import Testing

/// A fresh directory under the system temp directory, removed after `body`.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    var template = Array("/tmp/smallfiles.XXXXXX".utf8CString)
    let path = try #require(mkdtemp(&template).map { String(cString: $0) })
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}
