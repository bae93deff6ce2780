// An ordinary X11 window for the overlay's i3 test (desktop.I3): a GTK 3 client in one flat
// colour (ARGV[0], #rrggbb), titled "Island X11 test window", which i3 tiles, and makes
// fullscreen when asked (i3-msg). Run with gjs as the test user, GDK_BACKEND=x11.
imports.gi.versions.Gtk = '3.0';
imports.gi.versions.Gdk = '3.0';
const {Gdk, Gtk} = imports.gi;

Gtk.init(null);
const css = new Gtk.CssProvider();
css.load_from_data(`window { background: ${ARGV[0] || '#203040'}; }`);
Gtk.StyleContext.add_provider_for_screen(Gdk.Screen.get_default(), css, Gtk.STYLE_PROVIDER_PRIORITY_USER);
const window = new Gtk.Window({title: 'Island X11 test window'});
window.connect('destroy', () => Gtk.main_quit());
window.show_all();
Gtk.main();
