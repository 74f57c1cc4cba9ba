#include "CTOMLRelease.h"

// toml++'s deleting destructor of `toml::table` (Itanium C++ ABI name:
// `toml::v3::table::~table()`, the "D0" variant that destroys the object
// and frees its memory), linked from TOMLKit's CTOML objects, which emit
// it with the class's virtual table. `this` is the only argument, passed
// as a C function's first argument is. Named by its mangled symbol on
// purpose: a TOMLKit built on another toml++ ABI namespace (v4) fails to
// link here instead of deleting the wrong thing.
extern void _ZN4toml2v35tableD0Ev(void *table);

void qfs_toml_table_delete(void *table) {
    if (table) _ZN4toml2v35tableD0Ev(table);
}
