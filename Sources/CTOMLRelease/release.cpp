#include "CTOMLRelease.h"
#include <new>

// toml++'s deleting destructor of `toml::table` (Itanium C++ ABI name of
// `toml::v3::table::~table()`, the "D0" variant: destroys the object and
// frees its memory, as `delete table;` would), linked from TOMLKit's CTOML
// objects, which emit it with the class's virtual table. `this` is its only
// argument. Declared by its mangled symbol on purpose: a TOMLKit built on
// another toml++ ABI namespace (v4) fails to link here rather than delete
// the wrong thing.
extern "C" void _ZN4toml2v35tableD0Ev(void *table);

extern "C" void qfs_toml_table_delete(void *table) {
    if (table) _ZN4toml2v35tableD0Ev(table);
}

// CTOML makes a date-time's offset with `new CTOMLTimeOffset`, a plain
// two-byte struct: what `delete` does for it is this.
extern "C" void qfs_toml_offset_delete(void *offset) {
    ::operator delete(offset);
}
