// The preferences' entry point for GNOME Shell 43 and 44 (the `imports` format): the page is
// filled by the ES module preferences.js, shared with 45 and later, loaded with import(). The
// page itself is added at once: 43 refuses a window that has none when this function returns.
/* exported init, fillPreferencesWindow */

const {Adw} = imports.gi;
const ExtensionUtils = imports.misc.extensionUtils;

/**
 * Called once before the window is filled; nothing to prepare.
 */
function init() {
}

/**
 * Gives the window its page, filled once preferences.js is loaded.
 *
 * @param {Adw.PreferencesWindow} window - the window gnome-extensions-app made
 */
function fillPreferencesWindow(window) {
    const settings = ExtensionUtils.getSettings();
    const page = new Adw.PreferencesPage();
    window.add(page);
    const module = ExtensionUtils.getCurrentExtension().dir.get_child('preferences.js').get_uri();
    import(module).then(preferences => preferences.fillPage(page, settings))
        .catch(e => logError(e, 'Island: cannot load preferences.js'));
}
