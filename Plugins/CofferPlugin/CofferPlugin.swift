import PackagePlugin

/// Generates Coffer's entity code for the target it is applied to.
///
/// ```swift
/// .target(name: "App", dependencies: [.product(name: "Coffer", package: "coffer")],
///         plugins: [.plugin(name: "CofferPlugin", package: "coffer")])
/// ```
///
/// One build command reads every Swift file of the target and writes one generated file;
/// SwiftPM reruns it whenever a source file is edited, added or removed.
@main
struct CofferPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let inputs = target.sourceFiles(withSuffix: "swift").map(\.url)
        let output = context.pluginWorkDirectoryURL.appending(path: "\(target.name)+Coffer.swift")
        return [
            .buildCommand(
                displayName: "Generating Coffer entity code for \(target.name)",
                executable: try context.tool(named: "CofferGenerator").url,
                arguments: [output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}
