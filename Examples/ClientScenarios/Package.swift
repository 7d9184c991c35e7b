// swift-tools-version:6.0
// Clients of Coffer written as a new user would, each checking itself (exit status 1 when
// an expectation fails):
//   swift run --package-path Examples/ClientScenarios LayerMessages   (query controller)
//   swift run --package-path Examples/ClientScenarios TextSearch      (full-text search)
//   swift run --package-path Examples/ClientScenarios CloudantQueries (selector queries)
//   swift run --package-path Examples/ClientScenarios RichTypes       (embedded, metadata, converters, arrays)
//   swift run --package-path Examples/ClientScenarios LiveNotes       (observable live objects, another process)
import PackageDescription

let package = Package(
    name: "ClientScenarios",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "coffer", path: "../..")],
    targets: [
        .executableTarget(
            name: "LayerMessages",
            dependencies: [.product(name: "Coffer", package: "coffer")],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
        .executableTarget(
            name: "CloudantQueries",
            dependencies: [.product(name: "Coffer", package: "coffer")],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
        .executableTarget(
            name: "RichTypes",
            dependencies: [.product(name: "Coffer", package: "coffer")],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
        .executableTarget(
            name: "LiveNotes",
            dependencies: [.product(name: "Coffer", package: "coffer")],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
        .executableTarget(
            name: "TextSearch",
            dependencies: [.product(name: "Coffer", package: "coffer")],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
    ]
)
