// The extension's decisions, kept free of the Shell's libraries so that plain `gjs` can test
// them (GNOMEShellExtension/tests/test_hosting.js): which monitor the island hangs on, where
// its window goes, what the overlay is told on its standard input, and how long to wait before
// starting it again. Geometry of the island itself is island-overlay's alone: the extension
// only places the overlay's whole window (its canvas), whose size the overlay chose.

const SIZES = ['small', 'medium', 'large'];

/**
 * The index of the monitor the island hangs on.
 *
 * @param {string} setting - the `monitor` key: 'primary' or a monitor's index as digits
 * @param {number} primaryIndex - the Shell's primary monitor
 * @param {number} monitorCount - how many monitors there are
 * @returns {number} an index below monitorCount (the primary one when the setting names none)
 */
export function chooseMonitor(setting, primaryIndex, monitorCount) {
    if (/^[0-9]{1,3}$/.test(setting)) {
        const index = Number(setting);
        if (index < monitorCount)
            return index;
    }
    return primaryIndex;
}

/**
 * Where the overlay's window goes, in stage coordinates: centred on the monitor, its top edge
 * `gap` below the top of the monitor's work area. The work area's top is the bottom of the
 * top bar (and of anything else holding a strut there), so the island hangs under the bar and
 * never covers the clock, the indicators or another extension's items.
 *
 * @param {object} monitor - {x, y, width, height} of the monitor
 * @param {object} workArea - {x, y, width, height} of that monitor's work area
 * @param {object} canvas - {width, height} of the overlay's window
 * @param {number} gap - pixels between the work area's top and the window
 * @returns {object} {x, y} of the window's top-left corner
 */
export function placement(monitor, workArea, canvas, gap) {
    const spare = Math.max(0, monitor.width - canvas.width);
    const below = Math.min(Math.max(workArea.y, monitor.y), monitor.y + monitor.height);
    return {
        x: monitor.x + Math.floor(spare / 2),
        y: below + Math.max(0, Math.floor(gap)),
    };
}

/**
 * How tall the overlay's window may be: from where `placement` puts its top to the bottom of
 * the work area, so that the list under the island ends on screen.
 *
 * @param {object} monitor - {x, y, width, height} of the monitor
 * @param {object} workArea - {x, y, width, height} of that monitor's work area
 * @param {number} gap - pixels between the work area's top and the window
 * @returns {number} the height in pixels, at least 1
 */
export function roomBelow(monitor, workArea, gap) {
    const top = placement(monitor, workArea, {width: 0, height: 0}, gap).y;
    const bottom = Math.min(workArea.y + workArea.height, monitor.y + monitor.height);
    return Math.max(1, Math.floor(bottom - top));
}

/**
 * The overlay's arguments after its path.
 *
 * @param {string} size - the `size` key
 * @param {number} maxHeight - the room below the bar (`roomBelow`)
 * @returns {string[]} the arguments
 */
export function overlayArguments(size, maxHeight) {
    return ['--hosted', '--size', SIZES.includes(size) ? size : 'medium', '--max-height', String(overlayRoom(maxHeight))];
}

// What the overlay takes for its window's height (its --max-height and the `room` member).
export const ROOM_RANGE = [100, 20000];

/**
 * The room below the bar (`roomBelow`) as the overlay takes it: within ROOM_RANGE, which the
 * overlay requires (a line with a room outside it is refused whole).
 *
 * @param {number} room - pixels below the bar
 * @returns {number} a whole number of pixels within ROOM_RANGE
 */
export function overlayRoom(room) {
    return Math.min(ROOM_RANGE[1], Math.max(ROOM_RANGE[0], Math.floor(room)));
}

/**
 * One line for the overlay's standard input: the whole state, so that the latest line alone
 * is enough and lines not yet written can be dropped for a newer one.
 *
 * @param {boolean} fullscreen - a fullscreen window is on the island's monitor
 * @param {boolean} alerts - the desktop shows banners (Do Not Disturb is off)
 * @param {string} overFullscreen - the `show-over-fullscreen` key
 * @param {boolean} locked - the session is locked: the overlay shows the lock-screen list
 * @param {number|null} room - the room below the bar on the island's monitor (`roomBelow`),
 *   for the overlay to fit its window as monitors change; null: not said
 * @returns {string} a JSON object and a newline
 */
export function stateLine(fullscreen, alerts, overFullscreen, locked = false, room = null) {
    const hidden = fullscreen && overFullscreen !== 'always';
    const state = {fullscreen: hidden, alerts, locked: Boolean(locked)};
    if (room !== null)
        state.room = overlayRoom(room);
    return `${JSON.stringify(state)}\n`;
}

/**
 * Where the overlay's window goes on the lock screen, in stage coordinates: centred on the
 * monitor, its top edge `gap` below `top`, the bottom of the unlock dialog's clock.
 *
 * @param {object} monitor - {x, y, width, height} of the monitor
 * @param {number} top - the clock's bottom edge
 * @param {number} width - the overlay's window's width
 * @param {number} gap - pixels between the clock and the window
 * @returns {object} {x, y} of the window's top-left corner
 */
export function lockScreenPlacement(monitor, top, width, gap) {
    const spare = Math.max(0, monitor.width - width);
    const y = Math.min(Math.max(Math.floor(top), monitor.y), monitor.y + monitor.height);
    return {x: monitor.x + Math.floor(spare / 2), y: y + Math.max(0, Math.floor(gap))};
}


// An overlay that ran this long before it exited was working: the next failure starts the
// backoff afresh.
export const STABLE_RUN_SECONDS = 60;
// The overlay is started again at most this many times in a row when each run ended within
// STABLE_RUN_SECONDS of its start; the failure after that is the last: the extension says so.
export const MAX_QUICK_RESTARTS = 6;

/**
 * Seconds to wait before starting the overlay again after it exited unexpectedly.
 *
 * @param {number} failures - failures in a row so far, this one included (1 or more)
 * @returns {number|null} the delay (1, 2, 4, … at most 30), or null to stop trying
 */
export function restartDelay(failures) {
    if (failures > MAX_QUICK_RESTARTS)
        return null;
    return Math.min(30, 2 ** Math.max(0, failures - 1));
}

// The longest line the overlay writes to the extension that is read; a longer one is dropped.
export const MAX_OVERLAY_LINE = 4096;

/**
 * What the overlay wrote on its standard output so far, cut into lines: `pending` is the
 * unfinished line kept from before (null: a line too long is being skipped to its end).
 *
 * @param {string|null} pending - the unfinished line from the last call
 * @param {string} text - what was read now
 * @returns {{lines: string[], pending: string|null}} the whole lines, and what is left
 */
export function overlayLines(pending, text) {
    const parts = text.split('\n');
    let current = pending;
    const lines = [];
    parts.forEach((part, index) => {
        if (current !== null)
            current += part;
        if (current !== null && current.length > MAX_OVERLAY_LINE)
            current = null;
        if (index < parts.length - 1) {
            if (current)
                lines.push(current);
            current = '';
        }
    });
    return {lines, pending: current};
}

/**
 * Whether a line of the overlay asks to wake the screen: `{"wake": true}`, which it writes when
 * islandd sends an alert while the session is locked.
 *
 * @param {string} line - one line
 * @returns {boolean} true for a wake
 */
export function asksWake(line) {
    try {
        return JSON.parse(line)?.wake === true;
    } catch (e) {
        return false;
    }
}
