// swift-tools-version:6.1
import PackageDescription

// A Live Activity producer with IslandKit: copy this folder, change the path below to your
// Island checkout (or its URL and a version), and `swift run`.
let package = Package(
    name: "DeliveryExample",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
    ],
    targets: [
        // "IslandKit" by name: SwiftPM finds the product in the dependencies. Spelt
        // `.product(name: "IslandKit", package: …)`, the package is the checkout's FOLDER name
        // for a path dependency ("island", or "main" for a checkout in a folder named main).
        .executableTarget(name: "DeliveryExample", dependencies: ["IslandKit"]),
    ]
)
