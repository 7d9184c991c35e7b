// swift-tools-version:6.0
// The code of the README and of the DocC articles, compiled and run. Every Swift block of the
// documentation is a copy of lines here (DocumentationExampleTests checks it), and each
// program checks what its blocks do (exit status 1 when an expectation fails):
//   swift run --package-path Examples/Documentation App   (README, Getting Started)
// and Tour, Queries, Relations, Entities, FullText, Selectors, SQL, Live (one per article).
// CofferSync's articles are Examples/SyncTodo's sync-articles.
import PackageDescription

/// One program per article, each with the article's blocks and the checks of what they do.
let articles = ["Tour", "Queries", "Relations", "Entities", "FullText", "Selectors", "SQL", "Live"]

let package = Package(
    name: "Documentation",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "coffer", path: "../..")],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [.product(name: "Coffer", package: "coffer")],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
        .target(name: "DocSupport"),
    ] + articles.map { article in
        .executableTarget(
            name: article,
            dependencies: [.product(name: "Coffer", package: "coffer"), "DocSupport"],
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        )
    }
)
