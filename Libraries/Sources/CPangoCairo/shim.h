#ifndef ISLAND_CPANGOCAIRO_SHIM_H
#define ISLAND_CPANGOCAIRO_SHIM_H
// Off-screen drawing for island-overlay: cairo image and SVG surfaces and Pango text, no display;
// gdk-pixbuf's PNG and JPEG loaders for pictures (album art).
#include <cairo.h>
#include <cairo-svg.h>
#include <pango/pangocairo.h>
#include <gdk-pixbuf/gdk-pixbuf.h>

// PANGO_SCALE is a macro the importer sees; these keep the conversions in one place.
static inline int island_pango_units(double points) { return (int)(points * PANGO_SCALE); }
static inline double island_pango_points(int units) { return (double)units / PANGO_SCALE; }
#endif
