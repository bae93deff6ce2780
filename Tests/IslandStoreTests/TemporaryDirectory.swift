import Foundation

/// A fresh directory under the system temporary directory, removed when the test is done.
struct TemporaryDirectory: ~Copyable {
    let path: String

    init() {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("island-store-tests-\(UUID().uuidString)").path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
