// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Delivery",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../island"),
    ],
    targets: [
        .executableTarget(name: "Delivery", dependencies: ["IslandKit"], resources: [.copy("Delivery.json")]),
    ]
)
