import FreeDesktop
import Testing

@Suite struct BaseDirectoriesTests {
    @Test func unsetVariablesMeanTheSpecDefaults() {
        let base = BaseDirectories(environment: ["HOME": "/home/ann"])
        #expect(base.dataHome == "/home/ann/.local/share")
        #expect(base.configHome == "/home/ann/.config")
        #expect(base.stateHome == "/home/ann/.local/state")
        #expect(base.cacheHome == "/home/ann/.cache")
        #expect(base.dataDirectories == ["/usr/local/share", "/usr/share"])
        #expect(base.configDirectories == ["/etc/xdg"])
        #expect(base.runtimeDirectory == nil)
    }

    @Test func absoluteValuesAreUsed() {
        let base = BaseDirectories(environment: [
            "HOME": "/home/ann", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s",
            "XDG_CACHE_HOME": "/k", "XDG_DATA_DIRS": "/one:/two", "XDG_CONFIG_DIRS": "/etc/a:/etc/b", "XDG_RUNTIME_DIR": "/run/user/7",
        ])
        #expect([base.dataHome, base.configHome, base.stateHome, base.cacheHome] == ["/d", "/c", "/s", "/k"])
        #expect(base.dataSearchPath == ["/d", "/one", "/two"], "XDG_DATA_HOME first, then XDG_DATA_DIRS in its order")
        #expect(base.configSearchPath == ["/c", "/etc/a", "/etc/b"])
        #expect(base.runtimeDirectory == "/run/user/7")
    }

    /// "If an implementation encounters a relative path in any of these variables it should
    /// consider the path invalid and ignore it."
    @Test func relativePathsAreIgnored() {
        let base = BaseDirectories(environment: [
            "HOME": "/home/ann", "XDG_DATA_HOME": "data", "XDG_CONFIG_HOME": "./config", "XDG_STATE_HOME": "~/state",
            "XDG_CACHE_HOME": "", "XDG_DATA_DIRS": "relative:/kept::also/relative", "XDG_CONFIG_DIRS": "etc",
            "XDG_RUNTIME_DIR": "run",
        ])
        #expect(base.dataHome == "/home/ann/.local/share")
        #expect(base.configHome == "/home/ann/.config")
        #expect(base.stateHome == "/home/ann/.local/state")
        #expect(base.cacheHome == "/home/ann/.cache")
        #expect(base.dataDirectories == ["/kept"])
        #expect(base.configDirectories == ["/etc/xdg"], "a list with no absolute entry is the default list")
        #expect(base.runtimeDirectory == nil)
    }

    @Test func aMissingOrRelativeHomeIsEmpty() {
        #expect(BaseDirectories(environment: [:]).configHome == "/.config")
        #expect(BaseDirectories(environment: ["HOME": "home/ann"]).dataHome == "/.local/share")
        #expect(BaseDirectories(environment: ["HOME": "/"]).stateHome == "/.local/state")
        #expect(BaseDirectories(environment: ["HOME": "/home/ann/"]).configHome == "/home/ann/.config")
    }
}
