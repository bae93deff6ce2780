// libFuzzer target `fuzz-artwork`: what the overlay does with the bytes of a file a producer
// names as a picture (a layout's `image` view, the bridge's album art).
// Built only by scripts/fuzz.sh (ISLAND_FUZZ=1); see Fuzz/README.md.
//
// bytes → ArtworkLoader.decode: the format sniffed from the signature (PNG or JPEG, nothing
//         else), the size read from the header and refused over 4096 pixels a side before any
//         pixel is decoded, cairo's PNG reader or gdk-pixbuf's JPEG loader, the middle square
//         scaled down. Invariants: only a PNG or JPEG signature decodes, and a decoded square
//         is 1…ArtworkLoader.decodedSide pixels a side.
//
// Each input runs on a thread with a small stack (see onSmallStack). Refusals are expected; a
// trap, a sanitizer report or a broken invariant (fatalError) is a bug.

import FuzzSupport
import IslandOverlay

private func fuzzOne(_ bytes: [UInt8]) {
    guard case .success(let artwork) = ArtworkLoader.decode(bytes) else { return }
    guard ArtworkFormat(sniffing: bytes) != nil else { fatalError("decoded bytes with neither PNG's nor JPEG's signature") }
    guard (1...ArtworkLoader.decodedSide).contains(artwork.side) else { fatalError("a decoded square of \(artwork.side) pixels") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    onSmallStack { fuzzOne(bytes) }
    return 0
}
