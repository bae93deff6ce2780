"""Frame strips of the island's motion, photographed on a real compositor: headless sway as the
unprivileged test user (desktop.py), the real islandd and island-overlay, the example apps of
packaging/, and bursts of grim frames (motion_frames.py) during six motions:

  motion-arrival.png   nothing live -> compact (an activity starts)
  motion-expand.png    compact -> expanded (a click, as Presenter Interact "expand")
  motion-collapse.png  expanded -> compact
  motion-split.png     compact -> minimal (a second activity: the bubble splits off the pill)
  motion-merge.png     minimal -> compact (the second one ends: the bubble merges back)
  motion-list.png      compact -> the list open (island-overlay --toggle-list)

Each strip is the state before the change and seven frames of the motion side by side, each
labelled with its time since the first frame that moved (grim's frames come every 15-40 ms, so
the offsets are what the machine gave, not a fixed grid). Run it through scripts/frame-strips.sh.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Run as a script, its own directory would come first on the path, and harness/varlink.py would
# hide the reference varlink client that desktop.py imports.
sys.path[0] = os.path.dirname(HERE)

from harness import desktop, motion_frames, overlay_scenes  # noqa: E402

# The offsets (ms after the first frame that moved) the strip's frames are picked nearest to.
PICKS = (0, 40, 80, 130, 190, 270, 400)


def end(session, app, activity):
    with session.varlink("org.island.Producer") as producer:
        producer.End(app=app, id=activity, dismissalPolicy={"kind": "immediate"})


def crop_box(frames, background, pad=14):
    """The box around everything drawn over the desktop in any frame, padded."""
    boxes = [image.box_not(background) for _, image in frames]
    boxes = [b for b in boxes if b]
    if not boxes:
        return None
    image = frames[0][1]
    return (max(0, min(b[0] for b in boxes) - pad), max(0, min(b[1] for b in boxes) - pad),
            min(image.width, max(b[2] for b in boxes) + pad), min(image.height, max(b[3] for b in boxes) + pad))


def pick(burst):
    """(label, image) for the strip: the state before, then the frames nearest to PICKS."""
    moving = burst.changed()
    if not moving:
        raise RuntimeError("nothing moved on screen during the burst")
    chosen, used = [("before", burst.frames[0][1])], set()
    for wanted in PICKS:
        index = min(range(len(moving)), key=lambda i: abs(moving[i][0] * 1000 - wanted))
        if index in used:
            continue
        used.add(index)
        chosen.append(("+%d ms" % round(moving[index][0] * 1000), moving[index][1]))
    return chosen


def strip(burst, background, path, scale, font):
    """Writes the strip of `burst` to `path` with ImageMagick's montage."""
    frames = pick(burst)
    box = crop_box([(0, image) for _, image in frames], background)
    work = tempfile.mkdtemp(prefix="island-strip-")
    try:
        argv = ["montage", "-font", font, "-pointsize", "13", "-fill", "#303030", "-background", "#f2f2f2"]
        for index, (label, image) in enumerate(frames):
            frame = os.path.join(work, "%02d.png" % index)
            image.crop(box).save_png(frame)
            argv += ["-label", label, frame]
        argv += ["-tile", "%dx1" % len(frames), "-geometry", "+6+6"]
        if scale != 1:
            argv += ["-filter", "point", "-resize", "%d%%" % (scale * 100)]
        subprocess.run(argv + [path], check=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [label for label, _ in frames]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=os.path.join(desktop.REPO, "docs", "gallery"),
                        help="where the strips go (default docs/gallery)")
    parser.add_argument("--scale", type=int, default=1, choices=(1, 2, 3), help="enlarge the strips N times (default 1)")
    parser.add_argument("--keep-frames", metavar="DIR", help="also keep every frame of every burst as PNGs in DIR")
    args = parser.parse_args()
    reason = desktop.why_not("sway", "swaybg", "grim", "montage", "fc-match") or desktop.overlay_missing()
    if reason:
        sys.exit("frame-strips: " + reason)
    font = subprocess.run(["fc-match", "-f", "%{file}", "DejaVu Sans"], capture_output=True, text=True).stdout.strip()
    os.makedirs(args.output, exist_ok=True)

    session = desktop.UserSession()
    try:
        session.start_bus()
        sway = desktop.Sway(session)
        sway.start_pointer()  # and parked in the bottom-left corner, out of the frames
        session.start_islandd()
        overlay = desktop.Overlay(session, sway.env)
        desktop.wait_until(lambda: overlay.alive() and "subscribed" in overlay.log(), 30, "the overlay subscribed")
        middle = sway.width // 2
        region = (middle - 320, 0, middle + 320, 200)

        def settle():
            """Until two frames in a row are the same: the last motion has ended."""
            previous = None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                image = motion_frames.grab(session, region)
                if previous is not None and image.pixels == previous:
                    return
                previous = image.pixels
                time.sleep(0.15)

        def record(name, change, region=region):
            settle()
            with motion_frames.Burst(session, region, after=1.0) as burst:
                change()
            path = os.path.join(args.output, "motion-%s.png" % name)
            labels = strip(burst, desktop.BACKGROUND, path, args.scale, font)
            if args.keep_frames:
                os.makedirs(args.keep_frames, exist_ok=True)
                for index, (t, image) in enumerate(burst.frames):
                    image.save_png(os.path.join(args.keep_frames, "%s-%02d-%+05dms.png" % (name, index, (t - burst.frames[0][0]) * 1000)))
            print("%s  (%d frames in the burst; %s)" % (path, len(burst.frames), ", ".join(labels)))

        now = time.time()
        producer = overlay_scenes.Producer(session)
        coffee = {}
        record("arrival", lambda: coffee.setdefault("id", producer.request(
            "org.island.example.Coffee", type="CoffeeOrder", attributes={"shop": "Blue Bottle", "order": "A17"},
            content={"state": {"stage": "brewing", "stageTitle": "Brewing", "etaMinutes": 7}})))
        record("expand", lambda: session.call_as_user("org.island.Presenter.Interact", {"action": "expand", "id": coffee["id"]}))
        record("collapse", lambda: session.call_as_user("org.island.Presenter.Interact", {"action": "collapse"}))
        toggle = [desktop.overlay_binary(), "--toggle-list"]
        record("list", lambda: session.run(toggle, env=sway.env), region=(middle - 320, 0, middle + 320, 300))
        session.run(toggle, env=sway.env)
        flight = {}
        record("split", lambda: flight.setdefault("id", producer.request(
            "org.island.example.Flights", type="Flight", attributes={"flight": "LH 454", "origin": "FRA", "destination": "SFO"},
            content={"state": {"status": "inFlight", "inFlight": True, "eta": "14:05", "departedAt": now - 3600,
                               "arrivesAt": now + 36000}})))
        record("merge", lambda: end(session, "org.island.example.Flights", flight["id"]))
    except BaseException:
        print(session.logs_text(), file=sys.stderr)
        raise
    finally:
        session.close()


if __name__ == "__main__":
    main()
