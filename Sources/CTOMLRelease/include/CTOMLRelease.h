#ifndef CTOML_RELEASE_H
#define CTOML_RELEASE_H

#ifdef __cplusplus
extern "C" {
#endif

/// Deletes a `toml::table` that CTOML (TOMLKit's C interface) allocated
/// with `new`, such as the root `tableCreateFromString` returns: what
/// `delete table;` does in C++. TOMLKit 0.6.0 offers no call for it, so
/// every parse would leak its root (see TOMLFrontMatter.swift).
void qfs_toml_table_delete(void *table);

/// Deletes the offset of a date-time `nodeAsDateTime` returned (C++ `new`).
void qfs_toml_offset_delete(void *offset);

#ifdef __cplusplus
}
#endif

#endif
