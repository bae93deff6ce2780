// Island on GNOME Shell: the extension starts island-overlay (the same renderer every other
// desktop runs) as a Wayland client it owns, and places and stacks that client's window: at the
// top centre of the chosen monitor, hanging just under the top bar so that it never covers the
// clock, the indicators or another extension's items; above other windows, on every workspace,
// out of the window list and Alt+Tab. The island's forms, geometry, painting and input region
// are the overlay's; this file only hosts its window and tells it (on its standard input) what
// only the Shell knows: a fullscreen window on its monitor, and Do Not Disturb.
//
// This module is the whole extension on every GNOME Shell release it supports; the entry
// points around it are the part that differs (GNOMEShellExtension/shell-43 for the `imports`
// format of 43 and 44, shell-45 for the ES modules of 45 and later) and hand it the Shell's
// `Main` and the extension's settings. What Mutter changed between releases is met here, by
// feature: see `spawnHosted` and `hideFromWindowList`.
//
// On the lock screen (session mode `unlock-dialog`, in metadata.json's session-modes) the
// extension stays enabled, so that the overlay shows the lock-screen list under the lock
// screen's clock: the overlay is told it is locked and draws the list alone (what the daemon
// redacted for the lock screen), and the extension shows that window's pixels there through a
// clone of its actor (the Shell hides every window while locked); nothing is drawn here. While
// locked the extension follows no focus and handles no key, and the clone takes no input.

import Clutter from 'gi://Clutter';
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Meta from 'gi://Meta';

import * as Hosting from './hosting.js';

const OVERLAY = 'island-overlay';
const SIGTERM = 15;

/**
 * Starts `argv` as a Wayland client the Shell owns. Mutter's API for it changed twice:
 * 43 makes the client from the launcher alone and 44 to 48 from the Meta.Context and the
 * launcher, both then spawning with spawnv(); 49 and later make and spawn it in one call,
 * new_subprocess(). A constructor of the wrong signature throws a TypeError before anything
 * is made.
 *
 * @param {string[]} argv - the program and its arguments
 * @param {Gio.SubprocessFlags} flags - the launcher's flags
 * @returns {{client: Meta.WaylandClient, process: Gio.Subprocess}} the client and its process
 */
function spawnHosted(argv, flags) {
    const launcher = new Gio.SubprocessLauncher({flags});
    if (typeof Meta.WaylandClient.new_subprocess === 'function') {
        const client = Meta.WaylandClient.new_subprocess(global.context, launcher, argv);
        return {client, process: client.get_subprocess()};
    }
    let client;
    try {
        client = Meta.WaylandClient.new(launcher);
    } catch (e) {
        if (!(e instanceof TypeError))
            throw e;
        client = Meta.WaylandClient.new(global.context, launcher);
    }
    return {client, process: client.spawnv(global.display, argv)};
}

/**
 * Keeps `window` out of the window list, the overview and Alt+Tab: a method of the Wayland
 * client up to Mutter 48, of the window from 49.
 *
 * @param {Meta.WaylandClient} client - the client that owns the window
 * @param {Meta.Window} window - the overlay's window
 */
function hideFromWindowList(client, window) {
    if (typeof window.hide_from_window_list === 'function')
        window.hide_from_window_list();
    else
        client.hide_from_window_list(window);
}

/**
 * Whether the Shell is a Wayland compositor; from GNOME 50 it can be nothing else, and Mutter
 * no longer has the function.
 *
 * @returns {boolean} true on Wayland
 */
function isWayland() {
    return typeof Meta.is_wayland_compositor !== 'function' || Meta.is_wayland_compositor();
}

/**
 * The extension's behaviour between enable() and disable(), whatever the Shell's release.
 */
export class IslandHost {
    /**
     * @param {object} shell - what the entry point hands over
     * @param {object} shell.Main - the Shell's ui/main module
     * @param {Gio.Settings} shell.settings - the extension's settings
     */
    constructor({Main, settings}) {
        this._main = Main;
        this._settings = settings;
    }

    enable() {
        this._notifications = new Gio.Settings({schema_id: 'org.gnome.desktop.notifications'});
        this._signals = [];
        this._failures = 0;
        this._toldMissing = false;
        this._locked = false;

        this._connect(this._settings, 'changed', (settings, key) => {
            // The island's size is decided when the overlay starts; the room under the bar on
            // another monitor (or under another gap) is told with the state.
            if (key === 'size') {
                this._restart();
            } else {
                this._place();
                this._sendState();
            }
        });
        this._connect(this._notifications, 'changed::show-banners', () => this._sendState());
        this._connect(global.display, 'in-fullscreen-changed', () => this._sendState());
        this._connect(global.display, 'window-created', (display, window) => this._adopt(window));
        // A monitor plugged in or out, its mode or scale changed, the primary one changed, or
        // the bar's strut moved: the window goes to the chosen monitor's top centre again, and
        // the overlay is told the room under the bar there, to fit its window to it (its size
        // changing places it again, through 'size-changed').
        this._connect(global.display, 'workareas-changed', () => {
            this._place();
            this._sendState();
        });
        this._connect(this._main.sessionMode, 'updated', () => this._sessionModeChanged());
        this._connect(this._main.layoutManager, 'monitors-changed', () => {
            this._place();
            this._sendState();
        });
        // Enabled while the Shell starts, the top bar has no strut yet: the work area is the
        // whole monitor, and the overlay's room under the bar, given once at its start, would
        // be the bar's height too tall. The Shell says when its layout is complete.
        if (this._main.layoutManager._startingUp)
            this._connectOnce(this._main.layoutManager, 'startup-complete', () => this._start());
        else
            this._start();
        this._sessionModeChanged();
    }

    // The extension stays enabled in the `unlock-dialog` session mode (metadata.json) because
    // it is what shows the lock-screen list of Live Activities under the lock screen's clock,
    // where GNOME shows media and notifications: so locking the screen does not call this, and
    // while locked every signal about the keyboard's focus is disconnected (_followFocus) and
    // none about keys is ever connected. disable() comes when the user turns the extension off
    // or the Shell stops, and undoes all of it.
    disable() {
        this._followFocus(false);
        this._hideOnLockScreen();
        this._stop();
        for (const [object, id] of this._signals)
            object.disconnect(id);
        this._signals = null;
        this._focusBefore = null;
        this._notifications = null;
    }

    // The session locked or unlocked: the overlay is told, its window is shown under the
    // lock screen's clock or back under the bar, and focus is followed only while unlocked.
    _sessionModeChanged() {
        const locked = this._main.sessionMode.isLocked;
        if (locked === this._locked && this._focusSignals)
            return;
        this._locked = locked;
        this._followFocus(!locked);
        if (locked)
            this._showOnLockScreen();
        else
            this._hideOnLockScreen();
        this._sendState();
    }

    // The keyboard's focus: where it was before the island's window took it, and the island's
    // own focus (given back unless a click gave it). None of it while locked.
    _followFocus(follow) {
        if (follow && !this._focusSignals) {
            this._focusSignals = [[global.display, global.display.connect('notify::focus-window', () => this._focusChanged())]];
            if (this._window) {
                const window = this._window;
                this._focusSignals.push([window, window.connect('focus', () => this._focused(window))]);
            }
        } else if (!follow && this._focusSignals) {
            for (const [object, id] of this._focusSignals)
                object.disconnect(id);
            this._focusSignals = null;
            if (this._refocusSource) {
                GLib.source_remove(this._refocusSource);
                this._refocusSource = 0;
            }
        }
    }

    // The lock screen: a clone of the overlay's window actor (the Shell hides every window
    // while locked) beside the unlock dialog, in the dialog's own group so that it slides in
    // and out with it, above it, under its clock. It takes no input; the overlay's window gets
    // none either while locked.
    _showOnLockScreen() {
        if (!this._locked || !this._window || this._lockClone)
            return;
        const actor = this._window.get_compositor_private();
        const dialog = this._main.screenShield?._dialog;
        const group = dialog?.get_parent() ?? this._main.layoutManager.screenShieldGroup;
        if (!actor || !group)
            return;
        this._lockClone = new Clutter.Clone({source: actor, reactive: false});
        group.add_child(this._lockClone);
        this._lockCloneSignals = [[actor, actor.connect('notify::size', () => this._placeOnLockScreen())]];
        // The clock's lines, allocated by the dialog once it is shown.
        const line = dialog?._clock?.get_last_child();
        if (line)
            this._lockCloneSignals.push([line, line.connect('notify::allocation', () => this._placeOnLockScreen())]);
        this._placeOnLockScreen();
    }

    _hideOnLockScreen() {
        for (const [object, id] of this._lockCloneSignals ?? [])
            object.disconnect(id);
        this._lockCloneSignals = null;
        if (this._lockClone)
            this._lockClone.destroy();
        this._lockClone = null;
    }

    // Under the unlock dialog's clock: the bottom of the clock's last line (the time, the date
    // and the hint to unlock, in a column as tall as the stack it shares with the password
    // prompt) in the dialog's coordinates, which are the monitor's but for the dialog's slide;
    // with no clock to read, where the dialog's layout puts the stack, a third of the way down.
    _placeOnLockScreen() {
        const clone = this._lockClone;
        const area = this._area();
        if (!clone || !area)
            return;
        const monitor = area.monitor;
        const dialog = this._main.screenShield?._dialog;
        const line = dialog?._clock?.get_last_child();
        let top = monitor.y + Math.floor(monitor.height / 3);
        if (line && line.height > 0 && line.get_stage()) {
            // By allocations alone: the clock scales and fades as the prompt takes its place,
            // and the list stays where it is.
            let y = line.height;
            for (let actor = line; actor && actor !== dialog; actor = actor.get_parent())
                y += actor.get_allocation_box().y1;
            top = Math.floor(y);
        }
        const {x, y} = Hosting.lockScreenPlacement(monitor, top, clone.width, area.gap);
        clone.set_position(x, y);
    }

    _connect(object, signal, handler) {
        this._signals.push([object, object.connect(signal, handler)]);
    }

    _connectOnce(object, signal, handler) {
        const id = object.connect(signal, () => {
            object.disconnect(id);
            this._signals = this._signals.filter(([o, connected]) => o !== object || connected !== id);
            handler();
        });
        this._signals.push([object, id]);
    }

    // The overlay's process.

    _start() {
        const path = GLib.find_program_in_path(OVERLAY);
        if (!path) {
            if (!this._toldMissing) {
                this._toldMissing = true;
                this._main.notifyError(`Island: ${OVERLAY} is missing`,
                    'Not in PATH: install the island-overlay package');
            }
            return;
        }
        const area = this._area();
        const room = area ? Hosting.roomBelow(area.monitor, area.workArea, area.gap) : 720;
        const argv = [path, ...Hosting.overlayArguments(this._settings.get_string('size'), room)];
        // Its standard output says when the screen should wake (Hosting.asksWake).
        const flags = Gio.SubprocessFlags.STDIN_PIPE | Gio.SubprocessFlags.STDOUT_PIPE;
        let process;
        try {
            if (isWayland()) {
                ({client: this._client, process} = spawnHosted(argv, flags));
            } else {
                // X11 session: an ordinary child, its window found by its pid.
                process = Gio.Subprocess.new(argv, flags);
            }
        } catch (e) {
            this._client = null;
            console.warn(`Island: could not start ${path}: ${e.message}`);
            this._scheduleRestart(`it could not start (${e.message})`);
            return;
        }
        this._process = process;
        this._pid = Number(process.get_identifier());
        this._stdin = process.get_stdin_pipe();
        this._cancellable = new Gio.Cancellable();
        this._startedAt = GLib.get_monotonic_time();
        this._writing = false;
        this._pendingLine = null;
        this._lastLine = null;
        this._readOverlay(process.get_stdout_pipe(), '');
        process.wait_async(this._cancellable, (p, result) => {
            try {
                p.wait_finish(result);
            } catch (e) {
                return; // cancelled: stopped on purpose
            }
            if (p === this._process)
                this._exited(p);
        });
        this._sendState();
    }

    _exited(process) {
        const why = process.get_if_signaled()
            ? `was killed by signal ${process.get_term_sig()}`
            : `exited with status ${process.get_exit_status()}`;
        const ranFor = (GLib.get_monotonic_time() - this._startedAt) / 1e6;
        this._forgetProcess();
        if (ranFor >= Hosting.STABLE_RUN_SECONDS)
            this._failures = 0;
        this._scheduleRestart(why);
    }

    _scheduleRestart(why) {
        this._failures++;
        const delay = Hosting.restartDelay(this._failures);
        if (delay === null) {
            this._main.notifyError(`Island: ${OVERLAY} keeps failing`,
                `It ${why}, ${this._failures} times in a row; enable the extension again to retry`);
            return;
        }
        console.warn(`Island: ${OVERLAY} ${why}; starting it again in ${delay} s`);
        this._restartSource = GLib.timeout_add_seconds(GLib.PRIORITY_DEFAULT, delay, () => {
            this._restartSource = 0;
            this._start();
            return GLib.SOURCE_REMOVE;
        });
    }

    // A new overlay once the old one has gone, so that two islands are never on screen.
    _restart() {
        const old = this._process;
        this._stop();
        if (!old) {
            this._start();
            return;
        }
        const waiting = new Gio.Cancellable();
        this._restartWait = waiting;
        old.wait_async(waiting, () => {
            if (this._restartWait !== waiting)
                return;
            this._restartWait = null;
            this._start();
        });
    }

    _stop() {
        if (this._restartWait) {
            const waiting = this._restartWait;
            this._restartWait = null;
            waiting.cancel();
        }
        if (this._restartSource) {
            GLib.source_remove(this._restartSource);
            this._restartSource = 0;
        }
        const process = this._process;
        this._forgetProcess();
        // SIGTERM; the closed standard input alone would make it exit too.
        if (process && process.get_identifier())
            process.send_signal(SIGTERM);
    }

    // What the overlay says: a wake, when islandd sent an alert while the session is locked
    // (none for a secret activity, none under Do Not Disturb). GNOME has no call for another
    // program to light its lock screen; the Shell's own screen shield does it for its
    // notifications, and does it here. Read until the pipe closes or the process is forgotten.
    _readOverlay(stream, pending) {
        const cancellable = this._cancellable;
        stream.read_bytes_async(4096, GLib.PRIORITY_DEFAULT, cancellable, (s, result) => {
            let bytes;
            try {
                bytes = s.read_bytes_finish(result);
            } catch (e) {
                return; // cancelled, or the overlay is gone
            }
            const data = bytes.get_data();
            if (!data || data.length === 0 || cancellable !== this._cancellable)
                return;
            const read = Hosting.overlayLines(pending, new TextDecoder().decode(data));
            if (this._locked && read.lines.some(Hosting.asksWake))
                this._wakeScreen();
            this._readOverlay(stream, read.pending);
        });
    }

    // The screen shield's own wake (what it does for a notification while locked): it lights
    // the lock screen and tells the power settings, which turn the monitors on.
    _wakeScreen() {
        const shield = this._main.screenShield;
        if (shield && typeof shield._wakeUpScreen === 'function')
            shield._wakeUpScreen();
    }

    _forgetProcess() {
        if (this._cancellable)
            this._cancellable.cancel();
        this._cancellable = null;
        try {
            if (this._stdin)
                this._stdin.close(null);
        } catch (e) {
            // already broken: the process is gone
        }
        this._stdin = null;
        this._process = null;
        this._client = null;
        this._pid = 0;
        this._releaseWindow();
    }

    // What the overlay is told: the whole state on each change, the newest line only.

    _sendState() {
        if (!this._stdin)
            return;
        const index = this._monitorIndex();
        const fullscreen = index >= 0 && global.display.get_monitor_in_fullscreen(index);
        const area = this._area();
        const line = Hosting.stateLine(fullscreen,
            this._notifications.get_boolean('show-banners'),
            this._settings.get_string('show-over-fullscreen'), this._locked,
            area ? Hosting.roomBelow(area.monitor, area.workArea, area.gap) : null);
        if (line === (this._pendingLine || this._lastLine))
            return;
        this._pendingLine = line;
        this._flush();
    }

    _flush() {
        if (this._writing || !this._pendingLine || !this._stdin)
            return;
        const stdin = this._stdin;
        const bytes = new GLib.Bytes(new TextEncoder().encode(this._pendingLine));
        this._lastLine = this._pendingLine;
        this._pendingLine = null;
        this._writing = true;
        stdin.write_bytes_async(bytes, GLib.PRIORITY_DEFAULT, this._cancellable, (stream, result) => {
            try {
                stream.write_bytes_finish(result);
            } catch (e) {
                if (!e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                    console.warn(`Island: writing to ${OVERLAY}: ${e.message}`);
                return;
            }
            if (stream === this._stdin) {
                this._writing = false;
                this._flush();
            }
        });
    }

    // The overlay's window.

    _owns(window) {
        if (this._client)
            return this._client.owns_window(window);
        return this._pid > 0 && window.get_pid() === this._pid;
    }

    _adopt(window) {
        if (!this._process || !this._owns(window))
            return;
        this._releaseWindow();
        this._window = window;
        if (this._client)
            hideFromWindowList(this._client, window);
        this._windowSignals = [
            window.connect('position-changed', () => this._place()),
            window.connect('size-changed', () => this._place()),
            window.connect('shown', () => {
                // Once it is in the stack (making it above before warns in mutter 43).
                window.make_above();
                window.stick();
                this._place();
                this._showOnLockScreen();
            }),
            window.connect('unmanaged', () => this._releaseWindow()),
        ];
        if (this._focusSignals)
            this._focusSignals.push([window, window.connect('focus', () => this._focused(window))]);
        this._place();
        this._showOnLockScreen();
    }

    // Mutter 43 focuses the island's window when it maps while no window has the focus (seen
    // in the nested Shell; with a focused window it leaves the focus where it is). Then the next
    // window an app opens is not focused but announced ("… is ready"), and keys go to the
    // island. The island keeps the focus only when a click on it gave it (so that Escape
    // reaches the expanded island); any other focus goes back to where it was.
    _focused(window) {
        const event = Clutter.get_current_event();
        const type = event ? event.type() : Clutter.EventType.NOTHING;
        if (type === Clutter.EventType.BUTTON_PRESS || type === Clutter.EventType.TOUCH_BEGIN)
            return;
        if (this._refocusSource)
            return;
        // Not from within mutter's focus change itself.
        this._refocusSource = GLib.idle_add(GLib.PRIORITY_DEFAULT, () => {
            this._refocusSource = 0;
            if (!window.has_focus())
                return GLib.SOURCE_REMOVE;
            const time = global.get_current_time();
            const before = this._focusBefore;
            if (before && global.display.list_all_windows().includes(before))
                before.focus(time);
            else
                global.display.unset_input_focus(time);
            return GLib.SOURCE_REMOVE;
        });
    }

    _focusChanged() {
        const focus = global.display.focus_window;
        if (focus && focus !== this._window)
            this._focusBefore = focus;
    }

    _releaseWindow() {
        if (this._refocusSource) {
            GLib.source_remove(this._refocusSource);
            this._refocusSource = 0;
        }
        for (const id of this._windowSignals ?? [])
            this._window.disconnect(id);
        if (this._focusSignals) {
            for (const [object, id] of this._focusSignals.filter(([o]) => o === this._window))
                object.disconnect(id);
            this._focusSignals = this._focusSignals.filter(([o]) => o !== this._window);
        }
        this._hideOnLockScreen();
        this._windowSignals = null;
        this._window = null;
    }

    _monitorIndex() {
        const monitors = this._main.layoutManager.monitors;
        if (monitors.length === 0)
            return -1;
        return Hosting.chooseMonitor(this._settings.get_string('monitor'),
            this._main.layoutManager.primaryIndex, monitors.length);
    }

    /**
     * Where the island hangs: its monitor, that monitor's work area and the gap under it.
     *
     * @returns {object|null} {monitor, workArea, gap}, or null with no monitor
     */
    _area() {
        const index = this._monitorIndex();
        if (index < 0)
            return null;
        const layout = this._main.layoutManager;
        return {
            monitor: layout.monitors[index],
            workArea: layout.getWorkAreaForMonitor(index),
            gap: this._settings.get_uint('gap-below-panel'),
        };
    }

    _place() {
        const window = this._window;
        const area = this._area();
        if (!window || !area)
            return;
        const frame = window.get_frame_rect();
        if (frame.width === 0 || frame.height === 0)
            return;
        const {x, y} = Hosting.placement(area.monitor, area.workArea, frame, area.gap);
        if (frame.x !== x || frame.y !== y)
            window.move_frame(true, x, y);
    }
}
