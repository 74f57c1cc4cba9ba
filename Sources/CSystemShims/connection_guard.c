// The process-level calls of the connection guard (ConnectionGuard.swift):
// prctl is variadic and siginfo_t's sender sits in a union, neither of which
// Swift imports, and posix_spawn's closefrom action is GNU-only.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "CSystemShims.h"

extern char **environ;

int qfs_spawn_with_descriptor(pid_t *pid, const char *path, char *const argv[], int fd, int as) {
    // The child starts in a session of its own (a terminal's Ctrl-C or
    // hang-up is not its business) with SIGUSR1, SIGINT and SIGHUP blocked:
    // it takes tens of milliseconds to reach its own signal setup, and a
    // signal in between would otherwise kill it by default action.
    posix_spawnattr_t attributes;
    int code = posix_spawnattr_init(&attributes);
    if (code != 0) return code;
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR1);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGHUP);
    if ((code = posix_spawnattr_setsigmask(&attributes, &blocked)) != 0
        || (code = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSID)) != 0) {
        posix_spawnattr_destroy(&attributes);
        return code;
    }
    posix_spawn_file_actions_t actions;
    if ((code = posix_spawn_file_actions_init(&actions)) != 0) {
        posix_spawnattr_destroy(&attributes);
        return code;
    }
    // dup2 onto itself would leave close-on-exec set; a spare copy first.
    int spare = -1;
    if (fd == as) {
        spare = fcntl(fd, F_DUPFD_CLOEXEC, as + 1);
        if (spare < 0) { code = errno; goto done; }
        fd = spare;
    }
    if ((code = posix_spawn_file_actions_adddup2(&actions, fd, as)) != 0) goto done;
    if ((code = posix_spawn_file_actions_addclosefrom_np(&actions, as + 1)) != 0) goto done;
    code = posix_spawn(pid, path, &actions, &attributes, argv, environ);
done:
    if (spare >= 0) close(spare);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return code;
}

/// Whether `pid`'s main thread has exited (its state is Z or X, or it is gone).
static int qfs_main_thread_exited(pid_t pid) {
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    ssize_t count = read(fd, text, sizeof text - 1);
    close(fd);
    if (count <= 0) return 1;
    text[count] = '\0';
    // The state follows the command name's last closing parenthesis.
    char *end = strrchr(text, ')');
    if (end == NULL || end[1] == '\0' || end[2] == '\0') return 1;
    return end[2] == 'Z' || end[2] == 'X';
}

int qfs_wait_for_parent_death(pid_t parent) {
    sigset_t wanted;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &wanted, NULL) != 0) return -1;
    if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) != 0) return -1;
    // Died before the prctl: no signal will come. (A main thread that died
    // while another thread is stuck leaves getppid() unchanged: that
    // thread is the parent now, in the same process.)
    if (getppid() != parent || qfs_main_thread_exited(parent)) return 0;
    for (;;) {
        siginfo_t info;
        if (sigwaitinfo(&wanted, &info) < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        // The kernel sends the parent-death signal as the exiting thread,
        // whose process id is the parent's; anyone else's SIGUSR1 is not it.
        if (info.si_pid == parent) return 0;
    }
}
