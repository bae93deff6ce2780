import IslandOverlay
let args = CommandLine.arguments
if args.count > 2, args[1] == "--render-gallery" {
    let files = try OverlayGallery.render(to: args[2], layoutsDirectory: OverlayGallery.defaultLayoutsDirectory())
    print(files.joined(separator: "\n"))
}
