#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CSystemShims.h"

// Raw system calls, not glibc's wrappers: glibc's setgroups changes the
// groups of every thread of the process (it broadcasts to them), and a
// request handler must change only its own thread for the length of one
// request. The kernel keeps credentials per thread.

int qfs_set_thread_credentials(uid_t fsuid, gid_t fsgid, size_t group_count, const gid_t *groups) {
    if (syscall(SYS_setgroups, group_count, groups) != 0) return -1;
    syscall(SYS_setfsgid, fsgid);
    syscall(SYS_setfsuid, fsuid);
    // setfsuid/setfsgid report no failure: ask for the values back.
    if ((uid_t)syscall(SYS_setfsuid, (uid_t)-1) != fsuid || (gid_t)syscall(SYS_setfsgid, (gid_t)-1) != fsgid) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

pid_t qfs_thread_id(void) { return (pid_t)syscall(SYS_gettid); }
