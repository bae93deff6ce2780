#ifndef ISLAND_CSQLITE_SHIM_H
#define ISLAND_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
