import Foundation
import VarlinkCodegen
import VarlinkIDL

// varlink-codegen <map.varlinkmap> <output.swift> <interface.varlink>…
// The build-tool plugin's tool (Plugins/VarlinkCodegenPlugin): writes the Swift the map asks
// for over the interfaces. Any error names what is wrong and fails the build.

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: varlink-codegen <map.varlinkmap> <output.swift> <interface.varlink>…\n".utf8))
    exit(2)
}
let (mapPath, outputPath) = (arguments[arguments.startIndex], arguments[arguments.startIndex + 1])

func read(_ path: String) throws -> String {
    String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
}

do {
    let interfaces = try arguments.dropFirst(2).map { path in
        do {
            return try VarlinkInterface(parsing: try read(path))
        } catch let error as VarlinkIDLError {
            throw CodegenError("\(path):\(error)")
        }
    }
    let map: ParameterMap
    do {
        map = try ParameterMap(parsing: try read(mapPath))
    } catch let error as CodegenError {
        throw CodegenError("\(mapPath): \(error)")
    }
    let swift = try ParameterCodegen(map: map, interfaces: interfaces).generate()
    // Written only when it changed: SwiftPM relinks this tool at every `swift build` (its
    // plugin-tools build and the main build link the same file), so it runs every time, and
    // a rewritten file, even the same bytes, recompiles the module that holds it and every
    // module above it — in release, each of build-release.sh's five builds did.
    let output = URL(fileURLWithPath: outputPath)
    if (try? Data(contentsOf: output)) != Data(swift.utf8) {
        try Data(swift.utf8).write(to: output, options: .atomic)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
