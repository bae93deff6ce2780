import Foundation
import PackagePlugin

/// Writes the Swift of each `.varlinkmap` of a target (see varlink-codegen) into the plugin's
/// work directory at build time, over the `.varlink` files of the target, of the targets it
/// depends on and of the package's other targets: the interfaces stay data, read where they are,
/// and the code made of them is never committed. A map may name an interface of a target it does
/// not depend on: names are plain strings, which need nothing of that target (IslandCore names
/// the errors of org.island, which IslandProtocol holds, without depending on it).
@main
struct VarlinkCodegenPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let target = target as? any SourceModuleTarget else { return [] }
        let maps = target.sourceFiles(withSuffix: ".varlinkmap").map(\.url)
        guard !maps.isEmpty else { return [] }
        let targets = [target] + (target.recursiveTargetDependencies + context.package.targets).compactMap { $0 as? any SourceModuleTarget }
        var seen = Set<URL>()
        let interfaces = targets.flatMap { $0.sourceFiles(withSuffix: ".varlink").map(\.url) }.filter { seen.insert($0).inserted }
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
