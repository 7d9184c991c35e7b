// swift-tools-version:6.0
// A client of Coffer written as a new user would: Layer's message-list scenarios on a
// query controller. Run with `swift run --package-path Examples/LayerMessages`.
import PackageDescription

let package = Package(
    name: "LayerMessages",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "coffer", path: "../..")],
    targets: [
        .executableTarget(
            name: "LayerMessages",
            dependencies: [.product(name: "Coffer", package: "coffer")],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
    ]
)
