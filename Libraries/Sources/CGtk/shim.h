#ifndef ISLAND_CGTK_SHIM_H
#define ISLAND_CGTK_SHIM_H
// GTK 3 and gtk-layer-shell in one module, so both name the same GtkWindow.
#include <gtk/gtk.h>
#include <gtk/gtk-a11y.h>
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

// Accessible regions: the drawing area's accessible (a GtkWidgetAccessible subtype) has one
// child AtkObject per region of the island, named and given a role, so a screen reader lists
// "Island: Coffee 7 min", the buttons, "Dismiss …".
// Looked up by name, not kept in a static: each Swift file that calls these gets its own copy
// of a header's statics.
static GQuark island_regions_quark(void) { return g_quark_from_static_string("island-regions"); }
static gint island_regions_n_children(AtkObject *object) {
    GPtrArray *children = g_object_get_qdata(G_OBJECT(object), island_regions_quark());
    return children ? (gint)children->len : 0;
}
static AtkObject *island_regions_ref_child(AtkObject *object, gint index) {
    GPtrArray *children = g_object_get_qdata(G_OBJECT(object), island_regions_quark());
    if (!children || index < 0 || (guint)index >= children->len) return NULL;
    return g_object_ref(g_ptr_array_index(children, index));
}
static void island_regions_class_init(gpointer klass, gpointer data) {
    (void)data;
    ATK_OBJECT_CLASS(klass)->get_n_children = island_regions_n_children;
    ATK_OBJECT_CLASS(klass)->ref_child = island_regions_ref_child;
}
/// Call on the drawing area before anything asks for its accessible.
static inline void island_accessible_install(GtkWidget *area) {
    GType type = g_type_from_name("IslandRegionsAccessible");
    if (!type) {
        GTypeQuery query;
        g_type_query(GTK_TYPE_WIDGET_ACCESSIBLE, &query);
        type = g_type_register_static_simple(
            GTK_TYPE_WIDGET_ACCESSIBLE, "IslandRegionsAccessible", query.class_size, island_regions_class_init,
            query.instance_size, NULL, (GTypeFlags)0);
    }
    gtk_widget_class_set_accessible_type(GTK_WIDGET_GET_CLASS(area), type);
}
/// Replaces the region children: `count` names, each with an AtkRole.
static inline void island_accessible_set_regions(GtkWidget *area, const char *const *names, const int *roles, int count) {
    GType type = g_type_from_name("IslandRegionsAccessible");
    AtkObject *parent = gtk_widget_get_accessible(area);
    if (!parent || !type || !G_TYPE_CHECK_INSTANCE_TYPE(parent, type)) return;
    GPtrArray *children = g_ptr_array_new_with_free_func(g_object_unref);
    for (int i = 0; i < count; i++) {
        AtkObject *child = g_object_new(ATK_TYPE_OBJECT, NULL);
        atk_object_set_name(child, names[i]);
        atk_object_set_role(child, (AtkRole)roles[i]);
        atk_object_set_parent(child, parent);
        g_ptr_array_add(children, child);
    }
    g_object_set_qdata_full(G_OBJECT(parent), island_regions_quark(), children, (GDestroyNotify)g_ptr_array_unref);
    g_signal_emit_by_name(parent, "visible-data-changed");
}
#endif
