import Foundation
import IslandCore
import OrderedJSON
@testable import IslandPresenter
import OrderedCollections
import Testing

/// A scene writes times of day in the zone it is given (the user's, unless the images must be
/// the same wherever they are drawn, as the gallery's are): nothing in it reads the process's
/// zone behind the caller's back, so no test has to change the process's environment.
@Suite struct SceneTimeZoneTests {
    static let at = 1_795_581_885.575529  // 2026-11-25 04:44:45 UTC

    @Test func timesOfDayAreWrittenInTheGivenZone() throws {
        let item = PresenterItem(id: "a", app: "x", type: "Job", attributes: [:], state: ["startedAt": .double(Self.at), "duration": 5])
        let utc = TimeZone(identifier: "UTC")!
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        #expect(item.render(now: Self.at + 60, timeZone: utc).lockScreen?.view.plainText.contains("04:44") == true)
        #expect(item.render(now: Self.at + 60, timeZone: berlin).lockScreen?.view.plainText.contains("05:44") == true)
    }

    @Test func aSceneWritesThemInItsZone() throws {
        var model = PresenterModel()
        model.apply(
            Fixtures.snapshot(
                sequence: 1, island: Fixtures.island("compact", attached: "a", lockScreen: ["a"]),
                items: [Fixtures.item(id: "a", app: "x", type: "Job", state: ["startedAt": .double(Self.at), "duration": 5], layout: nil)]))
        let tokyo = IslandScene(model: model, now: Self.at + 60, timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        let text = try #require(tokyo.lockScreen.first?.layout.lockScreen?.view.plainText)
        #expect(text.contains("13:44"), "\(text)")
    }
}
