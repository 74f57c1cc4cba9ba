// fanotify and file handles, which Swift's Glibc module does not expose.
// One filesystem mark reports every change on the filesystem that holds
// BACKING, each with the handle of the folder it happened in and the name
// in it (FAN_REPORT_DFID_NAME): no watch per folder, whatever the number
// of bundles.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/fanotify.h>
#include <unistd.h>
#include "CSystemShims.h"

const uint64_t QFS_FAN_CHANGES = FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_MODIFY | FAN_ATTRIB
    | FAN_CLOSE_WRITE | FAN_DELETE_SELF | FAN_ONDIR;
const uint64_t QFS_FAN_DELETE_SELF = FAN_DELETE_SELF;
const uint64_t QFS_FAN_Q_OVERFLOW = FAN_Q_OVERFLOW;
const uint64_t QFS_FAN_ONDIR = FAN_ONDIR;
const uint64_t QFS_FAN_MOVED_FROM = FAN_MOVED_FROM;
const uint64_t QFS_FAN_DELETE = FAN_DELETE;

int qfs_fanotify_open_filesystem(const char *path, uint64_t mask) {
    int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME, O_RDONLY | O_LARGEFILE);
    if (fd < 0) return -1;
    if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD, path) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int qfs_fanotify_next(const unsigned char *buffer, size_t length, size_t *offset, qfs_fanotify_event *out) {
    while (*offset + sizeof(struct fanotify_event_metadata) <= length) {
        const struct fanotify_event_metadata *event = (const void *)(buffer + *offset);
        if (event->event_len < sizeof(*event) || *offset + event->event_len > length) return 0;
        *offset += event->event_len;
        if (event->vers != FANOTIFY_METADATA_VERSION) continue;
        memset(out, 0, sizeof(*out));
        out->mask = event->mask;
        if (event->fd >= 0) close(event->fd);  // not asked for; never leak one
        const unsigned char *info = (const unsigned char *)event + event->metadata_len;
        const unsigned char *end = (const unsigned char *)event + event->event_len;
        while (info + sizeof(struct fanotify_event_info_header) <= end) {
            const struct fanotify_event_info_header *header = (const void *)info;
            if (header->len < sizeof(*header) || info + header->len > end) break;
            if (header->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME || header->info_type == FAN_EVENT_INFO_TYPE_DFID) {
                const struct fanotify_event_info_fid *fid = (const void *)info;
                const struct file_handle *handle = (const void *)fid->handle;
                const unsigned char *handleEnd = (const unsigned char *)handle->f_handle + handle->handle_bytes;
                if (handleEnd <= info + header->len && handle->handle_bytes <= QFS_HANDLE_CAPACITY) {
                    out->handle_type = handle->handle_type;
                    out->handle_length = handle->handle_bytes;
                    memcpy(out->handle, handle->f_handle, handle->handle_bytes);
                    if (header->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
                        out->name = (const char *)handleEnd;
                        out->name_length = strnlen(out->name, (size_t)(info + header->len - handleEnd));
                    }
                }
            }
            info += header->len;
        }
        return 1;
    }
    return 0;
}

int qfs_name_to_handle(int dirfd, const char *path, int flags, qfs_fanotify_event *out) {
    struct {
        struct file_handle handle;
        unsigned char bytes[QFS_HANDLE_CAPACITY];
    } storage;
    storage.handle.handle_bytes = QFS_HANDLE_CAPACITY;
    int mount_id;
    if (name_to_handle_at(dirfd, path, &storage.handle, &mount_id, flags) != 0) return -1;
    out->handle_type = storage.handle.handle_type;
    out->handle_length = storage.handle.handle_bytes;
    memcpy(out->handle, storage.handle.f_handle, storage.handle.handle_bytes);
    return 0;
}

int qfs_open_by_handle(int mount_fd, const qfs_fanotify_event *event, int flags) {
    struct {
        struct file_handle handle;
        unsigned char bytes[QFS_HANDLE_CAPACITY];
    } storage;
    if (event->handle_length > QFS_HANDLE_CAPACITY) {
        errno = EINVAL;
        return -1;
    }
    storage.handle.handle_bytes = event->handle_length;
    storage.handle.handle_type = event->handle_type;
    memcpy(storage.handle.f_handle, event->handle, event->handle_length);
    return open_by_handle_at(mount_fd, &storage.handle, flags);
}
