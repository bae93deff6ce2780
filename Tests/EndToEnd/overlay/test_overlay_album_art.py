"""Album art on a real compositor: mpv (with mpv-mpris) plays a tagged track from a folder holding a
cover.jpg, mpv-mpris names the cover as the track's `mpris:artUrl`, the real island-bridge passes
its `file:///` URL into the Now Playing state, and the real island-overlay on headless sway reads
the file, decodes it as JPEG and draws it in the expanded island's leading corner. A second track,
in a folder with no cover, shows the player's icon there.

Set ISLAND_DESKTOP_SHOTS=DIR to keep the screenshots as PNGs."""

import os
import subprocess

import pytest

from harness import desktop, overlay_scenes
from harness.bus import tone

REASON = (desktop.why_not("sway", "swaymsg", "swaybg", "grim", "mpv", "convert") or desktop.overlay_missing()
          or (None if os.path.exists("/usr/lib/mpv-mpris/mpris.so") else "mpv-mpris is not installed"))
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

BRIDGE_APP = "org.island.bridge"
# The cover: warm orange over purple, nothing a dark island or the icon theme draws.
COVER_COLOURS = ("#f28c28", "#e8731a")


def orange(pixel):
    r, g, b = pixel
    return r > 200 and 90 < g < 170 and b < 80


@pytest.fixture(scope="module")
def world():
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        session.start_islandd(overlay_scenes.DAEMON_CONFIG)  # an expansion holds while photographed
        # Runs until the session closes; its frame log says when the expanded island is at rest
        # (the art fades in with the rest of the content as it expands).
        overlay = desktop.Overlay(session, dict(sway.env, ISLAND_OVERLAY_FRAME_LOG="1"), config="[Overlay]\nCollapseAfter=0\n")
        bridge = session.spawn("island-bridge", [os.path.join(desktop.bin_dir(), "island-bridge")])
        yield session, sway, overlay_scenes.Screen(sway, "album-art"), bridge, overlay
    except BaseException:
        print(session.logs_text())
        raise
    finally:
        session.close()


def play(session, folder, cover):
    """mpv playing a tagged track in `folder` (with a cover.jpg when `cover`); the process."""
    directory = session.path("home", "Music", folder)
    session.make_dir(directory, mode=0o755)
    track = tone(os.path.join(directory, "track.wav"), seconds=120,
                 tags={"INAM": "Clair de Lune", "IART": "Claude Debussy", "IPRD": "Suite bergamasque"})
    os.chown(track, session.uid, session.gid)
    if cover:
        jpeg = os.path.join(directory, "cover.jpg")
        subprocess.run(["convert", "-size", "300x300", "gradient:%s-#5a268c" % COVER_COLOURS[0],
                        "-fill", COVER_COLOURS[1], "-draw", "rectangle 0,0 299,150", jpeg], check=True)
        os.chown(jpeg, session.uid, session.gid)
    return session.spawn("mpv-" + folder, ["mpv", "--no-config", "--load-scripts=no", "--script=/usr/lib/mpv-mpris/mpris.so",
                                           "--no-video", "--ao=null", "--keep-open=yes", track])


def now_playing(session, art):
    """The bridge's active Now Playing activity once its state has (or has no) artUrl."""
    def found():
        with session.varlink("org.island.Producer") as producer:
            for activity in producer.List(app=BRIDGE_APP, states=["active"])["activities"]:
                if ("artUrl" in activity["content"]["state"]) == art:
                    return activity
        return None
    return desktop.wait_until(found, 30, "the bridge's Now Playing activity %s art" % ("with" if art else "without"))


def expanded(session, screen, overlay, activity, name):
    since = overlay_scenes.mark(overlay)
    session.call_as_user("org.island.Presenter.Interact", {"action": "expand", "id": activity["id"]})
    overlay_scenes.at_rest(overlay, "expanded", since)
    image, box = screen.settled(lambda image, box: box is not None and box[3] - box[1] > 60, name=name, what="the expanded island")
    return screen.grab(name), box


def test_the_expanded_island_shows_the_cover_beside_the_title_and_the_icon_without_one(world):
    session, sway, screen, _, overlay = world
    mpv = play(session, "with-cover", cover=True)
    try:
        activity = now_playing(session, art=True)
        art = activity["content"]["state"]["artUrl"]
        assert art.startswith("file:///") and art.endswith("/with-cover/cover.jpg"), art
        image, box = expanded(session, screen, overlay, activity, "expanded-with-art")
        x0, y0, x1, y1 = box
        leading = (x0, y0, x0 + (x1 - x0) // 4, y1)
        covered = sum(1 for x, y in ((x, y) for y in range(leading[1], leading[3]) for x in range(leading[0], leading[2]))
                      if orange(image.pixel(x, y)))
        # The art is a 44 px square (about 1,900 px), half of it the cover's orange.
        assert covered > 300, "no cover drawn in the expanded island's leading quarter %s (%d orange pixels)" % (leading, covered)
        right = (x0 + (x1 - x0) // 4, y0, x1, y1)
        assert image.count((201, 91, 0), (255, 169, 79), right) < 20, "the cover's colour is only in the leading corner"
        session.call_as_user("org.island.Presenter.Interact", {"action": "collapse", "id": activity["id"]})
    finally:
        session.stop(mpv)
    mpv = play(session, "no-cover", cover=False)
    try:
        activity = now_playing(session, art=False)
        image, box = expanded(session, screen, overlay, activity, "expanded-without-art")
        x0, y0, x1, y1 = box
        assert image.count((201, 91, 0), (255, 169, 79), (x0, y0, x1, y1)) < 20, "a cover where the player gave none"
    finally:
        session.stop(mpv)
