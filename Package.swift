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
let pangoCairoFlags: [SwiftSetting] = [.unsafeFlags(pkgConfigCFlags("pangocairo gdk-pixbuf-2.0"))]
let gtkFlags: [SwiftSetting] = [.unsafeFlags(pkgConfigCFlags("gtk+-3.0 gtk-layer-shell-0"))]
/// The language every target is written in, besides Swift 6 (as in grpc-swift-2 and hummingbird):
/// existentials spelled `any`, imports internal unless a public API needs them, and members seen
/// only through a module the file imports itself. Applied to every target at the end.
let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Libraries/: the foundation, with nothing of Island in it: JSON, Varlink (the protocol, its
/// SwiftNIO transport, an in-memory one, the certification peer), systemd, D-Bus, MQTT, and the C
/// modules they and the product link. They depend on each other and on outside packages only;
/// the build refuses an import a target does not declare (`--explicit-target-dependency-import-check`
/// in scripts/test.sh), so none of them can reach a product module.
let libraries: [Target] = [
    // The self-pipe that wakes a thread waiting in poll or an event loop: the sd-bus loop, the
    // MQTT sessions' threads, the daemon's manifest watcher; and signals relayed through one,
    // caught from the moment they are watched (island's and the presenter's).
    .target(name: "SelfWake"),
    .testTarget(name: "SelfWakeTests", dependencies: ["SelfWake"]),
    // What a child started with posix_spawn keeps: the descriptors it is given, no others
    // (the MQTT link process, island's commands, the overlay's URL opener).
    .target(name: "SpawnDescriptors"),
    .testTarget(name: "SpawnDescriptorsTests", dependencies: ["SpawnDescriptors", "ProcessTesting"]),
    // Files of bounded size read from folders other programs can write: a FIFO, a device or
    // an endless file there is refused, never waited on or held (config, entries, icons, records).
    .target(name: "SmallFiles"),
    .testTarget(name: "SmallFilesTests", dependencies: ["SmallFiles"]),
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
            "SmallFiles",
            .product(name: "Logging", package: "swift-log"),
        ]
    ),
    // MQTT through libmosquitto (Debian's libmosquitto-dev; the package mirror has no MQTT
    // library): the client push notifications reach the daemon with (docs/design.md §12).
    .systemLibrary(
        name: "CMosquitto",
        pkgConfig: "libmosquitto",
        providers: [.apt(["libmosquitto-dev"])]
    ),
    .target(name: "MQTT", dependencies: ["CMosquitto", "FreeDesktop", "SelfWake", "SpawnDescriptors"]),
    // SQLite (Debian's libsqlite3-dev): the daemon's store, through a small typed layer in
    // IslandStore.
    .systemLibrary(
        name: "CSQLite",
        pkgConfig: "sqlite3",
        providers: [.apt(["libsqlite3-dev"])]
    ),
    .systemLibrary(
        name: "CCrypto",
        pkgConfig: "libcrypto",
        providers: [.apt(["libssl-dev"])]
    ),
    .testTarget(name: "MQTTTests", dependencies: ["MQTT", "ProcessTesting"]),
    // The desktop's platform: XDG base directories, key files and desktop entries, icon names
    // and icon-theme search, reconnection backoff. Pure.
    .target(name: "FreeDesktop"),
    .testTarget(name: "FreeDesktopTests", dependencies: ["FreeDesktop"]),
    .target(
        name: "OrderedJSON",
        dependencies: [.product(name: "OrderedCollections", package: "swift-collections")]
    ),
    // Varlink, knowing nothing of Island: the protocol itself — IDL, messages, the service
    // and its dispatch, a connection's ordering of calls, the client — with no I/O …
    // The interface definition language alone (types, methods, errors; the parser): all the
    // build-time code generator needs, so the host build of its tool stays small.
    .target(name: "VarlinkIDL"),
    .target(
        name: "VarlinkCore",
        dependencies: [
            "VarlinkIDL", "OrderedJSON",
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
    // Swift from Varlink interfaces at build time: a target's `.varlinkmap` names the methods
    // whose parameters it decodes (and the interfaces whose member names it wants as
    // constants), and the plugin (Plugins/VarlinkCodegenPlugin) writes their structs and
    // decoders over the `.varlink` files it and its dependencies hold.
    .target(name: "VarlinkCodegen", dependencies: ["VarlinkIDL"]),
    .executableTarget(name: "varlink-codegen", dependencies: ["VarlinkCodegen", "VarlinkIDL"]),
    .testTarget(name: "VarlinkCodegenTests", dependencies: ["VarlinkCodegen", "VarlinkIDL", "VarlinkCore"], exclude: ["Goldens"]),
    .executableTarget(
        name: "varlink-certification",
        dependencies: [
            "VarlinkCore", "VarlinkNIO", "OrderedJSON",
            "Systemd",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ],
        resources: [.embedInCode("org.varlink.certification.varlink")]
    ),
    // cairo/Pango (with gdk-pixbuf, for JPEG pictures) and GTK with gtk-layer-shell, for the
    // overlay. Their flags come from pkgConfigCFlags (see the top), not `pkgConfig:`.
    .systemLibrary(name: "CPangoCairo", providers: [.apt(["libpango1.0-dev", "libcairo2-dev", "libgdk-pixbuf-2.0-dev"])]),
    .systemLibrary(name: "CGtk", providers: [.apt(["libgtk-3-dev", "libgtk-layer-shell-dev"])]),
    // The Wayland protocols the overlay binds beside GTK on GDK's own connection:
    // wlr-foreign-toplevel-management (fullscreen windows and the focused output) and
    // xdg-output (connector names). wayland-scanner's output from the XML vendored in
    // protocols/ (scripts/generate-wayland-protocols.sh), over libwayland-client.
    .systemLibrary(name: "CWaylandClient", pkgConfig: "wayland-client", providers: [.apt(["libwayland-dev"])]),
    .target(name: "CWaylandProtocols", dependencies: ["CWaylandClient"], exclude: ["protocols"]),
    // D-Bus through sd-bus (libsystemd): a bus on an sd-event loop of its own thread that
    // is also a Swift executor; matches, calls, names, served objects, monitors.
    .target(name: "SDBus", dependencies: ["CSystemd", "SelfWake"]),
    .testTarget(name: "SDBusTests", dependencies: ["SDBus", "ProcessTesting"]),
    .testTarget(
        name: "VarlinkTests",
        dependencies: [
            "VarlinkCore", "VarlinkNIO", "VarlinkInProcess",
            "OrderedJSON",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    .testTarget(
        name: "OrderedJSONTests",
        dependencies: ["OrderedJSON", .product(name: "OrderedCollections", package: "swift-collections")]
    ),
    .testTarget(
        name: "SystemdTests",
        dependencies: [
            "Systemd", "systemd-environment-probe", "ProcessTesting", .product(name: "Logging", package: "swift-log"),
        ]
    ),
    // What SystemdTests start for the cases that need systemd's variables in the environment:
    // a process of their own, since a test process cannot set its own environment safely.
    .executableTarget(
        name: "systemd-environment-probe", dependencies: ["Systemd"], path: "Libraries/Tests/SystemdEnvironmentProbe"),
    .testTarget(
        name: "VarlinkCertificationTests",
        dependencies: ["varlink-certification", "ProcessTesting"]
    ),
    // Starting real binaries from tests, scoped: swift-subprocess, without inherited descriptors;
    // and waiting on blocking calls off the cooperative pool the tests share (`offThePool`).
    .target(
        name: "ProcessTesting",
        dependencies: [
            .product(name: "Subprocess", package: "swift-subprocess"),
            .product(name: "SystemPackage", package: "swift-system"),
        ],
        path: "Libraries/Tests/ProcessTesting"
    ),
]
for target in libraries where target.path == nil {
    target.path = "Libraries/\(target.type == .test ? "Tests" : "Sources")/\(target.name)"
}

/// Sources/ and Tests/: Island itself, on the libraries.
let island: [Target] = [
    // The wire contract as data: every .varlink file is embedded byte for byte, so
    // GetInterfaceDescription serves exactly what is in the repository.
    .target(
        name: "IslandProtocol",
        dependencies: ["OrderedJSON", .product(name: "OrderedCollections", package: "swift-collections")],
        path: "Protocol",
        exclude: ["PROTOCOL.md"],
        resources: [
            .embedInCode("org.island.Connection.varlink"),
            .embedInCode("org.island.varlink"),
            .embedInCode("org.island.Producer.varlink"),
            .embedInCode("org.island.Extension.varlink"),
            .embedInCode("org.island.Presenter.varlink"),
            .embedInCode("org.island.Admin.varlink"),
        ],
        // The member names, from WireNames.varlinkmap, and the replies' structs, from
        // Replies.varlinkmap (read with ReplyDecoding.swift).
        plugins: ["VarlinkCodegenPlugin"]
    ),
    // Pure rules: activities, budgets, arbitration, layouts, configuration. No I/O; time
    // is an argument, so every rule is tested without sleeping.
    .target(
        name: "IslandCore",
        dependencies: [
            "CCrypto",
            "FreeDesktop",
            "OrderedJSON",
            .product(name: "Mustache", package: "swift-mustache"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ],
        // The names of the errors it refuses with, from Activities/ErrorNames.varlinkmap and
        // Protocol/org.island.varlink (read as data: IslandCore does not depend on IslandProtocol).
        plugins: ["VarlinkCodegenPlugin"]
    ),
    .target(
        name: "IslandStore",
        dependencies: [
            "CSQLite", "OrderedJSON",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    // Where the daemon and its clients meet: the socket's locations, decided in one place,
    // and the check that no other user controls the directory it is served in.
    .target(name: "IslandPaths", dependencies: ["FreeDesktop"]),
    .testTarget(name: "IslandPathsTests", dependencies: ["IslandPaths"]),
    // Wiring: roles, identity, the engine, subscriptions, the process. I/O lives here.
    .target(
        name: "IslandDaemon",
        dependencies: [
            "IslandCore", "IslandStore", "OrderedJSON", "IslandPaths", "IslandProtocol", "VarlinkCore", "VarlinkNIO", "Systemd", "MQTT",
            "FreeDesktop", "SelfWake", "SmallFiles",
            "CLinuxScheduling",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ],
        // Each method's parameters, from Interfaces/MethodParameters.varlinkmap and Protocol/.
        plugins: ["VarlinkCodegenPlugin"]
    ),
    .executableTarget(
        name: "islandd",
        dependencies: [
            "IslandDaemon", "Systemd",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]
    ),
    // The producer side: an ActivityKit-shaped client library, and the `island` CLI on it.
    .target(
        name: "IslandKit",
        dependencies: [
            "VarlinkCore", "VarlinkNIO", "OrderedJSON", "IslandPaths", "IslandProtocol", "FreeDesktop",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    .executableTarget(
        name: "island",
        dependencies: [
            "IslandKit", "IslandCore", "OrderedJSON", "VarlinkCore", "VarlinkNIO", "IslandPresenter", "MQTT", "IslandProtocol", "SelfWake", "SpawnDescriptors",
            "SmallFiles", "IslandPaths",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    // The CLI's own logic (the progress ETA, how a command ended and what its activity says
    // of it), tested in the executable's module.
    .testTarget(
        name: "IslandCLITests",
        dependencies: ["island", "IslandCore", "OrderedJSON", .product(name: "OrderedCollections", package: "swift-collections")]
    ),
    .testTarget(
        name: "IslandKitTests",
        dependencies: [
            "IslandKit", "OrderedJSON", "VarlinkCore", "VarlinkNIO", "ProcessTesting", "MQTT", "IslandProtocol", "IslandPaths",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    // An app's tests: the daemon's engine in the test process, reached in memory. A product
    // of its own, so that only a test target compiles the daemon (Mustache, …).
    .target(
        name: "IslandKitTesting",
        dependencies: [
            "IslandKit", "IslandDaemon", "OrderedJSON", "VarlinkCore", "VarlinkInProcess", "IslandProtocol",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    // IslandKitTesting used as an app's tests use it: IslandKit and IslandKitTesting only.
    .testTarget(
        name: "IslandKitTestingTests",
        dependencies: [
            "IslandKit", "IslandKitTesting", "OrderedJSON",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    // The Swift example (Examples/swift, a package of its own for a newcomer to copy),
    // built here too, from the same source, so the suite runs it without a second copy of
    // the dependencies.
    .executableTarget(
        name: "island-example-swift",
        dependencies: ["IslandKit"],
        path: "Examples/swift/Sources/DeliveryExample"
    ),
    // The presenter: model, bar formats, SVG and terminal drawing, all testable; the
    // executable is a thin main.
    .target(
        name: "IslandPresenter",
        dependencies: [
            "VarlinkCore", "VarlinkNIO", "IslandCore", "OrderedJSON", "IslandProtocol", "FreeDesktop", "SelfWake", "IslandPaths",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    .executableTarget(
        name: "island-presenter",
        dependencies: ["IslandPresenter", "IslandPaths", "IslandProtocol", "SmallFiles", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    // The presenters' tests, the SVG sink among them: its documents come from the overlay's
    // painter, so they link IslandOverlay (the presenter library itself does not).
    .testTarget(
        name: "IslandPresenterTests",
        dependencies: [
            "IslandPresenter", "IslandOverlay", "IslandCore", "OrderedJSON", "SinkRules", "FreeDesktop", "IslandProtocol", "VarlinkCore",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ],
        swiftSettings: pangoCairoFlags
    ),
    // The tests' seeded generator, for bounded fuzzing that runs the same inputs every time.
    .target(name: "SeededRandom", path: "Tests/SeededRandom"),
    // What no sink may let producer text do: one statement for the tests and fuzz-presenter.
    .target(
        name: "SinkRules",
        dependencies: [
            "IslandPresenter", "OrderedJSON",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ],
        path: "Tests/SinkRules"
    ),
    // The graphical island (docs/design.md §10): geometry, motion and cairo/Pango painting in a
    // library that needs no display; GTK only in the executable, so nothing else links it.
    .target(
        name: "IslandOverlay",
        dependencies: [
            "IslandPresenter", "IslandCore", "OrderedJSON", "IslandProtocol", "CPangoCairo", "FreeDesktop", "SmallFiles",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ],
        swiftSettings: pangoCairoFlags
    ),
    .executableTarget(
        name: "island-overlay",
        dependencies: [
            "IslandOverlay", "IslandPresenter", "IslandPaths", "CGtk", "CWaylandProtocols", "FreeDesktop", "SpawnDescriptors", "SmallFiles",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ],
        swiftSettings: gtkFlags
    ),
    .testTarget(
        name: "IslandOverlayTests",
        dependencies: [
            "IslandOverlay", "IslandPresenter", "IslandCore", "OrderedJSON", "CPangoCairo", "SeededRandom",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ],
        exclude: ["Goldens"],
        swiftSettings: pangoCairoFlags
    ),
    // island-bridge (docs/design.md §11): what MPRIS players, progress notifications and KDE jobs
    // make of activities, and the source units that follow them on a bus (`SourceBus`),
    // tested against a fake one; the executable wires them to SDBus and islandd.
    .target(
        name: "IslandBridge",
        dependencies: [
            "SDBus", "IslandCore", "OrderedJSON", "FreeDesktop", "IslandProtocol", "SmallFiles",
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
        ]),
    .testTarget(
        name: "IslandBridgeTests",
        dependencies: [
            "IslandBridge", "SDBus", "OrderedJSON", "IslandCore", "SeededRandom", "FreeDesktop",
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
        ]
    ),
    .executableTarget(
        name: "island-bridge",
        dependencies: [
            "IslandBridge", "SDBus", "IslandKit", "IslandCore", "OrderedJSON", "Systemd", "SmallFiles", "FreeDesktop",
            "VarlinkCore", "VarlinkNIO", "IslandProtocol",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ]),
    .testTarget(
        name: "IslandCoreTests",
        dependencies: [
            "IslandCore", "OrderedJSON", "SeededRandom",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    .testTarget(
        name: "IslandStoreTests",
        dependencies: [
            "IslandStore", "OrderedJSON", "CSQLite",
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]
    ),
    .testTarget(
        name: "IslandDaemonTests",
        dependencies: [
            "IslandDaemon", "IslandCore", "OrderedJSON", "IslandProtocol", "IslandStore", "Systemd",
            "VarlinkCore", "VarlinkNIO", "ProcessTesting",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "OrderedCollections", package: "swift-collections"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
        ]
    ),
]

/// Build-tool plugins, in Plugins/: the parameter types and names generated from Protocol/.
let plugins: [Target] = [
    .plugin(name: "VarlinkCodegenPlugin", capability: .buildTool(), dependencies: ["varlink-codegen"])
]

let package = Package(
    name: "Island",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OrderedJSON", targets: ["OrderedJSON"]),
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
        .library(name: "IslandKitTesting", targets: ["IslandKitTesting"]),
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
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
    ],
    targets: libraries + plugins + island,
    swiftLanguageModes: [.v6]
)

// libFuzzer targets (Fuzz/), only when scripts/fuzz.sh builds with ISLAND_FUZZ=1 in
// its own scratch path, so the normal build and the tests never see them.
if Context.environment["ISLAND_FUZZ"] == "1" {
    let fuzzFlags: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]
    package.targets += [
        .target(name: "FuzzSupport", path: "Fuzz/Sources/FuzzSupport"),
        .executableTarget(
            name: "FuzzVarlinkMessage",
            dependencies: [
                "FuzzSupport", "VarlinkCore", "VarlinkNIO", "OrderedJSON", "IslandProtocol",
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
                "FuzzSupport", "IslandCore", "OrderedJSON",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Fuzz/Sources/FuzzLayout",
            swiftSettings: fuzzFlags
        ),
        .executableTarget(
            name: "FuzzArtwork",
            dependencies: ["FuzzSupport", "IslandOverlay"],
            path: "Fuzz/Sources/FuzzArtwork",
            swiftSettings: fuzzFlags + pangoCairoFlags
        ),
        .executableTarget(
            name: "FuzzPresenter",
            dependencies: [
                "FuzzSupport", "IslandPresenter", "IslandOverlay", "IslandCore", "OrderedJSON", "SinkRules",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            path: "Fuzz/Sources/FuzzPresenter",
            swiftSettings: fuzzFlags + pangoCairoFlags
        ),
    ]
    package.products += [
        .executable(name: "fuzz-varlink-message", targets: ["FuzzVarlinkMessage"]),
        .executable(name: "fuzz-layout", targets: ["FuzzLayout"]),
        .executable(name: "fuzz-presenter", targets: ["FuzzPresenter"]),
        .executable(name: "fuzz-artwork", targets: ["FuzzArtwork"]),
    ]
}

// DocC (`ISLAND_DOCS=1 swift package generate-documentation --target IslandKit`, the catalog in
// Sources/IslandKit/IslandKit.docc) only when asked for: SwiftPM compiles every command plugin
// of the graph at the start of a build, which took a fresh build 15 s longer here.
if Context.environment["ISLAND_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}

for target in package.targets where [.regular, .executable, .test].contains(target.type) {
    target.swiftSettings = (target.swiftSettings ?? []) + upcomingFeatures
}
