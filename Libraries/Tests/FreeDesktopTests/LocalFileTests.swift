import FreeDesktop
import Testing

@Suite("LocalFile: a local file by an absolute path, spelt so that it means nothing else")
struct LocalFileTests {
    @Test("file: URLs and absolute paths name the same file; one URL spelling for one path")
    func pathsAndURLs() {
        #expect(LocalFile.path(from: "file:///home/u/Music/caf%C3%A9%20(1).jpg") == "/home/u/Music/café (1).jpg")
        #expect(LocalFile.path(from: "file://LOCALHOST/tmp/a.png") == "/tmp/a.png")
        #expect(LocalFile.path(from: "/home/u/Music/café (1).jpg") == "/home/u/Music/café (1).jpg")
        #expect(LocalFile.url(path: "/home/u/Music/café (1).jpg") == "file:///home/u/Music/caf%C3%A9%20%281%29.jpg")
        #expect(LocalFile.path(fromURL: LocalFile.url(path: "/a/%41 b")) == "/a/%41 b", "a percent sign in a name is a name")
    }

    @Test(
        "refused: relative, climbing, empty segments, controls, another host, other schemes, over the bound",
        arguments: [
            "a.png", "./a.png", "/tmp/../a.png", "/tmp/./a.png", "/tmp//a.png", "/tmp/", "/", "/tmp/a\u{0}b", "/tmp/a\u{9B}b",
            "/tmp/a\u{7F}b", "file://host/a.png", "file:/a.png", "https://a.example/a.png", "file:///a%2F..%2Fb",
            "/" + String(repeating: "a", count: LocalFile.maximumBytes), "",
        ])
    func refused(_ reference: String) {
        #expect(LocalFile.path(from: reference) == nil)
    }

    @Test("a percent sign in a plain path is not decoded: the path is the bytes as written")
    func plainPathsAreNotDecoded() {
        #expect(LocalFile.path(from: "/tmp/%2e%2e/a") == "/tmp/%2e%2e/a")
        #expect(LocalFile.path(fromURL: "file:///tmp/%2e%2e/a") == nil)
    }
}
