// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "coffer",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Coffer", targets: ["Coffer"]),
        .plugin(name: "CofferPlugin", targets: ["CofferPlugin"]),
        .executable(name: "coffer-demo", targets: ["CofferDemo"]),
        .executable(name: "coffer", targets: ["CofferTool"]),
        .library(name: "CofferSync", targets: ["CofferSync"]),
        .executable(name: "coffer-gateway", targets: ["CofferGatewayMain"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "602.0.0"..<"604.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Only CofferSync (and the coffer tool's sync commands) depend on it: apps that do not
        // sync keep today's dependencies.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // Only the gateway (coffer-gateway) depends on these.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // Hummingbird's own lifecycle: the gateway stops by a graceful shutdown.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // The system LMDB (Debian: liblmdb-dev, Homebrew: lmdb).
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // Marker macros behind @Index, @Unique, @Transient, ...: they expand to nothing;
        // the generator reads them from the source.
        .macro(
            name: "CofferMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        .target(name: "Coffer", dependencies: ["CLMDB", "CofferMacros"]),
        // The generator's logic, a library so that golden tests can call it directly.
        .target(
            name: "CofferGeneratorCore",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ]
        ),
        // The executable the build-tool plugin runs.
        .executableTarget(name: "CofferGenerator", dependencies: ["CofferGeneratorCore"]),
        .plugin(name: "CofferPlugin", capability: .buildTool(), dependencies: ["CofferGenerator"]),
        // The `coffer` command-line tool. Not named `coffer`: that module name would clash
        // with `Coffer` on case-insensitive file systems.
        .executableTarget(
            name: "CofferTool",
            dependencies: [
                "Coffer", "CofferSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // Sync with PostgreSQL: the server schema generated from the model, the SQL functions
        // that push and pull.
        .target(
            name: "CofferSync",
            dependencies: ["Coffer", .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
        // The gateway for public apps: verifies a token per request and calls CofferSync's
        // SQL functions as the app's role for the token's user. A library, so that the sync
        // tests run one suite through both transports; the executable only reads its
        // configuration and runs it.
        .target(
            name: "CofferGateway",
            dependencies: [
                "CofferSync",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "CofferGatewayMain", dependencies: ["CofferGateway"]),
        .executableTarget(name: "CofferDemo", dependencies: ["Coffer"], plugins: ["CofferPlugin"]),
        // What both test targets share: child processes to kill, the private PostgreSQL
        // cluster, a seeded generator, the synced model of every mapped type. Not a product:
        // only the tests link it.
        .target(
            name: "CofferTestSupport",
            dependencies: ["Coffer", .product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Tests/CofferTestSupport",
            plugins: ["CofferPlugin"]
        ),
        // The system SQLite (Debian: libsqlite3-dev), only for the tests that check Smart SQL
        // against SQLite on the same data.
        .systemLibrary(
            name: "CSQLite",
            path: "Tests/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // PublicAPI.txt: the reviewed list of public symbols (PublicAPITests), read from source.
        .testTarget(
            name: "CofferTests", dependencies: ["Coffer", "CofferTestSupport", "CSQLite"], exclude: ["PublicAPI.txt"],
            plugins: ["CofferPlugin"]
        ),
        // Runs against a private PostgreSQL cluster that the suite starts (PostgresCluster).
        // The gateway tests are here too: the shared-data suite runs through both transports.
        .testTarget(
            name: "CofferSyncTests",
            dependencies: ["CofferSync", "CofferGateway", "CofferTestSupport", .product(name: "JWTKit", package: "jwt-kit")],
            plugins: ["CofferPlugin"]
        ),
        .testTarget(
            name: "CofferGeneratorTests",
            dependencies: ["CofferGeneratorCore"],
            resources: [.copy("Fixtures")]
        ),
    ]
)
