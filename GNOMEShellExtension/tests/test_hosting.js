// The extension's pure decisions (island/hosting.js), with plain gjs, which has no Shell
// typelibs: `gjs -m tests/test_hosting.js` exits non-zero if one fails. Run by
// GNOMEShellExtension/check.sh.

import System from 'system';

import * as Hosting from '../island/hosting.js';

let failures = 0;

/**
 * Compares two values as JSON and reports the difference.
 *
 * @param {string} name - what is checked
 * @param {*} actual - the value seen
 * @param {*} expected - the value wanted
 */
function check(name, actual, expected) {
    const a = JSON.stringify(actual), e = JSON.stringify(expected);
    if (a === e) {
        print(`ok - ${name}`);
    } else {
        print(`not ok - ${name}: got ${a}, want ${e}`);
        failures++;
    }
}

const monitor = {x: 0, y: 0, width: 1280, height: 800};
const second = {x: 1280, y: 0, width: 1920, height: 1080};
const canvas = {width: 480, height: 220};

check('centred on the monitor, its top the work area top plus the gap',
    Hosting.placement(monitor, {x: 0, y: 32, width: 1280, height: 768}, canvas, 6), {x: 400, y: 38});
check('on a monitor to the right, in stage coordinates',
    Hosting.placement(second, {x: 1280, y: 0, width: 1920, height: 1080}, canvas, 0), {x: 1280 + 720, y: 0});
check('an odd spare width rounds down',
    Hosting.placement({x: 0, y: 0, width: 1281, height: 800}, {x: 0, y: 32, width: 1281, height: 768}, canvas, 0).x, 400);
check('a canvas wider than the monitor starts at its left edge',
    Hosting.placement({x: 100, y: 0, width: 300, height: 800}, {x: 100, y: 0, width: 300, height: 800}, canvas, 0).x, 100);
check('a work area reaching above the monitor counts from the monitor top',
    Hosting.placement({x: 0, y: 100, width: 1280, height: 800}, {x: 0, y: 0, width: 1280, height: 900}, canvas, 4).y, 104);
check('a negative or fractional gap',
    [Hosting.placement(monitor, monitor, canvas, -5).y, Hosting.placement(monitor, monitor, canvas, 2.7).y], [0, 2]);

check('primary by default', Hosting.chooseMonitor('primary', 1, 2), 1);
check('a connected index', Hosting.chooseMonitor('0', 1, 2), 0);
check('an index not connected falls back to the primary', Hosting.chooseMonitor('2', 1, 2), 1);
check('anything else falls back to the primary',
    ['', '-1', '1.5', ' 0', 'HDMI-1', '99999'].map(s => Hosting.chooseMonitor(s, 0, 3)), [0, 0, 0, 0, 0, 0]);

check('the arguments', Hosting.overlayArguments('large', 682), ['--hosted', '--size', 'large', '--max-height', '682']);
check('an unknown size is medium', Hosting.overlayArguments('huge', 682)[2], 'medium');

check('the room below: from under the bar and the gap to the work area\'s bottom',
    Hosting.roomBelow({x: 0, y: 0, width: 1280, height: 720}, {x: 0, y: 32, width: 1280, height: 688}, 6), 682);
check('a work area reaching past the monitor ends at the monitor',
    Hosting.roomBelow({x: 0, y: 100, width: 1280, height: 720}, {x: 0, y: 0, width: 1280, height: 1000}, 0), 720);
check('never less than a pixel', Hosting.roomBelow(monitor, {x: 0, y: 800, width: 1280, height: 0}, 50), 1);

check('the state line, one JSON object with its newline',
    Hosting.stateLine(false, true, 'alerts'), '{"fullscreen":false,"alerts":true,"locked":false}\n');
check('fullscreen with alerts only over it',
    JSON.parse(Hosting.stateLine(true, false, 'alerts')), {fullscreen: true, alerts: false, locked: false});
check('fullscreen, always shown: the overlay is not told',
    JSON.parse(Hosting.stateLine(true, true, 'always')), {fullscreen: false, alerts: true, locked: false});
check('locked: the overlay shows the lock-screen list',
    JSON.parse(Hosting.stateLine(false, true, 'alerts', true)), {fullscreen: false, alerts: true, locked: true});
check('the room under the bar, said again as monitors change',
    JSON.parse(Hosting.stateLine(false, true, 'alerts', false, 682.5)), {fullscreen: false, alerts: true, locked: false, room: 682});
check('a room the overlay would refuse is brought within its range',
    [Hosting.stateLine(false, true, 'alerts', false, 1), Hosting.stateLine(false, true, 'alerts', false, 1e6)].map(l => JSON.parse(l).room),
    [100, 20000]);
check('so is the room it starts with',
    Hosting.overlayArguments('small', 40), ['--hosted', '--size', 'small', '--max-height', '100']);

check('on the lock screen, centred under the clock by the gap',
    Hosting.lockScreenPlacement(monitor, 300.6, 480, 6), {x: 400, y: 306});
check('a clock off the monitor keeps the window on it',
    Hosting.lockScreenPlacement({x: 1280, y: 0, width: 1280, height: 720}, 5000, 2000, 0), {x: 1280, y: 720});

check('backoff doubles from one second up to thirty',
    [1, 2, 3, 4, 5, 6].map(Hosting.restartDelay), [1, 2, 4, 8, 16, 30]);
check('and gives up after MAX_QUICK_RESTARTS restarts',
    [Hosting.restartDelay(Hosting.MAX_QUICK_RESTARTS), Hosting.restartDelay(Hosting.MAX_QUICK_RESTARTS + 1)], [30, null]);

check('the overlay\'s output cut into lines, the unfinished one kept',
    Hosting.overlayLines('', '{"wake": true}\n{"wa'), {lines: ['{"wake": true}'], pending: '{"wa'});
check('and finished by the next read',
    Hosting.overlayLines('{"wa', 'ke": true}\n'), {lines: ['{"wake": true}'], pending: ''});
const long = 'x'.repeat(Hosting.MAX_OVERLAY_LINE + 1);
check('a line too long is dropped, to its end',
    Hosting.overlayLines('', `${long}`), {lines: [], pending: null});
check('and what follows it is read',
    Hosting.overlayLines(null, 'more\n{"wake": true}\n'), {lines: ['{"wake": true}'], pending: ''});
check('a wake is {"wake": true} and nothing else',
    ['{"wake": true}', '{"wake": 1}', '{"wake": "true"}', 'wake', '[true]', 'null'].map(Hosting.asksWake),
    [true, false, false, false, false, false]);

if (failures)
    System.exit(1);
