// swift-tools-version:6.0
import PackageDescription

// Benchmarks live in their own package so that the main package never depends on GRDB.
let package = Package(
    name: "coffer-benchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "coffer-bench", targets: ["CofferBench"]),
    ],
    dependencies: [
        .package(name: "coffer", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
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
    ]
)
