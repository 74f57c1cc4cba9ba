// FUSE passthrough for libfuse 3.14, which predates it (libfuse 3.17 has it
// built in). Three things make a file passthrough, all at the kernel
// protocol level (linux/fuse.h, protocol 7.40):
//   1. the INIT reply carries FUSE_PASSTHROUGH and a max_stack_depth;
//   2. the daemon registers an open file with FUSE_DEV_IOC_BACKING_OPEN on
//      /dev/fuse, which returns a backing id;
//   3. the open (or create) reply carries FOPEN_PASSTHROUGH and that id.
// libfuse builds the INIT and open replies itself, so they are amended here,
// on their way to /dev/fuse, in the custom I/O functions libfuse sends
// through. Every other message passes untouched.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "CSystemShims.h"

// From linux/fuse.h 7.40; Debian 12's headers (Linux 6.1) have none of it.
enum {
    KERNEL_FUSE_INIT = 26,
    KERNEL_FUSE_INIT_EXT = 1u << 30,
    KERNEL_FUSE_PASSTHROUGH_FLAGS2 = 1u << (37 - 32),
    KERNEL_FOPEN_PASSTHROUGH = 1u << 7,
    KERNEL_FUSE_HANDLE_KILLPRIV = 1u << 19,
};

struct kernel_in_header { uint32_t len, opcode; uint64_t unique, nodeid; uint32_t uid, gid, pid; uint16_t total_extlen, padding; };
struct kernel_out_header { uint32_t len; int32_t error; uint64_t unique; };
struct kernel_init_in { uint32_t major, minor, max_readahead, flags, flags2, unused[11]; };
struct kernel_init_out {
    uint32_t major, minor, max_readahead, flags;
    uint16_t max_background, congestion_threshold;
    uint32_t max_write, time_gran;
    uint16_t max_pages, map_alignment;
    uint32_t flags2, max_stack_depth;
    uint32_t unused[6];
};
struct kernel_open_out { uint64_t fh; uint32_t open_flags; int32_t backing_id; };
struct kernel_backing_map { int32_t fd; uint32_t flags; uint64_t padding; };

#define KERNEL_FUSE_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct kernel_backing_map)
#define KERNEL_FUSE_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)

static int stack_depth = 1;
/// Whether the mount asks for passthrough at all (--no-passthrough: no).
static atomic_int passthrough_wanted;
/// Requests received, by opcode (every FUSE opcode is below 64; CUSE_INIT
/// and anything newer land in the last slot). Relaxed: a diagnostic.
static _Atomic uint64_t request_counts[64];
/// The INIT request's id while its reply is pending; 0 otherwise.
static _Atomic uint64_t init_unique;
static atomic_int kernel_offers_passthrough;
/// Whether the kernel offered FUSE_HANDLE_KILLPRIV in INIT (see qfs_io_writev).
static atomic_int kernel_offers_killpriv;
static atomic_int passthrough_enabled;
static __thread int next_open_backing_id;

void qfs_passthrough_configure(const char *backing_path, int wanted) {
    atomic_store(&passthrough_wanted, wanted);
    struct statfs info;
    int stacked = statfs(backing_path, &info) == 0 &&
        (info.f_type == 0x794c7630 /* overlayfs */ || info.f_type == 0xf15f /* ecryptfs */ ||
         info.f_type == 0x65735546 /* fuse */);
    stack_depth = stacked ? 2 : 1;
}

int qfs_passthrough_enabled(void) { return atomic_load(&passthrough_enabled); }

uint64_t qfs_request_count(uint32_t opcode) {
    return atomic_load_explicit(&request_counts[opcode < 64 ? opcode : 63], memory_order_relaxed);
}

ssize_t qfs_io_read(int fd, void *buffer, size_t length, void *userdata) {
    (void)userdata;
    ssize_t n = read(fd, buffer, length);
    if (n >= (ssize_t)sizeof(struct kernel_in_header)) {
        uint32_t opcode = ((const struct kernel_in_header *)buffer)->opcode;
        atomic_fetch_add_explicit(&request_counts[opcode < 64 ? opcode : 63], 1, memory_order_relaxed);
    }
    // INIT always arrives through read(): libfuse splices only after INIT.
    if (n >= (ssize_t)(sizeof(struct kernel_in_header) + sizeof(struct kernel_init_in))) {
        const struct kernel_in_header *header = buffer;
        if (header->opcode == KERNEL_FUSE_INIT) {
            const struct kernel_init_in *init = (const void *)(header + 1);
            int offered = atomic_load(&passthrough_wanted) && (init->flags & KERNEL_FUSE_INIT_EXT) && (init->flags2 & KERNEL_FUSE_PASSTHROUGH_FLAGS2);
            atomic_store(&kernel_offers_passthrough, offered);
            atomic_store(&kernel_offers_killpriv, (init->flags & KERNEL_FUSE_HANDLE_KILLPRIV) != 0);
            atomic_store(&init_unique, header->unique);
        }
    }
    return n;
}

/// The reply payload is the rest of the message after the header; libfuse
/// sends it as one iovec after the header's (send_reply_iov).
static void *payload(struct iovec *iov, int count, size_t at_least) {
    if (count < 2 || iov[0].iov_len != sizeof(struct kernel_out_header) || iov[1].iov_len < at_least) return NULL;
    return iov[1].iov_base;
}

ssize_t qfs_io_writev(int fd, struct iovec *iov, int count, void *userdata) {
    (void)userdata;
    const struct kernel_out_header *header = count > 0 && iov[0].iov_len >= sizeof(*header) ? iov[0].iov_base : NULL;
    uint64_t pending_init = atomic_load(&init_unique);
    if (header && pending_init && header->unique == pending_init) {
        atomic_store(&init_unique, 0);
        struct kernel_init_out *init = payload(iov, count, sizeof(struct kernel_init_out));
        // libfuse 3.14 never sends FUSE_HANDLE_KILLPRIV, though it is in `want`
        // by default: without it the kernel clears the set-user-ID bit of a file
        // another user writes by a chmod in the writer's name, which that writer
        // may not make (the write failed EIO). The daemon writes, truncates and
        // chowns as the caller, so the backing filesystem clears the bits.
        if (init && header->error == 0 && atomic_load(&kernel_offers_killpriv)) init->flags |= KERNEL_FUSE_HANDLE_KILLPRIV;
        if (init && header->error == 0 && atomic_load(&kernel_offers_passthrough)) {
            init->flags |= KERNEL_FUSE_INIT_EXT;
            init->flags2 |= KERNEL_FUSE_PASSTHROUGH_FLAGS2;
            init->max_stack_depth = (uint32_t)stack_depth;
            atomic_store(&passthrough_enabled, 1);
        }
    } else if (header && next_open_backing_id > 0 && header->error == 0 && count >= 2) {
        // An open reply is a fuse_open_out; a create reply ends with one.
        size_t length = iov[1].iov_len;
        if (length >= sizeof(struct kernel_open_out)) {
            struct kernel_open_out *open_out =
                (void *)((char *)iov[1].iov_base + length - sizeof(struct kernel_open_out));
            open_out->open_flags |= KERNEL_FOPEN_PASSTHROUGH;
            open_out->backing_id = next_open_backing_id;
        }
        next_open_backing_id = 0;
    }
    return writev(fd, iov, count);
}

ssize_t qfs_io_splice_receive(int fdin, off_t *offin, int fdout, off_t *offout,
                              size_t length, unsigned int flags, void *userdata) {
    (void)userdata;
    return splice(fdin, (loff_t *)offin, fdout, (loff_t *)offout, length, flags);
}

ssize_t qfs_io_splice_send(int fdin, off_t *offin, int fdout, off_t *offout,
                           size_t length, unsigned int flags, void *userdata) {
    (void)userdata;
    return splice(fdin, (loff_t *)offin, fdout, (loff_t *)offout, length, flags);
}

int qfs_backing_open(int fuse_fd, int fd) {
    if (!atomic_load(&passthrough_enabled)) { errno = EOPNOTSUPP; return -1; }
    struct kernel_backing_map map = { .fd = fd, .flags = 0, .padding = 0 };
    return ioctl(fuse_fd, KERNEL_FUSE_DEV_IOC_BACKING_OPEN, &map);
}

int qfs_backing_close(int fuse_fd, int backing_id) {
    uint32_t id = (uint32_t)backing_id;
    return ioctl(fuse_fd, KERNEL_FUSE_DEV_IOC_BACKING_CLOSE, &id);
}

void qfs_passthrough_mark_next_open(int backing_id) { next_open_backing_id = backing_id; }
