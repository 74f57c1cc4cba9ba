#define _GNU_SOURCE
#include <sys/mman.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <limits.h>
#include <errno.h>
#include "CSystemShims.h"
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <string.h>

static int qfs_path_in(int fd, const char *path, char *full, size_t size);

const int QFS_O_PATH = O_PATH;
const int QFS_AT_EMPTY_PATH = AT_EMPTY_PATH;
const long QFS_UTIME_NOW = UTIME_NOW;
const long QFS_UTIME_OMIT = UTIME_OMIT;
const unsigned int QFS_RENAME_NOREPLACE = RENAME_NOREPLACE;
const unsigned int QFS_RENAME_EXCHANGE = RENAME_EXCHANGE;

int qfs_lstatat(int dirfd, const char *path, qfs_stat *out) {
    struct statx s;
    int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT;
    if (path[0] == '\0') flags |= AT_EMPTY_PATH;
    if (statx(dirfd, path, flags, STATX_BASIC_STATS | STATX_BTIME, &s) != 0) return -1;
    out->mode = s.stx_mode;
    out->nlink = s.stx_nlink;
    out->uid = s.stx_uid;
    out->gid = s.stx_gid;
    out->ino = s.stx_ino;
    out->size = s.stx_size;
    out->blocks = s.stx_blocks;
    out->mtime_sec = s.stx_mtime.tv_sec;
    out->mtime_nsec = s.stx_mtime.tv_nsec;
    out->ctime_sec = s.stx_ctime.tv_sec;
    out->ctime_nsec = s.stx_ctime.tv_nsec;
    out->atime_sec = s.stx_atime.tv_sec;
    out->atime_nsec = s.stx_atime.tv_nsec;
    out->has_btime = (s.stx_mask & STATX_BTIME) ? 1 : 0;
    out->btime_sec = s.stx_btime.tv_sec;
    out->btime_nsec = s.stx_btime.tv_nsec;
    return 0;
}

int qfs_open_beneath(int dirfd, const char *path, int flags) {
    // glibc 2.36 has no openat2 wrapper.
    struct open_how how = {
        .flags = (uint64_t)flags,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    long fd;
    do {
        fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    } while (fd < 0 && errno == EINTR);
    return (int)fd;
}

int qfs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

int qfs_fallocate(int fd, int mode, int64_t offset, int64_t length) {
    return fallocate(fd, mode, offset, length);
}

long qfs_flistxattr(int fd, char *list, unsigned long size) {
    return flistxattr(fd, list, size);
}

long qfs_getxattrat(int fd, const char *path, const char *name, void *value, unsigned long size) {
    if (path == NULL) return fgetxattr(fd, name, value, size);
    char full[PATH_MAX];
    if (qfs_path_in(fd, path, full, sizeof full) != 0) return -1;
    return lgetxattr(full, name, value, size);
}

/// The /proc/self/fd path of `path` inside the folder `fd`, for the *xattr
/// calls that have no *at form.
static int qfs_path_in(int fd, const char *path, char *full, size_t size) {
    if (snprintf(full, size, "/proc/self/fd/%d/%s", fd, path) >= (int)size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int qfs_setxattrat(int fd, const char *path, const char *name, const void *value, unsigned long size) {
    if (path == NULL) return fsetxattr(fd, name, value, size, 0);
    char full[PATH_MAX];
    if (qfs_path_in(fd, path, full, sizeof full) != 0) return -1;
    return lsetxattr(full, name, value, size, 0);
}

int qfs_removexattrat(int fd, const char *path, const char *name) {
    if (path == NULL) return fremovexattr(fd, name);
    char full[PATH_MAX];
    if (qfs_path_in(fd, path, full, sizeof full) != 0) return -1;
    return lremovexattr(full, name);
}

int qfs_memory_file(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>

static volatile int qfs_signal_counter = -1;

static void qfs_count_signal(int signal_number) {
    (void)signal_number;
    int saved = errno;
    uint64_t one = 1;
    ssize_t ignored = write(qfs_signal_counter, &one, sizeof one);  // fails only past 2^64 - 2 unread
    (void)ignored;
    errno = saved;
}

int qfs_event_counter(void) { return eventfd(0, EFD_CLOEXEC); }

int qfs_disconnect_device(int fd) {
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0) return -errno;
    int result = dup3(null_fd, fd, O_CLOEXEC) < 0 ? -errno : 0;
    close(null_fd);
    return result;
}

int qfs_signal_to_counter(int signal_number, int fd) {
    qfs_signal_counter = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = qfs_count_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signal_number, &action, NULL);
}

int qfs_lock_byte(int fd, long long offset) {
    struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = offset, .l_len = 1, .l_pid = 0 };
    int result;
    do { result = fcntl(fd, F_OFD_SETLKW, &lock); } while (result != 0 && errno == EINTR);
    return result;
}

int qfs_open_unnamed_file(int dirfd) {
    return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
}

int qfs_name_unnamed_file(int fd, int dirfd, const char *name) {
    if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0) return 0;
    if (errno != ENOENT && errno != EPERM) return -1;
    // Without CAP_DAC_READ_SEARCH the kernel refuses AT_EMPTY_PATH (ENOENT); the
    // descriptor's /proc link, followed, names the same file for anyone.
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
}

#include <sys/prctl.h>

int qfs_name_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#include <sched.h>

int qfs_run_thread_when_idle(void) {
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_IDLE, &param);
}
