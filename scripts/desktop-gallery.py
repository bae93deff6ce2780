#!/usr/bin/env python3
"""Photographs the island on a real compositor: every form of the five example apps and of Now
Playing, as a user sees them.

Starts, as the unprivileged test user (scripts/install-deps.sh creates it), headless sway with a
session bus, islandd, island-overlay, island-bridge and mpv (with mpv-mpris) playing a tagged
track beside its cover.jpg, then for each example app requests its activity with the state the
gallery uses (OverlayGallery.swift) and takes a `grim` screenshot of each form once it has settled:
compact, expanded (as a click would expand it), minimal (with the next app's activity
detached), alert, and the list with every activity in it. Each shot is cropped to the island's
part of the screen and written as DIR/<app>-<form>.png.

Usage: sudo python3 scripts/desktop-gallery.py [--bin-dir DIR] [--out DIR] [--scale N] [--width W] [--only PART]
  --bin-dir  where islandd, island-overlay and island-bridge are (default: .build/debug)
  --out      where the PNGs go (default: docs/gallery/screen)
  --scale    the output's scale factor (default 1)
  --width    the output's width in logical pixels (default 1280; 720 high at 1280, in proportion)
  --only PART
             photograph only the example apps, Now Playing, the honest cases (stale, ended,
             Arabic, a long value, Now Playing beside a progress notification), the ended card
             alone (`ended`), Now Playing an hour into a track (`wide`: run it with --width 1920),
             or the island over a black window and a dark terminal (`dark`)
  --compare BEFORE
             also write DIR/compare-<form>.png: BEFORE's shot above this run's, labelled, for
             every form present in both (ImageMagick's montage)

Runs as root (it starts the compositor as the test user, as the end-to-end tests do)."""

import argparse
import math
import os
import shutil
import struct
import subprocess
import sys
import time
import wave

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "EndToEnd"))

NOW_PLAYING = ("nowplaying", "org.island.bridge")

# The example apps and the state each shows: the same as OverlayGallery.swift's, with times
# relative to now so that timers run.
def examples(now):
    return [
        ("coffee", "org.island.example.Coffee", "CoffeeOrder", {"shop": "Blue Bottle", "order": "A17"},
         {"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7},
         ("Your coffee is on the way", "Blue Bottle · order A17, about 3 min")),
        ("fasting", "org.island.example.Fasting", "Fast", {"plan": "16:8", "startedAt": now - 36000, "goalAt": now + 21600},
         {"percent": 62}, ("Fast at 62%", "6 hours to your 16:8 goal")),
        ("pomodoro", "org.island.example.Pomodoro", "Pomodoro", {"task": "Write the report", "rounds": 4},
         {"phase": "Focus", "round": 1, "startedAt": now - 300, "endsAt": now + 1200},
         ("Focus round 1 of 4", "Write the report · 20 min left")),
        ("flights", "org.island.example.Flights", "Flight", {"flight": "LH 454", "origin": "FRA", "destination": "SFO"},
         {"status": "inFlight", "inFlight": True, "eta": "14:05", "departedAt": now - 14000, "arrivesAt": now + 25600},
         ("LH 454 departed", "Arriving in San Francisco at 14:05")),
        ("fooddelivery", "org.island.example.FoodDelivery", "FoodOrder", {"restaurant": "Pizza Place"},
         {"step": 2, "minutesLeft": 18, "courier": "Sam"}, ("Sam picked up your order", "Pizza Place · 18 min")),
    ]


def tagged_track(path, seconds=600):
    """A quiet WAV whose RIFF INFO chunk names title, artist and album, as a music file would:
    mpv reads the tags and mpv-mpris publishes them as xesam metadata."""
    # 440 Hz repeats whole in a second: one second written `seconds` times (an hour's track
    # is written in a moment).
    second = b"".join(struct.pack("<h", int(300 * math.sin(2 * math.pi * 440 * i / 8000))) for i in range(8000))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        for _ in range(seconds):
            w.writeframes(second)

    def field(tag, text):
        data = text.encode() + b"\0"
        if len(data) % 2:
            data += b"\0"
        return tag + struct.pack("<I", len(data)) + data
    info = b"INFO" + field(b"INAM", "Clair de Lune") + field(b"IART", "Claude Debussy") + field(b"IPRD", "Suite bergamasque")
    with open(path, "r+b") as f:
        f.seek(0, os.SEEK_END)
        f.write(b"LIST" + struct.pack("<I", len(info)) + info)
        size = f.tell() - 8
        f.seek(4)
        f.write(struct.pack("<I", size))
    return path


class Gallery:
    def __init__(self, args):
        from harness import desktop, overlay_scenes
        self.desktop, self.scenes = desktop, overlay_scenes
        self.out = args.out
        self.bin_dir = args.bin_dir
        self.scale = args.scale
        self.width = args.width
        os.environ["ISLAND_BIN_DIR"] = self.bin_dir
        self.session = desktop.UserSession()

    def start(self):
        desktop, session = self.desktop, self.session
        session.start_bus()
        extra = "output * scale %d" % self.scale if self.scale != 1 else ""
        self.sway = desktop.Sway(session, width=self.width * self.scale, height=self.width * 9 // 16 * self.scale, extra_config=extra)
        session.start_islandd("[Limits]\nStartBudget=1000\n")  # installs the example apps
        # islandd believes the bridge speaks for the apps it verified only when the bridge is the
        # program its entry names: the package's entry names /usr/bin's, this run uses the build's.
        entry = os.path.join(session.data, "applications", "org.island.bridge.desktop")
        with open(entry) as f:
            text = f.read()
        session.write(entry, text.replace("Exec=/usr/bin/island-bridge\n", "Exec=%s\n" % os.path.realpath(os.path.join(self.bin_dir, "island-bridge"))))
        session.island("admin", "reload")
        self.overlay = desktop.Overlay(session, dict(self.sway.env), config="[Overlay]\nCollapseAfter=0\n")
        self.screen = self.scenes.Screen(self.sway, "gallery")
        # The activities this run starts, ended (and dismissed) between scenes.
        self.producing = self.scenes.Producer(session)

    # The daemon's roles.

    def producer(self):
        return self.session.varlink("org.island.Producer")

    def request(self, app, type, attributes, state, relevance=0.0):
        return self.producing.request(app=app, content={"state": state}, relevance=relevance, type=type, attributes=attributes)

    def end_all(self):
        self.producing.end_all()
        self.screen.settled(lambda image, box: box is None, what="the island hiding")

    def interact(self, action, activity):
        # The presenter role is the user's alone.
        self.session.call_as_user("org.island.Presenter.Interact", {"action": action, "id": activity})

    # Shots.

    def shot(self, name, tall=False):
        image, box = self.screen.settled(lambda image, box: box is not None, what=name)
        # Hold still a moment longer: a crossfade inside a still shape does not move the box.
        time.sleep(0.8)
        image = self.screen.grab()
        s = self.scale
        width, height = 560 * s, (600 if tall else 230) * s
        left = (image.width - width) // 2
        path = os.path.join(self.out, name + ".png")
        image.crop((left, 0, left + width, height)).save_png(path)
        print(path, flush=True)

    def example_forms(self, now):
        apps = examples(now)
        for index, (name, app, type, attributes, state, alert) in enumerate(apps):
            activity = self.request(app, type, attributes, state)
            self.shot(name + "-compact")
            self.interact("expand", activity)
            self.shot(name + "-expanded")
            self.interact("collapse", activity)
            self.producing.update(activity, {"state": state, "relevanceScore": 0.0}, app=app,
                                  alert={"title": alert[0], "body": alert[1]})
            self.shot(name + "-alert")
            self.end_all()
            # Minimal: this app's activity and the next one's, the next one detached.
            _, app2, type2, attributes2, state2, _ = apps[(index + 1) % len(apps)]
            self.request(app, type, attributes, state, relevance=1.0)
            self.request(app2, type2, attributes2, state2, relevance=0.0)
            self.shot(name + "-minimal")
            self.end_all()
        for name, app, type, attributes, state, _ in apps:
            self.request(app, type, attributes, state)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        self.shot("list", tall=True)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        self.end_all()

    def now_playing(self):
        session = self.session
        track = tagged_track(session.path("home", "clair-de-lune.wav"))
        os.chown(track, session.uid, session.gid)
        # The album's cover beside the track, as a music folder has it: mpv-mpris names it as
        # the track's mpris:artUrl, and the expanded island shows it.
        cover = session.path("home", "cover.jpg")
        subprocess.run(["convert", "-size", "600x600", "gradient:#2c5364-#0f2027", "-fill", "#f4efd8",
                        "-draw", "circle 380,230 380,120", "-quality", "92", cover], check=True)
        os.chown(cover, session.uid, session.gid)
        bridge = session.spawn("island-bridge", [os.path.join(self.bin_dir, "island-bridge")])
        mpv = session.spawn("mpv", ["mpv", "--no-config", "--load-scripts=no", "--script=/usr/lib/mpv-mpris/mpris.so",
                                    "--no-video", "--ao=null", "--keep-open=yes", track])
        def now_playing_id():
            with self.producer() as producer:
                activities = producer.List(app=NOW_PLAYING[1], states=["active"])["activities"]
            return activities[0]["id"] if activities else None
        activity = self.desktop.wait_until(now_playing_id, 30, "the bridge's Now Playing activity")
        self.shot("nowplaying-compact")
        self.interact("expand", activity)
        self.shot("nowplaying-expanded")
        self.interact("collapse", activity)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        self.shot("nowplaying-list", tall=True)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        session.stop(mpv)
        session.stop(bridge)

    def honest(self, now):
        """The island when it cannot say everything, or what it says is no longer current: a stale
        and an ended activity, Arabic text, a value too long for its place, and Now Playing
        beside a progress notification (dunst, notify-send) as two apps' activities."""
        session = self.session
        # Stale: a coffee order whose app stopped updating it (its staleDate passed).
        stale = self.producing.request(app="org.island.example.Coffee", type="CoffeeOrder", attributes={"shop": "Blue Bottle", "order": "A17"},
                                       content={"state": {"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7}, "staleDate": time.time() + 2})
        self.desktop.wait_until(lambda: self.state_of(stale) == "stale", 30, "the coffee order going stale")
        self.shot("honest-stale-compact")
        self.interact("expand", stale)
        self.shot("honest-stale-expanded")
        self.interact("collapse", stale)
        self.ended_card(now)
        self.end_all()
        # Arabic: a coffee order in a right-to-left language.
        arabic = self.request("org.island.example.Coffee", "CoffeeOrder", {"shop": "المقهى الأزرق", "order": "A17"},
                              {"stage": "brewing", "stageTitle": "قيد التحضير", "etaMinutes": 7})
        self.interact("expand", arabic)
        self.shot("honest-arabic-expanded")
        self.interact("collapse", arabic)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        self.shot("honest-arabic-list", tall=True)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        self.end_all()
        # A value too long for its place: whole, or not there; never cut to a letter.
        # (With no etaMinutes the coffee's compact trailing value is its stage's title.)
        long_value = self.request("org.island.example.Coffee", "CoffeeOrder", {"shop": "Blue Bottle", "order": "A17"},
                                  {"stage": "brewing", "stageTitle": "Something went wrong with the espresso machine, please ask at the counter"})
        self.shot("honest-long-value-compact")
        self.interact("expand", long_value)
        self.shot("honest-long-value-expanded")
        self.interact("collapse", long_value)
        self.end_all()
        # Now Playing (mpv, through the bridge) and a file copy's progress notification, sent
        # with notify-send to dunst, the user's notification daemon: pill and bubble together.
        track = tagged_track(session.path("home", "clair-de-lune.wav"))
        os.chown(track, session.uid, session.gid)
        dunst = session.spawn("dunst", ["dunst"], env=dict(self.sway.env))
        bridge = session.spawn("island-bridge", [os.path.join(self.bin_dir, "island-bridge")])
        mpv = session.spawn("mpv", ["mpv", "--no-config", "--load-scripts=no", "--script=/usr/lib/mpv-mpris/mpris.so",
                                    "--no-video", "--ao=null", "--keep-open=yes", track])
        self.desktop.wait_until(lambda: self.bridged("NowPlaying"), 30, "the bridge's Now Playing activity")
        self.desktop.wait_until(lambda: session.run(["notify-send", "-a", "Files", "-h", "int:value:40", "Copying holiday.mkv", "to Backup"],
                                                    check=False).returncode == 0, 30, "dunst serving notifications")
        self.desktop.wait_until(lambda: self.bridged("Progress"), 30, "the bridge's progress activity")
        self.shot("honest-nowplaying-and-copy")
        session.stop(mpv)
        session.stop(bridge)
        session.stop(dunst)

    def ended_card(self, now):
        """Ended: a fast that ended at 62 % and stays in the list until dismissed, its clock
        standing at the end (ten hours since it started): the list is photographed a while
        after the end, and once more later, and both say the same."""
        with self.producer() as producer:
            fast = producer.Request(app="org.island.example.Fasting", type="Fast", content={"state": {"percent": 62}},
                                    attributes={"plan": "16:8", "startedAt": now - 36000, "goalAt": now + 21600})["activity"]["id"]
            ended = producer.End(app="org.island.example.Fasting", id=fast, content={"state": {"percent": 62}},
                                 dismissalPolicy={"kind": "default"})["activity"]
        print("ended at %.1f, %.1f s after it started" % (ended["endedAt"], ended["endedAt"] - (now - 36000)), flush=True)
        time.sleep(3)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        self.shot("honest-stale-ended-list", tall=True)
        time.sleep(4)
        self.shot("honest-ended-list-later", tall=True)
        self.session.run([self.desktop.overlay_binary(), "--toggle-list"], env=self.sway.env)
        self.interact("dismiss", fast)

    def wide(self):
        """Now Playing an hour into a long track, expanded, on this run's output (--width 1920):
        "artist — album" whole beside the large elapsed time."""
        session = self.session
        track = tagged_track(session.path("home", "clair-de-lune-long.wav"), seconds=4000)
        os.chown(track, session.uid, session.gid)
        bridge = session.spawn("island-bridge", [os.path.join(self.bin_dir, "island-bridge")])
        mpv = session.spawn("mpv", ["mpv", "--no-config", "--load-scripts=no", "--script=/usr/lib/mpv-mpris/mpris.so",
                                    "--no-video", "--ao=null", "--keep-open=yes", "--start=1:02:30", track])
        activity = self.desktop.wait_until(lambda: (self.bridged("NowPlaying") or [{}])[0].get("id"), 30, "the bridge's Now Playing activity")
        self.interact("expand", activity)
        self.shot("wide-%d-nowplaying-expanded" % self.width)
        self.interact("collapse", activity)
        session.stop(mpv)
        session.stop(bridge)
        self.end_all()

    def shot_still(self, name, tall=False):
        """A shot once the top of the screen has stood still for a second: over a window the
        island cannot be told from the desktop's colour, so the settling is judged whole."""
        s = self.scale
        width, height = 560 * s, (600 if tall else 230) * s
        deadline, last, since = time.monotonic() + 30, None, time.monotonic()
        while time.monotonic() < deadline:
            image = self.screen.grab()
            left = (image.width - width) // 2
            crop = image.crop((left, 0, left + width, height))
            if last is None or crop.pixels != last.pixels:
                last, since = crop, time.monotonic()
            elif time.monotonic() - since >= 1.0:
                break
            time.sleep(0.1)
        path = os.path.join(self.out, name + ".png")
        last.save_png(path)
        print(path, flush=True)

    def dark(self, now):
        """The island over a black window and over a dark terminal with text in it: its edge
        must keep it apart from them."""
        session = self.session
        for name, argv in (("black", ["foot", "-o", "colors.background=000000", "sh", "-c", "sleep 100000"]),
                           ("terminal", ["foot", "sh", "-c", "ls -l --color=always /usr/bin | head -80; sleep 100000"])):
            window = session.spawn("foot-" + name, argv, env=dict(self.sway.env))
            self.desktop.wait_until(lambda: any(n.get("app_id") == "foot" for n in self.sway_windows()), 30, "foot's window")
            activity = self.request("org.island.example.Coffee", "CoffeeOrder", {"shop": "Blue Bottle", "order": "A17"},
                                    {"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7})
            self.shot_still("dark-%s-compact" % name)
            self.interact("expand", activity)
            self.shot_still("dark-%s-expanded" % name)
            self.interact("collapse", activity)
            self.producing.end_all()
            session.stop(window)
            self.desktop.wait_until(lambda: not any(n.get("app_id") == "foot" for n in self.sway_windows()), 30, "foot gone")

    def sway_windows(self):
        import json
        def walk(node):
            yield node
            for child in node.get("nodes", []) + node.get("floating_nodes", []):
                yield from walk(child)
        return [n for n in walk(json.loads(self.sway.swaymsg("-r", "-t", "get_tree"))) if n.get("pid")]

    def state_of(self, activity):
        with self.producer() as producer:
            for state in ("active", "stale", "ended"):
                if any(a["id"] == activity for a in producer.List(app="org.island.example.Coffee", states=[state])["activities"]):
                    return state
        return None

    def bridged(self, type):
        with self.producer() as producer:
            return [a for a in producer.List(app=NOW_PLAYING[1], states=["active"])["activities"] if a["type"] == type]

    def close(self):
        self.session.close()


def compare(before, after, out):
    """before/after pairs, one PNG per form, with ImageMagick's montage."""
    for name in sorted(os.listdir(after)):
        if not name.endswith(".png") or name.startswith("compare-") or not os.path.exists(os.path.join(before, name)):
            continue
        subprocess.run(["montage", "-label", "before", os.path.join(before, name), "-label", "after", os.path.join(after, name),
                        "-tile", "1x2", "-geometry", "+0+6", "-background", "#202024", "-fill", "#dddddd",
                        os.path.join(out, "compare-" + name)], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", default=os.path.join(REPO, ".build", "debug"))
    parser.add_argument("--out", default=os.path.join(REPO, "docs", "gallery", "screen"))
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--compare", metavar="BEFORE")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--only", choices=("examples", "nowplaying", "honest", "ended", "wide", "dark"), help="photograph only this part")
    args = parser.parse_args()
    args.bin_dir = os.path.abspath(args.bin_dir)
    os.makedirs(args.out, exist_ok=True)
    for program in ("sway", "grim", "mpv", "convert", "dunst", "notify-send"):
        if shutil.which(program) is None:
            sys.exit("desktop-gallery: %s is not installed (scripts/install-deps.sh installs it)" % program)
    gallery = Gallery(args)
    try:
        gallery.start()
        if args.only in (None, "examples"):
            gallery.example_forms(time.time())
        if args.only in (None, "nowplaying"):
            gallery.now_playing()
        if args.only in (None, "honest"):
            gallery.honest(time.time())
        if args.only == "ended":
            gallery.ended_card(time.time())
        if args.only == "wide":
            gallery.wide()
        if args.only in (None, "dark"):
            gallery.dark(time.time())
    except BaseException:
        print(gallery.session.logs_text(), file=sys.stderr)
        raise
    finally:
        gallery.close()
    if args.compare:
        compare(args.compare, args.out, args.out)


if __name__ == "__main__":
    main()
