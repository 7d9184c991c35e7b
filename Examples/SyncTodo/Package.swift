// swift-tools-version:6.0
// Two replicas of a to-do list through PostgreSQL, the walkthrough of README's sync section
// and of CofferSync's Getting Started with Sync:
//   Scripts/local-postgres.sh start /tmp/coffer-pg 55432
//   swift run --package-path Examples/SyncTodo sync-todo /tmp/laptop.coffer --port 55432 add "Buy milk"
//   swift run --package-path Examples/SyncTodo sync-todo /tmp/phone.coffer --port 55432 list
//   swift run --package-path Examples/SyncTodo sync-todo --port 55432 check   (both replicas, checked)
import PackageDescription

let package = Package(
    name: "SyncTodo",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "coffer", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .executableTarget(
            name: "sync-todo",
            dependencies: [
                .product(name: "Coffer", package: "coffer"),
                .product(name: "CofferSync", package: "coffer"),
            ],
            path: "Sources/SyncTodo",
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
        // The code of CofferSync's articles (DocumentationExampleTests checks that every block
        // is a copy of lines here): recording changes runs; what needs a server is compiled.
        .executableTarget(
            name: "sync-articles",
            dependencies: [
                .product(name: "Coffer", package: "coffer"),
                .product(name: "CofferSync", package: "coffer"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/SyncArticles",
            plugins: [.plugin(name: "CofferPlugin", package: "coffer")]
        ),
    ]
)
