#ifndef ISLAND_CSQLITE_SHIM_H
#define ISLAND_CSQLITE_SHIM_H
#include <sqlite3.h>

/// `sqlite3_config` is variadic, which Swift cannot call: its options one by one.
static inline int island_sqlite3_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
#endif
