// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Delivery",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Your Island checkout; `name:` is what `package:` below refers to.
        .package(name: "Island", path: "../island")
    ],
    targets: [
        .executableTarget(
            name: "Delivery",
            dependencies: [.product(name: "IslandKit", package: "Island")],
            resources: [.copy("Delivery.json")])
    ]
)
