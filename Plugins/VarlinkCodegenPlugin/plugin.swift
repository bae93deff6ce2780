import Foundation
import PackagePlugin

/// Writes the Swift of each `.varlinkmap` of a target (see varlink-codegen) into the plugin's
/// work directory at build time, over the `.varlink` files of the target and of the targets it
/// depends on: the interfaces stay data, read where they are, and the code made of them is
/// never committed.
@main
struct VarlinkCodegenPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let target = target as? any SourceModuleTarget else { return [] }
        let maps = target.sourceFiles(withSuffix: ".varlinkmap").map(\.url)
        guard !maps.isEmpty else { return [] }
        let interfaces = ([target] + target.recursiveTargetDependencies.compactMap { $0 as? any SourceModuleTarget })
            .flatMap { $0.sourceFiles(withSuffix: ".varlink").map(\.url) }
        let tool = try context.tool(named: "varlink-codegen").url
        return maps.map { map in
            let output = context.pluginWorkDirectoryURL.appending(path: map.deletingPathExtension().lastPathComponent + ".swift")
            return .buildCommand(
                displayName: "Generating \(output.lastPathComponent) from \(map.lastPathComponent)",
                executable: tool,
                arguments: [map.path, output.path] + interfaces.map(\.path),
                inputFiles: [map] + interfaces,
                outputFiles: [output]
            )
        }
    }
}
