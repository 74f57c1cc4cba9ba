#ifndef QUERYFS_CEXPAT_SHIM_H
#define QUERYFS_CEXPAT_SHIM_H

// Expat, for XMP sidecars (RDF/XML). Standalone (no ICU headers, which
// clash with Foundation's in one module graph), and in every Swift setup on
// Debian (libpython3-dev, which Swift needs, brings libexpat1-dev).
#include <expat.h>

#endif
