// The entry point for GNOME Shell 43 and 44, which load an extension in the `imports` format.
// The extension itself is the ES module island.js, shared with 45 and later: it is loaded with
// import() (GJS 1.74 and later have it in scripts too) and given the Shell's Main and the
// extension's settings. Nothing is made before enable().
/* exported init */

const ExtensionUtils = imports.misc.extensionUtils;
const Main = imports.ui.main;

class IslandExtension {
    enable() {
        this._enabled = true;
        const module = ExtensionUtils.getCurrentExtension().dir.get_child('island.js').get_uri();
        import(module).then(({IslandHost}) => {
            // disable(), or a second enable(), may have come while the module loaded.
            if (!this._enabled || this._host)
                return;
            this._host = new IslandHost({Main, settings: ExtensionUtils.getSettings()});
            this._host.enable();
        }).catch(e => logError(e, 'Island: cannot load island.js'));
    }

    disable() {
        this._enabled = false;
        if (this._host)
            this._host.disable();
        this._host = null;
    }
}

/**
 * The extension's object; nothing is made before enable().
 *
 * @returns {IslandExtension} the extension
 */
function init() {
    return new IslandExtension();
}
