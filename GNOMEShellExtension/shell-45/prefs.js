// The preferences' entry point for GNOME Shell 45 and later (ES modules): the window is filled
// by preferences.js, shared with 43 and 44.

import {ExtensionPreferences} from 'resource:///org/gnome/Shell/Extensions/js/extensions/prefs.js';

import {fillPreferencesWindow} from './preferences.js';

export default class IslandPreferences extends ExtensionPreferences {
    fillPreferencesWindow(window) {
        fillPreferencesWindow(window, this.getSettings());
    }
}
