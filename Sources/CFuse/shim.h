#ifndef QUERYFS_CFUSE_SHIM_H
#define QUERYFS_CFUSE_SHIM_H

// libfuse 3.14 low-level API. Neither _FILE_OFFSET_BITS nor _GNU_SOURCE is
// defined here: on 64-bit glibc off_t is already 64 bits, and either macro
// changes system structures (fd_set's fields) so that they no longer match
// the Glibc module Swift imports, which breaks every file importing both.
// The GNU-only constants queryfs needs come from CSystemShims instead.
#define FUSE_USE_VERSION 314

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
#include <stdlib.h>

// Wrappers for what Swift cannot call directly: macros (FUSE_ARGS_INIT,
// FUSE_BUFVEC_INIT, fuse_session_loop_mt) and by-value struct setup.

/// fuse_session_new with arguments given as an argv array.
static inline struct fuse_session *qfs_session_new(int argc, char **argv,
        const struct fuse_lowlevel_ops *ops, void *userdata) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_session *se = fuse_session_new(&args, ops, sizeof(*ops), userdata);
    fuse_opt_free_args(&args);
    return se;
}

/// The multi-threaded session loop, with up to `max_threads` workers.
static inline int qfs_session_loop_mt(struct fuse_session *se, unsigned max_threads) {
    struct fuse_loop_config *config = fuse_loop_cfg_create();
    if (config == NULL) return -ENOMEM;
    fuse_loop_cfg_set_clone_fd(config, 0);
    fuse_loop_cfg_set_max_threads(config, max_threads);
    fuse_loop_cfg_set_idle_threads(config, max_threads);
    int result = fuse_session_loop_mt(se, config);
    fuse_loop_cfg_destroy(config);
    return result;
}

/// Replies to a read with `size` bytes of `fd` at `offset`, spliced by the
/// kernel where it can: the data never passes through the daemon's memory.
static inline int qfs_reply_data_from_fd(fuse_req_t req, int fd, size_t size, off_t offset) {
    struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
    buf.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    buf.buf[0].fd = fd;
    buf.buf[0].pos = offset;
    return fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

/// Copies a write request's data into `fd` at `offset` (splice when possible).
static inline ssize_t qfs_write_buf_to_fd(struct fuse_bufvec *in, int fd, off_t offset) {
    struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in));
    out.buf[0].flags = (enum fuse_buf_flags)(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    out.buf[0].fd = fd;
    out.buf[0].pos = offset;
    return fuse_buf_copy(&out, in, 0);
}

/// Asks for a capability if the kernel offers it; returns whether it did.
static inline int qfs_want(struct fuse_conn_info *conn, unsigned capability) {
    if (conn->capable & capability) {
        conn->want |= capability;
        return 1;
    }
    return 0;
}

static inline void qfs_unwant(struct fuse_conn_info *conn, unsigned capability) {
    conn->want &= ~capability;
}

/// fuse_file_info bit fields, set from Swift.
static inline void qfs_file_info_set(struct fuse_file_info *fi, int direct_io, int keep_cache, int cache_readdir) {
    fi->direct_io = direct_io;
    fi->keep_cache = keep_cache;
    fi->cache_readdir = cache_readdir;
}

/// FOPEN_NOFLUSH: no FLUSH request at this file's closes (Linux 5.16+; older kernels ignore it).
static inline void qfs_file_info_set_noflush(struct fuse_file_info *fi, int noflush) { fi->noflush = noflush; }

static inline int qfs_file_info_flock_release(const struct fuse_file_info *fi) { return fi->flock_release; }

#endif
