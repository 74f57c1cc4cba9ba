#ifndef QUERYFS_CFUSE_SHIM_H
#define QUERYFS_CFUSE_SHIM_H

// libfuse 3.14 low-level API. _FILE_OFFSET_BITS is deliberately not defined:
// on 64-bit glibc off_t is already 64 bits, and defining it conflicts with
// the Glibc module Swift imports.
#define FUSE_USE_VERSION 314
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <fuse_lowlevel.h>
#include <fuse_opt.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <dirent.h>
#include <unistd.h>
#include <errno.h>

#endif
