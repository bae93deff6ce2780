// swift-tools-version:6.1
import PackageDescription

// A Live Activity producer with IslandKit: copy this folder, set the path below to your
// Island checkout, and `swift run`.
let package = Package(
    name: "DeliveryExample",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` is what `package:` below refers to, wherever the checkout is and whatever
        // its folder is called (without it, a path dependency is known by its folder's name).
        .package(name: "Island", path: "../..")
    ],
    targets: [
        .executableTarget(name: "DeliveryExample", dependencies: [.product(name: "IslandKit", package: "Island")])
    ]
)
