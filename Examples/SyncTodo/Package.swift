// swift-tools-version:6.0
// Two replicas of a to-do list through PostgreSQL, the walkthrough of README's Sync section:
//   Scripts/local-postgres.sh start /tmp/coffer-pg 55432
//   swift run --package-path Examples/SyncTodo sync-todo /tmp/laptop.coffer --port 55432 add "Buy milk"
//   swift run --package-path Examples/SyncTodo sync-todo /tmp/phone.coffer --port 55432 list
//   swift run --package-path Examples/SyncTodo sync-todo --port 55432 check   (both replicas, checked)
import PackageDescription

let package = Package(
    name: "SyncTodo",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "coffer", path: "../..")],
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
    ]
)
