// GDM's one property the Shell reads before it offers a lock screen: org.gnome.DisplayManager's
// Manager.Version on the system bus (the Shell's misc/loginManager.js canLock(): GDM 3.5.91 or
// later, and systemd's /run/systemd/seats). Served on the harness's private system bus, so that
// the nested Shell builds its screen shield and org.gnome.ScreenSaver can lock it. Nothing else
// of GDM is here: no greeter, no authentication.
const {Gio, GLib} = imports.gi;

const IFACE = `<node><interface name="org.gnome.DisplayManager.Manager">
  <property name="Version" type="s" access="read"/>
</interface></node>`;

const loop = new GLib.MainLoop(null, false);
const manager = {Version: '43.0'};
const exported = Gio.DBusExportedObject.wrapJSObject(IFACE, manager);
Gio.bus_own_name(Gio.BusType.SYSTEM, 'org.gnome.DisplayManager', Gio.BusNameOwnerFlags.NONE,
    connection => exported.export(connection, '/org/gnome/DisplayManager/Manager'),
    () => print('display-manager: ready'),
    () => loop.quit());
loop.run();
