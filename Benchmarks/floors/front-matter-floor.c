// The floor of a front-matter scan (issue 31): what reading every note and
// parsing its YAML front matter costs with no work beyond that. It walks
// BACKING (every folder, hidden ones skipped, as queryfs does), opens and
// reads each `.md` file up to 64 KiB, and runs libyaml — the parser queryfs
// uses, through Yams' copy — over a `---` block's events, building nothing.
// A `+++` (TOML) block is read but not parsed: toml++ is C++, and the floor
// stays a lower bound. Folders are shared among THREADS threads (default:
// the cores), as rg and queryfs share them.
//
// Printed: notes read, YAML blocks parsed, their events. notes-bench.sh times
// it beside `queryfs ls --no-index` and `rg`: whatever queryfs takes beyond
// it is queryfs's own work per note, not the disk's or libyaml's.
//
// Usage: front-matter-floor BACKING [THREADS]
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

enum { readLimit = 1 << 16 };

struct folders {
    char **paths;
    size_t count, capacity, next;
    pthread_mutex_t lock;
};

struct tally {
    long notes, blocks, events;
};

static void add_folder(struct folders *folders, const char *path) {
    if (folders->count == folders->capacity) {
        folders->capacity = folders->capacity ? folders->capacity * 2 : 1024;
        folders->paths = realloc(folders->paths, folders->capacity * sizeof *folders->paths);
        if (!folders->paths) { perror("realloc"); exit(1); }
    }
    folders->paths[folders->count++] = strdup(path);
}

// Every folder under `path` (itself included), found first so that the
// threads share whole folders as queryfs's scan does.
static void find_folders(struct folders *folders, const char *path) {
    add_folder(folders, path);
    DIR *dir = opendir(path);
    if (!dir) return;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (entry->d_name[0] == '.' || entry->d_type != DT_DIR) continue;
        char child[4096];
        if (snprintf(child, sizeof child, "%s/%s", path, entry->d_name) >= (int)sizeof child) continue;
        find_folders(folders, child);
    }
    closedir(dir);
}

static long yaml_events(const unsigned char *text, size_t length) {
    yaml_parser_t parser;
    yaml_event_t event;
    long events = 0;
    if (!yaml_parser_initialize(&parser)) return 0;
    yaml_parser_set_input_string(&parser, text, length);
    for (;;) {
        if (!yaml_parser_parse(&parser, &event)) break;
        int type = event.type;
        yaml_event_delete(&event);
        events++;
        if (type == YAML_STREAM_END_EVENT) break;
    }
    yaml_parser_delete(&parser);
    return events;
}

static void read_note(int folder, const char *name, unsigned char *buffer, struct tally *tally) {
    int fd = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return;
    ssize_t length = read(fd, buffer, readLimit);
    close(fd);
    tally->notes++;
    if (length < 4 || memcmp(buffer, "---\n", 4) != 0) return;
    unsigned char *end = memmem(buffer + 4, (size_t)length - 4, "\n---", 4);
    if (!end) return;
    tally->blocks++;
    tally->events += yaml_events(buffer + 4, (size_t)(end + 1 - (buffer + 4)));
}

static int is_note(const char *name) {
    size_t length = strlen(name);
    return length > 3 && strcmp(name + length - 3, ".md") == 0;
}

static void *scan(void *argument) {
    struct folders *folders = argument;
    struct tally *tally = calloc(1, sizeof *tally);
    unsigned char *buffer = malloc(readLimit);
    if (!tally || !buffer) { perror("malloc"); exit(1); }
    for (;;) {
        pthread_mutex_lock(&folders->lock);
        size_t index = folders->next++;
        pthread_mutex_unlock(&folders->lock);
        if (index >= folders->count) break;
        DIR *dir = opendir(folders->paths[index]);
        if (!dir) continue;
        struct dirent *entry;
        while ((entry = readdir(dir))) {
            if (entry->d_name[0] == '.' || entry->d_type != DT_REG || !is_note(entry->d_name)) continue;
            read_note(dirfd(dir), entry->d_name, buffer, tally);
        }
        closedir(dir);
    }
    free(buffer);
    return tally;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s BACKING [THREADS]\n", argv[0]);
        return 2;
    }
    long threads = argc > 2 ? strtol(argv[2], NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1 || threads > 64) threads = 2;
    struct folders folders = { .lock = PTHREAD_MUTEX_INITIALIZER };
    find_folders(&folders, argv[1]);
    pthread_t workers[64];
    for (long i = 0; i < threads; i++) pthread_create(&workers[i], NULL, scan, &folders);
    struct tally total = { 0 };
    for (long i = 0; i < threads; i++) {
        struct tally *tally;
        pthread_join(workers[i], (void **)&tally);
        total.notes += tally->notes;
        total.blocks += tally->blocks;
        total.events += tally->events;
        free(tally);
    }
    printf("%ld notes read, %ld YAML blocks parsed (%ld events), %zu folders, %ld threads\n",
           total.notes, total.blocks, total.events, folders.count, threads);
    return 0;
}
