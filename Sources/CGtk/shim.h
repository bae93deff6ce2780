#ifndef ISLAND_CGTK_SHIM_H
#define ISLAND_CGTK_SHIM_H
// GTK 3 and gtk-layer-shell in one module, so both name the same GtkWindow.
#include <gtk/gtk.h>
#include <gtk-layer-shell/gtk-layer-shell.h>
#include <glib-unix.h>
#ifdef GDK_WINDOWING_WAYLAND
#include <gdk/gdkwayland.h>
#endif
#ifdef GDK_WINDOWING_X11
#include <gdk/gdkx.h>
#endif

// g_signal_connect and the GTK_* casts are macros Swift cannot import.
static inline gulong island_signal_connect(gpointer instance, const char *signal, GCallback callback, gpointer data) {
    return g_signal_connect_data(instance, signal, callback, data, NULL, (GConnectFlags)0);
}
static inline GtkWindow *island_window(GtkWidget *widget) { return GTK_WINDOW(widget); }
static inline GtkContainer *island_container(GtkWidget *widget) { return GTK_CONTAINER(widget); }

static inline gboolean island_is_wayland(GdkDisplay *display) {
#ifdef GDK_WINDOWING_WAYLAND
    return GDK_IS_WAYLAND_DISPLAY(display);
#else
    return FALSE;
#endif
}
static inline gboolean island_is_x11(GdkDisplay *display) {
#ifdef GDK_WINDOWING_X11
    return GDK_IS_X11_DISPLAY(display);
#else
    return FALSE;
#endif
}

// gtk-enable-animations: the desktop's reduced-motion switch.
static inline gboolean island_animations_enabled(void) {
    gboolean enabled = TRUE;
    GtkSettings *settings = gtk_settings_get_default();
    if (settings) g_object_get(settings, "gtk-enable-animations", &enabled, NULL);
    return enabled;
}

// The event fields the overlay reads, without the union casts.
static inline void island_button_event(GdkEvent *event, double *x, double *y, guint *button, int *type) {
    GdkEventButton *b = (GdkEventButton *)event;
    *x = b->x; *y = b->y; *button = b->button; *type = b->type;
}
static inline void island_motion_event(GdkEvent *event, double *x, double *y) {
    GdkEventMotion *m = (GdkEventMotion *)event;
    *x = m->x; *y = m->y;
}
static inline guint island_key_event(GdkEvent *event) { return ((GdkEventKey *)event)->keyval; }
#endif
