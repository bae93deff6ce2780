#ifndef ISLAND_WAYLAND_PROTOCOLS_H
#define ISLAND_WAYLAND_PROTOCOLS_H
// Written by hand (the rest of include/ is wayland-scanner's): binding a global needs the
// address of its interface table, which Swift can only copy, never point to.
#include "wlr-foreign-toplevel-management-unstable-v1-client-protocol.h"
#include "xdg-output-unstable-v1-client-protocol.h"
#include "kde-lockscreen-overlay-v1-client-protocol.h"

static inline struct zwlr_foreign_toplevel_manager_v1 *
island_bind_foreign_toplevel_manager(struct wl_registry *registry, uint32_t name, uint32_t version) {
    return wl_registry_bind(registry, name, &zwlr_foreign_toplevel_manager_v1_interface, version);
}
static inline struct zxdg_output_manager_v1 *
island_bind_xdg_output_manager(struct wl_registry *registry, uint32_t name, uint32_t version) {
    return wl_registry_bind(registry, name, &zxdg_output_manager_v1_interface, version);
}
static inline struct kde_lockscreen_overlay_v1 *
island_bind_lockscreen_overlay(struct wl_registry *registry, uint32_t name, uint32_t version) {
    return wl_registry_bind(registry, name, &kde_lockscreen_overlay_v1_interface, version);
}
#endif
