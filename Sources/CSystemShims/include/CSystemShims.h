#ifndef QUERYFS_CSYSTEMSHIMS_H
#define QUERYFS_CSYSTEMSHIMS_H

// Linux system calls that Swift's Glibc module does not expose (it is built
// without _GNU_SOURCE): statx for birth times, renameat2 for atomic exchange.
// The wrappers live in a .c file so that the real headers are compiled with
// _GNU_SOURCE there, without clashing with the Glibc module.

#include <stdint.h>
#include <sys/types.h>

/// The subset of `struct statx` that queryfs uses.
typedef struct qfs_stat {
    uint32_t mode;
    uint32_t nlink;
    uint32_t uid;
    uint32_t gid;
    uint64_t ino;
    uint64_t size;
    uint64_t blocks;
    int64_t mtime_sec;
    uint32_t mtime_nsec;
    int64_t ctime_sec;
    uint32_t ctime_nsec;
    int64_t atime_sec;
    uint32_t atime_nsec;
    int64_t btime_sec;
    uint32_t btime_nsec;
    /// 1 when the filesystem reported a birth time.
    int has_btime;
} qfs_stat;

/// statx(dirfd, path, AT_SYMLINK_NOFOLLOW [| AT_EMPTY_PATH when path is ""]).
/// Returns 0, or -1 with errno set.
int qfs_lstatat(int dirfd, const char *path, qfs_stat *out);

/// openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS: `path` resolved inside `dirfd` only, on its mount
/// only, through no symbolic link. Returns a descriptor, or -1 with errno set.
int qfs_open_beneath(int dirfd, const char *path, int flags);

/// renameat2(2). Returns 0, or -1 with errno set.
int qfs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/// fgetxattr(2) on `fd`, or lgetxattr(2) on `path` inside `dirfd` when
/// `path` is not NULL (through /proc/self/fd). Returns the value's size, or
/// -1 with errno set (ENODATA: no such attribute).
long qfs_getxattrat(int fd, const char *path, const char *name, void *value, unsigned long size);

/// fsetxattr(2) on `fd`, or lsetxattr(2) on `path` inside `dirfd`'s folder
/// `fd` when `path` is not NULL; and the same for removing. 0, or -1 with errno.
int qfs_setxattrat(int fd, const char *path, const char *name, const void *value, unsigned long size);
int qfs_removexattrat(int fd, const char *path, const char *name);

/// flistxattr(2) on `fd`: the names, each NUL-terminated, or -1 with errno set.
long qfs_flistxattr(int fd, char *list, unsigned long size);

/// Sets the calling thread's filesystem uid and gid and its supplementary
/// groups (this thread only; see credentials.c). Returns 0, or -1 with errno.
int qfs_set_thread_credentials(uid_t fsuid, gid_t fsgid, size_t group_count, const gid_t *groups);

/// The calling thread's id (what FUSE reports as a request's pid).
pid_t qfs_thread_id(void);

/// Names the calling thread (prctl PR_SET_NAME, at most 15 bytes): what
/// /proc/PID/task/TID/comm and `ps -L` show. 0, or -1 with errno.
int qfs_name_thread(const char *name);

/// Moves the calling thread to SCHED_IDLE (sched_setscheduler(2)): it runs
/// when nothing else wants the CPU, and a CPU running only such threads
/// counts as idle when the scheduler places a waking thread. 0, or -1 with errno.
int qfs_run_thread_when_idle(void);

/// Spawns `path` with `argv` and the environment, with `fd` as descriptor
/// `as` and every descriptor above `as` closed (0 to `as - 1` inherited).
/// Returns 0, or an errno value (posix_spawn's convention).
int qfs_spawn_with_descriptor(pid_t *pid, const char *path, char *const argv[], int fd, int as);

/// In a child: returns 0 once `parent`'s main thread has exited (at once if
/// it already has), woken by the parent-death signal (PR_SET_PDEATHSIG,
/// SIGUSR1, blocked and waited for; a SIGUSR1 from anyone else is ignored).
/// -1 with errno if the wait cannot be set up.
int qfs_wait_for_parent_death(pid_t parent);

/// An anonymous file in memory (memfd_create), close-on-exec; -1 with errno.
int qfs_memory_file(const char *name);

/// A file without a name in the folder `dirfd` (O_TMPFILE, write-only,
/// 0600, close-on-exec): a process killed while writing it leaves nothing
/// behind. -1 with errno (EOPNOTSUPP, EISDIR or EINVAL where the folder's
/// filesystem has no such files).
int qfs_open_unnamed_file(int dirfd);

/// Gives the unnamed file `fd` the name `name` in `dirfd` (linkat: by
/// AT_EMPTY_PATH where allowed, else through /proc/self/fd). -1 with errno.
int qfs_name_unnamed_file(int fd, int dirfd, const char *name);

/// Waits for and takes an open-file-description write lock (F_OFD_SETLKW)
/// on one byte at `offset` of `fd`: it conflicts with such locks of other
/// descriptions (other processes, or other opens), not with flock(2).
/// 0, or -1 with errno.
int qfs_lock_byte(int fd, long long offset);

/// A counter to wake a thread with (eventfd, close-on-exec); -1 with errno.
int qfs_event_counter(void);

/// Puts /dev/null in place of the FUSE device descriptor `fd`: the
/// connection is released (the kernel aborts it: every request waiting on
/// it fails at once), while the number stays taken, so a write still on its
/// way to the device can never land in a file opened later under that
/// number. 0, or -errno.
int qfs_disconnect_device(int fd);

/// Makes `signal_number` add one to the counter `fd` (`qfs_event_counter`)
/// instead of its action: a thread reading the counter does the work,
/// outside the signal handler. 0, or -1 with errno.
int qfs_signal_to_counter(int signal_number, int fd);

/// GNU-only constants Swift's Glibc module leaves out.
extern const int QFS_O_PATH;
extern const int QFS_AT_EMPTY_PATH;
extern const long QFS_UTIME_NOW;
extern const long QFS_UTIME_OMIT;

/// fallocate(2). Returns 0, or -1 with errno set.
int qfs_fallocate(int fd, int mode, int64_t offset, int64_t length);

extern const unsigned int QFS_RENAME_NOREPLACE;
extern const unsigned int QFS_RENAME_EXCHANGE;

// FUSE passthrough (Linux 6.9+), which libfuse 3.14 predates: the kernel
// reads and writes a file opened this way straight from a backing file the
// daemon registered, without a round trip per request. libfuse is told to
// send and receive through the functions below (fuse_session_custom_io);
// they add the passthrough flag to the INIT reply and, for the one open reply
// a handler marks, the backing file's id (see fuse_passthrough.c).

struct iovec;

ssize_t qfs_io_read(int fd, void *buffer, size_t length, void *userdata);
ssize_t qfs_io_writev(int fd, struct iovec *iov, int count, void *userdata);
ssize_t qfs_io_splice_receive(int fdin, off_t *offin, int fdout, off_t *offout,
                              size_t length, unsigned int flags, void *userdata);
ssize_t qfs_io_splice_send(int fdin, off_t *offin, int fdout, off_t *offout,
                           size_t length, unsigned int flags, void *userdata);

/// Whether INIT asks for passthrough (`wanted`), and the stack depth it asks
/// for: one above the backing directory's filesystem (plain 0; overlayfs,
/// ecryptfs or FUSE 1).
void qfs_passthrough_configure(const char *backing_path, int wanted);

/// How many requests of `opcode` the kernel sent since the mount (counted as
/// they are read from /dev/fuse; libfuse 3.14 never splices them in here).
uint64_t qfs_request_count(uint32_t opcode);

/// Whether the kernel accepted passthrough in INIT (known once the session
/// has answered INIT).
int qfs_passthrough_enabled(void);

/// Registers `fd` with the kernel as a backing file; returns its id (> 0),
/// or -1 with errno set (EPERM without CAP_SYS_ADMIN or passthrough).
int qfs_backing_open(int fuse_fd, int fd);

/// Forgets a backing id once no open file of its inode uses it.
int qfs_backing_close(int fuse_fd, int backing_id);

/// Marks the next open or create reply sent from this thread as passthrough
/// to `backing_id` (0 clears the mark).
void qfs_passthrough_mark_next_open(int backing_id);

// fanotify (fanotify.c): one filesystem mark instead of a watch per folder.

/// The longest file handle kept (MAX_HANDLE_SZ is 128; ext4, xfs, btrfs and
/// tmpfs use at most 40 bytes for a folder).
#define QFS_HANDLE_CAPACITY 64

/// One event: its mask, the handle of the folder it happened in, and the
/// name in that folder (points into the read buffer; empty for the folder itself).
typedef struct qfs_fanotify_event {
    uint64_t mask;
    int handle_type;
    unsigned int handle_length;
    unsigned char handle[QFS_HANDLE_CAPACITY];
    const char *name;
    size_t name_length;
} qfs_fanotify_event;

/// What a mark asks for (create, delete, moves, modify, attrib, close-write,
/// a folder's own deletion, folders too).
extern const uint64_t QFS_FAN_CHANGES;
extern const uint64_t QFS_FAN_DELETE_SELF;
extern const uint64_t QFS_FAN_Q_OVERFLOW;
extern const uint64_t QFS_FAN_ONDIR;
extern const uint64_t QFS_FAN_MOVED_FROM;
extern const uint64_t QFS_FAN_DELETE;

/// fanotify_init (notification class, folder handle and name reported,
/// non-blocking) and a mark on the whole filesystem that holds `path`
/// (CAP_SYS_ADMIN). The descriptor, or -1 with errno set.
int qfs_fanotify_open_filesystem(const char *path, uint64_t mask);

/// Decodes the event at `*offset` of what a read returned, and moves
/// `*offset` past it. 1 with `*out` filled, 0 at the end of the buffer.
int qfs_fanotify_next(const unsigned char *buffer, size_t length, size_t *offset, qfs_fanotify_event *out);

/// name_to_handle_at(2) into `out`'s handle fields. 0, or -1 with errno.
int qfs_name_to_handle(int dirfd, const char *path, int flags, qfs_fanotify_event *out);

/// open_by_handle_at(2) of `event`'s handle (CAP_DAC_READ_SEARCH). A descriptor, or -1 with errno.
int qfs_open_by_handle(int mount_fd, const qfs_fanotify_event *event, int flags);

#endif
