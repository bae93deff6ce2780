// A fullscreen window for the GNOME Shell tests (harness/gnome.py): a GTK 3 Wayland client of
// the nested Shell, one flat colour (FULLSCREEN_COLOUR in gnome.py), fullscreen until it is
// stopped; it says on standard error when it gets the keyboard focus. Run with gjs as the
// test user.
imports.gi.versions.Gtk = '3.0';
imports.gi.versions.Gdk = '3.0';
const {Gdk, Gtk} = imports.gi;

Gtk.init(null);
const css = new Gtk.CssProvider();
css.load_from_data('window { background: #30a050; }');
Gtk.StyleContext.add_provider_for_screen(Gdk.Screen.get_default(), css, Gtk.STYLE_PROVIDER_PRIORITY_USER);
const window = new Gtk.Window({title: 'Fullscreen test window'});
window.connect('destroy', () => Gtk.main_quit());
window.connect('focus-in-event', () => {
    printerr('fullscreen window: focus in');
    return false;
});
window.fullscreen();
window.show_all();
Gtk.main();
