// The entry point for GNOME Shell 45 and later, which load an extension as an ES module whose
// default export is an Extension: the extension itself is island.js, shared with 43 and 44.

import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';

import {IslandHost} from './island.js';

export default class IslandExtension extends Extension {
    enable() {
        this._host = new IslandHost({Main, settings: this.getSettings()});
        this._host.enable();
    }

    disable() {
        this._host.disable();
        this._host = null;
    }
}
