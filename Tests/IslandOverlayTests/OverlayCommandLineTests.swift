import Foundation
import Testing
@testable import IslandOverlay

/// What island-overlay's options decide, and that its help tells overlay.conf and overlay.css
/// as they are read.
@Suite struct OverlayCommandLineTests {
    static func problem(
        size: String? = nil, maxHeight: Int? = nil, hosted: Bool = false, scale: Int = 1,
        renderGallery: String? = nil, drawSVG: String? = nil
    ) -> String? {
        OverlayCommandLine.problem(
            size: size, maxHeight: maxHeight, hosted: hosted, scale: scale, renderGallery: renderGallery,
            drawSVG: drawSVG)
    }

    @Test func optionsThatGoTogether() {
        #expect(Self.problem() == nil)
        #expect(Self.problem(size: "large", maxHeight: 400, hosted: true) == nil)
        #expect(Self.problem(size: "1.5", scale: 4, renderGallery: "/tmp/g") == nil)
    }

    @Test func optionsThatDoNot() {
        #expect(Self.problem(size: "huge") == "--size must be small, medium, large or a factor from 0.75 to 2")
        #expect(Self.problem(size: "3") != nil)
        #expect(Self.problem(maxHeight: 400) == "--max-height applies to --hosted only")
        #expect(Self.problem(maxHeight: 99, hosted: true) == "--max-height must be 100-20000 pixels")
        #expect(Self.problem(maxHeight: 20_001, hosted: true) != nil)
        #expect(Self.problem(scale: 0) == "--scale must be 1-4")
        #expect(Self.problem(scale: 5) != nil)
        #expect(Self.problem(renderGallery: "/tmp/g", drawSVG: "-") == "--render-gallery and --draw-svg cannot be combined")
    }

    /// Reserve=yes applies only where the overlay places itself with layer-shell.
    @Test func reserveAppliesOnlyToALayerSurface() {
        var config = OverlayConfig()
        config.reserve = true
        var onWayland = config
        #expect(OverlayCommandLine.placeReserve(&onWayland, hosted: false, wayland: true) == nil)
        #expect(onWayland.reserve)
        var onX11 = config
        #expect(OverlayCommandLine.placeReserve(&onX11, hosted: false, wayland: false)?.contains("on X11") == true)
        #expect(!onX11.reserve)
        var hosted = config
        #expect(OverlayCommandLine.placeReserve(&hosted, hosted: true, wayland: true)?.contains("hosted") == true)
        #expect(!hosted.reserve)
        var off = OverlayConfig()
        #expect(OverlayCommandLine.placeReserve(&off, hosted: true, wayland: false) == nil)
    }

    /// --toggle-list signals only an island-overlay: a stale pid file's number may now be
    /// another program's process, which SIGUSR1 would end.
    @Test func toggleListSignalsOnlyAnOverlay() {
        let overlay: (Int32) -> String? = { $0 == 4242 ? "island-overlay\n" : "bash\n" }
        #expect(OverlayCommandLine.runningOverlay(pidFile: "4242\n", comm: overlay) == .success(4242))
        #expect(OverlayCommandLine.runningOverlay(pidFile: "77\n", comm: overlay) == .failure(.notAnOverlay(77)))
        #expect(OverlayCommandLine.runningOverlay(pidFile: "4242", comm: { _ in nil }) == .failure(.notAnOverlay(4242)))
        #expect(OverlayCommandLine.runningOverlay(pidFile: nil, comm: overlay) == .failure(.noPidFile))
        for text in ["", "0", "-1", "abc", "4242 4243", "99999999999"] {
            #expect(OverlayCommandLine.runningOverlay(pidFile: text, comm: overlay) == .failure(.noPidFile), "\(text)")
        }
    }

    /// Every overlay.conf key the help shows is one the configuration reads, and every key it
    /// reads is shown.
    @Test func theHelpTellsEveryKeyOfOverlayConf() throws {
        let documented = OverlayCommandLine.discussion.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.drop { $0 == " " }
            guard line.hasPrefix("  "), let equals = trimmed.firstIndex(of: "="),
                trimmed[..<equals].allSatisfy(\.isLetter), trimmed.first?.isUppercase == true
            else { return nil }
            return String(trimmed[..<equals])
        }
        let read = ["Output", "Fullscreen", "Layer", "MarginTop", "Reserve", "Opener", "CollapseAfter", "Motion", "Size"]
        #expect(Set(documented) == Set(read))
        for key in documented {
            let config = OverlayConfig(text: "[Overlay]\n\(key)=\n")
            #expect(!config.warnings.contains { $0.contains("unknown key") }, "\(key)")
        }
    }

    @Test func theHelpNamesEveryColourOfOverlayCSS() {
        for (name, _) in OverlayStyle.colorNames {
            #expect(OverlayCommandLine.discussion.contains(name), "\(name)")
        }
    }
}
