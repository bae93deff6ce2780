// swift-tools-version:6.1
import Foundation
import PackageDescription

/// Compiler flags from pkg-config for the overlay's C libraries, without `-pthread`: through
/// `pkgConfig:` SwiftPM refuses that flag with a warning on every build (GTK, Pango and GIO
/// all carry it), and glibc needs nothing for threads.
func pkgConfigCFlags(_ packages: String) -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["pkg-config", "--cflags"] + packages.split(separator: " ").map(String.init)
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return [] }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
        .filter { $0 != "-pthread" }.flatMap { ["-Xcc", $0] }
}
let pangoCairoFlags: [SwiftSetting] = [.unsafeFlags(pkgConfigCFlags("pangocairo"))]
let gtkFlags: [SwiftSetting] = [.unsafeFlags(pkgConfigCFlags("gtk+-3.0 gtk-layer-shell-0"))]
/// The language every target is written in, besides Swift 6 (as in grpc-swift-2 and hummingbird):
/// existentials spelled `any`, imports internal unless a public API needs them, and members seen
/// only through a module the file imports itself. Applied to every target at the end.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Island",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "IslandJSON", targets: ["IslandJSON"]),
        .library(name: "VarlinkCore", targets: ["VarlinkCore"]),
        .library(name: "VarlinkNIO", targets: ["VarlinkNIO"]),
        .library(name: "VarlinkInProcess", targets: ["VarlinkInProcess"]),
        .library(name: "Systemd", targets: ["Systemd"]),
        .library(name: "MQTT", targets: ["MQTT"]),
        .library(name: "FreeDesktop", targets: ["FreeDesktop"]),
        .executable(name: "islandd", targets: ["islandd"]),
        .executable(name: "varlink-certification", targets: ["varlink-certification"]),
        .executable(name: "island-presenter", targets: ["island-presenter"]),
        .library(name: "IslandKit", targets: ["IslandKit"]),
        .executable(name: "island", targets: ["island"]),
        .executable(name: "island-overlay", targets: ["island-overlay"]),
        .library(name: "SDBus", targets: ["SDBus"]),
        .executable(name: "island-bridge", targets: ["island-bridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
    ],
    targets: [
        // The wire contract as data: every .varlink file is embedded byte for byte, so
        // GetInterfaceDescription serves exactly what is in the repository.
        .target(
            name: "IslandProtocol",
            path: "Protocol",
            exclude: ["PROTOCOL.md"],
            resources: [
                .embedInCode("org.island.Connection.varlink"),
                .embedInCode("org.island.varlink"),
                .embedInCode("org.island.Producer.varlink"),
                .embedInCode("org.island.Extension.varlink"),
                .embedInCode("org.island.Presenter.varlink"),
                .embedInCode("org.island.Admin.varlink"),
            ]
        ),
        // Pure rules: activities, budgets, arbitration, layouts, configuration. No I/O; time
        // is an argument, so every rule is tested without sleeping.
        .target(
            name: "IslandCore",
            dependencies: [
                "CCrypto",
                "FreeDesktop",
                "IslandJSON",
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .target(
            name: "IslandStore",
            dependencies: [
                "IslandJSON",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // sched_setattr(2) for the daemon's event loop (see IslandDaemon's EventLoopScheduling).
        .systemLibrary(name: "CLinuxScheduling"),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(
            name: "Systemd",
            dependencies: [
                "CSystemd",
                "FreeDesktop",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MQTT through libmosquitto (Debian's libmosquitto-dev; the package mirror has no MQTT
        // library): the client push notifications reach the daemon with (DESIGN.md §12).
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(name: "MQTT", dependencies: ["CMosquitto", "FreeDesktop"]),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "ProcessTesting"]),
        // The desktop's platform, knowing nothing of Island: XDG base directories, key files
        // and desktop entries, icon names and icon-theme search, reconnection backoff. Pure.
        .target(name: "FreeDesktop", path: "Libraries/FreeDesktop"),
        .testTarget(name: "FreeDesktopTests", dependencies: ["FreeDesktop"]),
        .target(
            name: "IslandJSON",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]
        ),
        // Varlink, knowing nothing of Island: the protocol itself — IDL, messages, the service
        // and its dispatch, a connection's ordering of calls, the client — with no I/O …
        .target(
            name: "VarlinkCore",
            dependencies: [
                "IslandJSON",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            resources: [.embedInCode("Resources/org.varlink.service.varlink")]
        ),
        // … carried over Unix sockets with SwiftNIO: the server, its connections, framing …
        .target(
            name: "VarlinkNIO",
            dependencies: [
                "VarlinkCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // … or in memory, for tests where a socket adds nothing.
        .target(
            name: "VarlinkInProcess",
            dependencies: ["VarlinkCore", .product(name: "DequeModule", package: "swift-collections")]
        ),
        // Where the daemon and its clients meet: the socket's locations, decided in one place,
        // and the check that no other user controls the directory it is served in.
        .target(name: "IslandPaths", dependencies: ["FreeDesktop"]),
        .testTarget(name: "IslandPathsTests", dependencies: ["IslandPaths"]),
        // Wiring: roles, identity, the engine, subscriptions, the process. I/O lives here.
        .target(
            name: "IslandDaemon",
            dependencies: [
                "IslandCore", "IslandStore", "IslandJSON", "IslandPaths", "IslandProtocol", "VarlinkCore", "VarlinkNIO", "Systemd", "MQTT",
                "FreeDesktop",
                "CLinuxScheduling",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "islandd",
            dependencies: [
                "IslandDaemon", "Systemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "varlink-certification",
            dependencies: [
                "VarlinkCore", "VarlinkNIO", "IslandJSON",
                "Systemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            resources: [.embedInCode("org.varlink.certification.varlink")]
        ),
        // The producer side: an ActivityKit-shaped client library, and the `island` CLI on it.
        .target(
            name: "IslandKit",
            dependencies: [
                "VarlinkCore", "VarlinkNIO", "IslandJSON", "IslandPaths", "FreeDesktop",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "island",
            dependencies: [
                "IslandKit", "IslandCore", "IslandJSON", "VarlinkCore", "VarlinkNIO", "IslandPresenter", "MQTT",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .testTarget(
            name: "IslandKitTests",
            dependencies: [
                "IslandKit", "IslandJSON", "VarlinkCore", "VarlinkNIO", "ProcessTesting", "MQTT",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // Starting real binaries from tests, scoped: swift-subprocess, without inherited descriptors.
        .target(
            name: "ProcessTesting",
            dependencies: [
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/ProcessTesting"
        ),
        // The presenter: model, bar formats, SVG and terminal drawing, all testable; the
        // executable is a thin main.
        .target(
            name: "IslandPresenter",
            dependencies: [
                "VarlinkCore", "VarlinkNIO", "IslandCore", "IslandJSON", "FreeDesktop",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "island-presenter",
            dependencies: ["IslandPresenter", "IslandPaths", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(
            name: "IslandPresenterTests",
            dependencies: [
                "IslandPresenter", "IslandCore", "IslandJSON", "SinkRules", "FreeDesktop",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        // What no sink may let producer text do: one statement for the tests and fuzz-presenter.
        .target(
            name: "SinkRules",
            dependencies: [
                "IslandPresenter", "IslandJSON",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Tests/SinkRules"
        ),
        // The graphical island (DESIGN.md §10): geometry, motion and cairo/Pango painting in a
        // library that needs no display; GTK only in the executable, so nothing else links it.
        // Their flags come from pkgConfigCFlags (see the top), not `pkgConfig:`.
        .systemLibrary(name: "CPangoCairo", providers: [.apt(["libpango1.0-dev", "libcairo2-dev"])]),
        .systemLibrary(name: "CGtk", providers: [.apt(["libgtk-3-dev", "libgtk-layer-shell-dev"])]),
        .target(
            name: "IslandOverlay",
            dependencies: [
                "IslandPresenter", "IslandCore", "IslandJSON", "CPangoCairo", "FreeDesktop",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            swiftSettings: pangoCairoFlags
        ),
        .executableTarget(
            name: "island-overlay",
            dependencies: ["IslandOverlay", "IslandPresenter", "IslandPaths", "CGtk"],
            swiftSettings: gtkFlags
        ),
        .testTarget(
            name: "IslandOverlayTests",
            dependencies: [
                "IslandOverlay", "IslandPresenter", "IslandCore", "IslandJSON",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            exclude: ["Goldens"],
            swiftSettings: pangoCairoFlags
        ),
        // D-Bus through sd-bus (libsystemd): a bus on an sd-event loop of its own thread that
        // is also a Swift executor; matches, calls, names, served objects, monitors.
        .target(name: "SDBus", dependencies: ["CSystemd"]),
        .testTarget(name: "SDBusTests", dependencies: ["SDBus", "ProcessTesting"]),
        // island-bridge (DESIGN.md §11): what MPRIS players, progress notifications and KDE jobs
        // make of activities, pure and tested without a bus; the executable is the bus shell.
        .target(
            name: "IslandBridge",
            dependencies: ["SDBus", "IslandCore", "IslandJSON", "FreeDesktop", .product(name: "OrderedCollections", package: "swift-collections")]),
        .testTarget(
            name: "IslandBridgeTests",
            dependencies: ["IslandBridge", "SDBus", "IslandJSON", "IslandCore", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        .executableTarget(
            name: "island-bridge",
            dependencies: [
                "IslandBridge", "SDBus", "IslandKit", "IslandCore", "IslandJSON", "Systemd", "FreeDesktop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "VarlinkTests",
            dependencies: [
                "VarlinkCore", "VarlinkNIO", "VarlinkInProcess",
                "IslandJSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .testTarget(
            name: "IslandJSONTests",
            dependencies: ["IslandJSON", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        .testTarget(
            name: "IslandCoreTests",
            dependencies: [
                "IslandCore", "IslandJSON",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .testTarget(
            name: "IslandStoreTests",
            dependencies: [
                "IslandStore", "IslandJSON",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .testTarget(
            name: "IslandDaemonTests",
            dependencies: [
                "IslandDaemon", "IslandCore", "IslandJSON", "IslandProtocol", "IslandStore", "Systemd",
                "VarlinkCore", "VarlinkNIO",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "SystemdTests",
            dependencies: ["Systemd", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["varlink-certification", "ProcessTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (Fuzz/, issue #6), only when scripts/fuzz.sh builds with ISLAND_FUZZ=1 in
// its own scratch path, so the normal build and the tests never see them.
if Context.environment["ISLAND_FUZZ"] == "1" {
    let fuzzFlags: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]
    package.targets += [
        .target(name: "FuzzSupport", path: "Fuzz/Sources/FuzzSupport"),
        .executableTarget(
            name: "FuzzVarlinkMessage",
            dependencies: [
                "FuzzSupport", "VarlinkCore", "VarlinkNIO", "IslandJSON", "IslandProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Fuzz/Sources/FuzzVarlinkMessage",
            swiftSettings: fuzzFlags
        ),
        .executableTarget(
            name: "FuzzLayout",
            dependencies: [
                "FuzzSupport", "IslandCore", "IslandJSON",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Fuzz/Sources/FuzzLayout",
            swiftSettings: fuzzFlags
        ),
        .executableTarget(
            name: "FuzzPresenter",
            dependencies: [
                "FuzzSupport", "IslandPresenter", "IslandCore", "IslandJSON", "SinkRules",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Fuzz/Sources/FuzzPresenter",
            swiftSettings: fuzzFlags
        ),
    ]
    package.products += [
        .executable(name: "fuzz-varlink-message", targets: ["FuzzVarlinkMessage"]),
        .executable(name: "fuzz-layout", targets: ["FuzzLayout"]),
        .executable(name: "fuzz-presenter", targets: ["FuzzPresenter"]),
    ]
}

for target in package.targets where [.regular, .executable, .test].contains(target.type) {
    target.swiftSettings = (target.swiftSettings ?? []) + upcomingFeatures
}
