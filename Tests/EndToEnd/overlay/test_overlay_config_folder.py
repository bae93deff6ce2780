"""What island-overlay reads from folders any program of the user's can write to: overlay.conf
and overlay.css in ~/.config/island, and its pid file in the runtime directory (read by
`--toggle-list`). Only a regular file of at most 1 MiB is read (64 bytes of the pid file); what
is no regular file — a FIFO, a link to an endless device, a link loop, a folder — or a larger
file is refused by name and never opened for reading, and the overlay starts on its defaults.
Before, GTK's loading of overlay.css blocked the start for good on a FIFO and read /dev/zero into
2 GiB, a file of gigabytes was read whole, and what overlay.conf could not be was ignored
without a word."""

import os

import pytest

from harness import junk
from harness import desktop
from harness import overlay_scenes as scenes
from harness.paths import LIVENESS, PRESENTER

REASON = desktop.why_not("sway", "swaymsg", "swaybg") or desktop.overlay_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=REASON or "")

# (name, how the junk is made at a path, the reason the overlay names)
JUNK = junk.cases(junk.make_fifo, junk.link_to_zero, junk.link_loop, junk.folder, junk.sparse_2_gib, limit=1 << 20)
IDS = [name for name, _, _ in JUNK]


@pytest.fixture(scope="module")
def world():
    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        session.start_islandd(scenes.DAEMON_CONFIG)
        yield session, sway
    finally:
        session.close()


def put(session, path, make):
    """The junk at `path`, the user's own, as another program of theirs would leave it."""
    session.make_dir(os.path.dirname(path))
    if os.path.lexists(path):
        os.rmdir(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    make(path)
    os.lchown(path, session.uid, session.gid)


def remove(path):
    os.rmdir(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)


@pytest.mark.parametrize("file,what", [("overlay.conf", "configuration"), ("overlay.css", "style sheet")])
@pytest.mark.parametrize("name,make,reason", JUNK, ids=IDS)
def test_what_is_no_regular_file_is_named_and_the_overlay_starts_on_its_defaults(world, file, what, name, make, reason):
    session, sway = world
    path = os.path.join(session.config, "island", file)
    put(session, path, make)
    overlay_name = "overlay-%s-%s" % (file, name)
    process = session.spawn(overlay_name, [desktop.overlay_binary()], env=sway.env)
    try:
        desktop.wait_until(lambda: session.alive(process) and "on output " in session.log(overlay_name), LIVENESS,
                           "the overlay placing its island")
        assert "%s: %s; the %s is not read" % (path, reason, what) in session.log(overlay_name)
    finally:
        session.stop(process)
        remove(path)


@pytest.mark.parametrize("name,make,reason", JUNK, ids=IDS)
def test_toggle_list_reads_no_pid_file_that_is_no_small_regular_file(world, name, make, reason):
    """Said as no running overlay, within LIVENESS, holding no more than a small process does
    (the 2 GiB pid file was read whole: 4 GiB resident)."""
    session, sway = world
    path = os.path.join(session.runtime, "island", "overlay.pid")
    put(session, path, make)
    process = session.spawn("toggle-" + name, [desktop.overlay_binary(), "--toggle-list"], env=sway.env)
    try:
        # Reaped here, not by Popen, for its resource usage.
        _, status, usage = desktop.wait_until(lambda: [r for r in [os.wait4(process.pid, os.WNOHANG)] if r[0]],
                                              LIVENESS, "--toggle-list answering")[0]
        assert os.waitstatus_to_exitcode(status) == 1, session.log("toggle-" + name)
        assert "no running overlay" in session.log("toggle-" + name)
        assert usage.ru_maxrss < 512 * 1024, "--toggle-list held %d MiB" % (usage.ru_maxrss // 1024)
    finally:
        remove(path)


# An icon a layout names, put by a hostile program of the user's where a theme lookup looks
# first: the user's own icon folders (~/.local/share/icons), which GTK and the off-screen
# drawing both search before the system's.
JUNK_ICON = "island-junk-icon"
ICON_LAYOUT = {"compactLeading": {"type": "symbol", "name": JUNK_ICON},
               "compactTrailing": {"type": "text", "template": "junk"}}
ICON_APP = "org.island.example.Coffee"


def junk_icons(session):
    """A FIFO no one writes to at every name and size a lookup of JUNK_ICON tries."""
    fifos = []
    for theme in ("Adwaita", "hicolor"):
        for size in ("16x16", "24x24", "32x32", "48x48", "64x64", "96x96", "128x128", "256x256", "scalable", "symbolic"):
            folder = os.path.join(session.data, "icons", theme, size, "apps")
            session.make_dir(folder)
            for suffix in (".png", ".svg", ".symbolic.png", "-symbolic.svg"):
                path = os.path.join(folder, JUNK_ICON + suffix)
                put(session, path, os.mkfifo)
                fifos.append(path)
    return fifos


def release(fifos):
    """Lets go of any reader still waiting on one of the FIFOs (a build without the fix), and
    removes them."""
    for path in fifos:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass  # no reader waits
        os.remove(path)


@pytest.fixture
def junk_icon_activity(world):
    session, sway = world
    with session.varlink("org.island.Extension") as extension:
        extension.RegisterLayout(app=ICON_APP, type="Junk", layout=ICON_LAYOUT)
    fifos = junk_icons(session)
    producer = scenes.Producer(session)
    producer.request(app=ICON_APP, type="Junk", content={"state": {}})
    try:
        yield session, sway
    finally:
        release(fifos)
        for app, activity in producer.started:
            with session.varlink("org.island.Producer") as p:
                p.End(app=app, id=activity, dismissalPolicy={"kind": "immediate"})


def test_the_svg_drawing_reads_no_icon_file_that_is_no_regular_file(junk_icon_activity):
    """island-presenter snapshot (island-overlay --draw-svg) looked icons up with cairo's own
    loader, which opens anything: it waited on the FIFO for good."""
    session, _ = junk_icon_activity
    done = session.run([PRESENTER, "snapshot", "--svg", "-"], timeout=LIVENESS, check=False)
    assert done.returncode == 0, done.stderr
    assert b"<title>Island: compact</title>" in done.stdout


def test_the_overlay_on_screen_is_drawn_beside_a_junk_icon(junk_icon_activity):
    """On screen the overlay asks GTK's icon theme, which searches the same folders first: the
    island is drawn all the same (checked beside the off-screen drawing, which did wait)."""
    session, sway = junk_icon_activity
    process = session.spawn("overlay-junk-icon", [desktop.overlay_binary()], env=sway.env)
    try:
        scenes.Screen(sway, "junk-icon").settled(lambda image, box: box is not None, name="compact",
                                                 what="the compact island beside the junk icon")
        assert session.alive(process)
    finally:
        session.stop(process)


def test_a_style_sheet_that_imports_a_fifo_is_not_loaded(world):
    """GTK reads every file a style sheet names (`@import`, `url()`) on the overlay's main
    thread: an overlay.css importing a FIFO held the overlay's start for good. Such a sheet is
    refused by name and the built-in style used."""
    session, sway = world
    fifo = os.path.join(session.config, "island", "junk.css")
    put(session, fifo, os.mkfifo)
    path = os.path.join(session.config, "island", "overlay.css")
    session.write(path, '@define-color island_accent #ff0000;\n@import url("file://%s");\n' % fifo)
    process = session.spawn("overlay-import", [desktop.overlay_binary()], env=sway.env)
    try:
        desktop.wait_until(lambda: session.alive(process) and "on output " in session.log("overlay-import"), LIVENESS,
                           "the overlay placing its island")
        assert "%s: it has an @import, and GTK would read the file it names; using the built-in style" % path \
            in session.log("overlay-import")
    finally:
        session.stop(process)
        release([fifo])
        os.remove(path)
