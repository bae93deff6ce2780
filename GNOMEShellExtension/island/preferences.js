// The extension's preferences window (gnome-extensions-app and `gnome-extensions prefs` host it
// with Gtk 4 and libadwaita): which monitor, the island's size, the gap under the top bar and
// what shows over fullscreen windows, each bound to the extension's GSettings schema.
// The same on every release: the entry points (shell-43/prefs.js, shell-45/prefs.js) hand it
// the window and the settings.

import Adw from 'gi://Adw';
import Gdk from 'gi://Gdk?version=4.0';
import Gio from 'gi://Gio';
import Gtk from 'gi://Gtk?version=4.0';

const SIZES = [['small', 'Small'], ['medium', 'Medium'], ['large', 'Large']];
const OVER_FULLSCREEN = [['alerts', 'Only alerts'], ['always', 'The island as usual']];

/**
 * A row choosing one of `choices` ([value, label]) for a string key.
 *
 * @param {Gio.Settings} settings - the extension's settings
 * @param {string} key - the key the row sets
 * @param {string} title - the row's title
 * @param {string} subtitle - the row's explanation
 * @param {string[][]} choices - the values and their labels
 * @returns {Adw.ComboRow} the row
 */
function choiceRow(settings, key, title, subtitle, choices) {
    const row = new Adw.ComboRow({
        title,
        subtitle,
        model: Gtk.StringList.new(choices.map(([, label]) => label)),
    });
    const sync = () => {
        const index = choices.findIndex(([value]) => value === settings.get_string(key));
        row.selected = Math.max(0, index);
    };
    sync();
    const id = settings.connect(`changed::${key}`, sync);
    row.connect('notify::selected', () => {
        const [value] = choices[row.selected] ?? choices[0];
        if (settings.get_string(key) !== value)
            settings.set_string(key, value);
    });
    row.connect('destroy', () => settings.disconnect(id));
    return row;
}

/**
 * The monitors to choose from: the primary one, then each connected monitor by its index.
 *
 * @returns {string[][]} the values of the monitor key and their labels
 */
function monitorChoices() {
    const choices = [['primary', 'The primary monitor']];
    const monitors = Gdk.Display.get_default()?.get_monitors();
    for (let i = 0; i < (monitors?.get_n_items() ?? 0); i++) {
        const monitor = monitors.get_item(i);
        const name = [monitor.manufacturer, monitor.model].filter(Boolean).join(' ') || monitor.connector || 'Monitor';
        choices.push([String(i), `${i + 1}: ${name}`]);
    }
    return choices;
}

/**
 * Fills the preferences window.
 *
 * @param {Adw.PreferencesWindow} window - the window gnome-extensions-app made
 * @param {Gio.Settings} settings - the extension's settings
 */
export function fillPreferencesWindow(window, settings) {
    const page = new Adw.PreferencesPage();
    fillPage(page, settings);
    window.add(page);
}

/**
 * Fills the page of the preferences window (43 and 44 add the page before this module loads).
 *
 * @param {Adw.PreferencesPage} page - the window's page
 * @param {Gio.Settings} settings - the extension's settings
 */
export function fillPage(page, settings) {
    const group = new Adw.PreferencesGroup({
        title: 'The island',
        description: 'It hangs at the top centre, just under the top bar, drawn by island-overlay.',
    });
    page.add(group);

    const monitors = monitorChoices();
    if (!monitors.some(([value]) => value === settings.get_string('monitor')))
        monitors.push([settings.get_string('monitor'), `${settings.get_string('monitor')} (not connected: the primary)`]);
    group.add(choiceRow(settings, 'monitor', 'Monitor', 'Where the island hangs', monitors));
    group.add(choiceRow(settings, 'size', 'Size', 'The island restarts in the new size', SIZES));

    const gap = new Gtk.SpinButton({
        adjustment: new Gtk.Adjustment({lower: 0, upper: 200, step_increment: 1, page_increment: 10}),
        valign: Gtk.Align.CENTER,
    });
    settings.bind('gap-below-panel', gap, 'value', Gio.SettingsBindFlags.DEFAULT);
    const gapRow = new Adw.ActionRow({title: 'Gap below the top bar', subtitle: 'In pixels'});
    gapRow.add_suffix(gap);
    gapRow.activatable_widget = gap;
    group.add(gapRow);

    group.add(choiceRow(settings, 'show-over-fullscreen', 'Over fullscreen windows',
        'What shows while a fullscreen window is on the island’s monitor', OVER_FULLSCREEN));
}
