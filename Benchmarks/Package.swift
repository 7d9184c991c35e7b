// swift-tools-version:6.0
import PackageDescription

// Benchmarks live in their own package so that the main package never depends on GRDB.
let package = Package(
    name: "coffer-benchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "coffer-bench", targets: ["CofferBench"]),
        .executable(name: "coffer-sync-bench", targets: ["CofferSyncBench"]),
    ],
    dependencies: [
        .package(name: "coffer", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        // For the sync benchmark's floors (plain SQL on the same server).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // The same workload written directly against LMDB in C: the physical floor.
        .target(name: "RawLMDB", linkerSettings: [.linkedLibrary("lmdb")]),
        .executableTarget(
            name: "CofferBench",
            dependencies: [
                .product(name: "Coffer", package: "coffer"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "RawLMDB",
            ],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
        // Two replicas through a PostgreSQL server (Benchmarks/sync.sh starts a private one).
        .executableTarget(
            name: "CofferSyncBench",
            dependencies: [
                .product(name: "Coffer", package: "coffer"),
                .product(name: "CofferSync", package: "coffer"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
    ]
)
