#!/usr/bin/python3
"""faultfs: a passthrough FUSE filesystem that fails on command, and can crash.

A storage engineer's test filesystem for queryfs (issue 30). It shows a real
folder SOURCE at MOUNTPOINT, passing every operation through, and lets a test
make chosen operations fail with a chosen errno, or "lose power" and leave
only what was made durable. Needs only Debian 12's python3-pyfuse3 (pyfuse3
and trio); run it with /usr/bin/python3.

    faultfs.py mount SOURCE MOUNTPOINT --control SOCKET [--crash-model] [--log FILE] [--exit-with-parent]
    faultfs.py ctl SOCKET COMMAND [ARGUMENT...]

`mount` stays in the foreground until MOUNTPOINT is unmounted (fusermount3 -u)
or it gets SIGTERM/SIGINT; with --exit-with-parent also once the process that
started it is gone (a test process that died), unmounting as it goes. `ctl` sends one command to a running faultfs over
its control socket (a unix socket, outside the mount) and prints the JSON
reply; it exits 1 if the command was refused.

Commands
--------

fail OP ERRNO [count=N] [skip=N] [path=GLOB]
    The next matching OP answers ERRNO (a name, EIO/ENOSPC/EDQUOT/..., or a
    number) instead of happening. `count` (default 1; `count=0` for always)
    is how many times it fires, `skip` how many matching calls pass first.
    `path` is a shell glob on the path relative to SOURCE (the path a file
    handle was opened by, for handle operations), `*` by default.
    OP is one of:
      open        any open of an existing file;  open-write: one for writing
      create      create of a new file (open with O_CREAT of a missing name)
      write, read, fsync (and fdatasync), fsyncdir
      flush       sent at every close(2) of a descriptor (close: an alias);
                  its errno is what close(2) returns
      release     the last close; the kernel drops its errno: nobody sees it
      rename, unlink, mkdir, rmdir, symlink, link, mknod,
      setattr (chmod, chown, utimens, truncate), truncate (only size changes),
      setxattr, removexattr
    A failed operation changes nothing in SOURCE.
clear
    Forgets every armed fault.
stats
    Operation counts, each armed fault and how often it fired, the number
    of mutating operations so far (`sequence`), the files open now (`open`:
    a test arms a fault once the last one's files are released, or a late
    flush from the kernel's asynchronous release may take it), durability
    points, and whether it crashed.
ping
    Answers {"ok": true}.

With --crash-model, faultfs also keeps the state a crash would leave, after
the model of dm-log-writes and CrashMonkey, at its strictest POSIX reading:

  * a file's contents (with its mode, times and xattrs) become durable at an
    fsync or fdatasync of the file, as they are at that moment;
  * a folder's entries (names made, removed, renamed; with the folder's
    mode, times and xattrs) become durable at an fsync of that folder: a new
    file whose entry became durable but whose contents never did is empty,
    a new folder never fsync'ed is empty;
  * everything in SOURCE when faultfs starts is durable; `sync` makes all
    of the present state durable (sync(1): not sent through FUSE).

Each fsync and fsyncdir is a durability point; the state after point K is
what a crash right after it (and before the next) leaves.

sync
    Everything as it is now is durable (a new durability point).
points
    The durability points so far: index, the operation sequence number at
    which it happened, what (fsync/fsyncdir/sync/start) and the path.
durable-state K DEST
    Writes the durable state after point K into the new folder DEST (K=-1:
    the latest). The filesystem keeps running: one run of a workload gives
    every crash state it can have.
crash DEST
    Power cut now: writes the latest durable state into DEST, and from then
    on every operation answers EIO (reads too), until unmounted.
crash-after N DEST
    The same, at the (N+1)th mutating operation from now (the N first still
    happen; the next fails with EIO and everything after it too).

Limits: one thread (trio), so operations are served one at a time; files are
opened per handle (a real descriptor each); flock(2) is left to the kernel
(local locks, as on any FUSE filesystem without lock support); setxattr
ignores XATTR_CREATE/REPLACE (pyfuse3 does not pass them).
"""

import argparse
import errno
import fnmatch
import json
import os
import signal
import socket
import stat
import sys
import time

# ----------------------------------------------------------------------------
# Control client (needs nothing but the standard library)


def control(socket_path, words, timeout=60):
    """Sends one command; returns the decoded JSON reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout)
        client.connect(socket_path)
        client.sendall((json.dumps(words) + "\n").encode())
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = client.recv(65536)
            if not chunk:
                break
            reply += chunk
    return json.loads(reply or b'{"ok": false, "error": "no reply"}')


# ----------------------------------------------------------------------------
# Faults

FAULT_OPS = {
    "open", "open-write", "create", "write", "read", "fsync", "fsyncdir", "flush", "release",
    "rename", "unlink", "mkdir", "rmdir", "symlink", "link", "mknod", "setattr", "truncate",
    "setxattr", "removexattr",
}
ALIASES = {"close": "flush", "fdatasync": "fsync"}


def parse_errno(text):
    if text.isdigit():
        return int(text)
    value = getattr(errno, text.upper(), None)
    if not isinstance(value, int):
        raise ValueError(f"unknown errno {text!r}")
    return value


class Fault:
    def __init__(self, op, code, count=1, skip=0, path="*"):
        self.op, self.code, self.count, self.skip, self.path = op, code, count, skip, path
        self.seen = 0
        self.fired = 0

    def describe(self):
        return {"op": self.op, "errno": errno.errorcode.get(self.code, str(self.code)), "count": self.count,
                "skip": self.skip, "path": self.path, "seen": self.seen, "fired": self.fired}

    def exhausted(self):
        return self.count > 0 and self.fired >= self.count


# ----------------------------------------------------------------------------
# Crash model: a log of durability points, each what became durable there


class DurableModel:
    """What survives a crash. Objects are (inode, generation): an inode number
    reused after its file went is another object. A state is
    {"meta": {obj: (kind, mode, symlink target)}, "dirs": {obj: {name: obj}},
     "files": {obj: bytes}, "xattrs": {obj: {name: bytes}}, "mtimes": {obj: ns}}."""

    def __init__(self, fs):
        self.fs = fs
        self.points = []  # dicts: kind, path, sequence, and either "state" (a full one) or "apply"

    def object_of(self, st):
        return (st.st_ino, self.fs.generation.get(st.st_ino, 0))

    @staticmethod
    def xattrs_of(path):
        """The user.* attributes of a path (not following a symlink) or a descriptor."""
        follow = isinstance(path, int)
        values = {}
        try:
            for name in os.listxattr(path, follow_symlinks=follow):
                if name.startswith("user."):
                    try:
                        values[name] = os.getxattr(path, name, follow_symlinks=follow)
                    except OSError:
                        pass
        except OSError:
            pass
        return values

    def meta_of(self, path, st):
        kind = stat.S_IFMT(st.st_mode)
        target = os.readlink(path) if kind == stat.S_IFLNK else None
        return (kind, stat.S_IMODE(st.st_mode), target)

    def full_state(self):
        """The present state of SOURCE, all of it."""
        state = {"meta": {}, "dirs": {}, "files": {}, "xattrs": {}, "mtimes": {}}

        def walk(path):
            st = os.lstat(path)
            obj = self.object_of(st)
            state["meta"][obj] = self.meta_of(path, st)
            state["mtimes"][obj] = st.st_mtime_ns
            if stat.S_ISLNK(st.st_mode):
                return obj
            state["xattrs"][obj] = self.xattrs_of(path)
            if stat.S_ISDIR(st.st_mode):
                entries = {}
                for name in sorted(os.listdir(path)):
                    entries[name] = walk(os.path.join(path, name))
                state["dirs"][obj] = entries
            elif stat.S_ISREG(st.st_mode) and obj not in state["files"]:
                with open(path, "rb") as file:
                    state["files"][obj] = file.read()
            return obj

        state["root"] = walk(self.fs.source)
        return state

    def checkpoint(self, kind):
        self.points.append({"kind": kind, "path": "", "sequence": self.fs.sequence, "state": self.full_state()})

    def file_synced(self, fd, relative):
        st = os.fstat(fd)
        obj = self.object_of(st)
        reader = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY)
        try:
            chunks = []
            offset = 0
            while True:
                chunk = os.pread(reader, 1 << 20, offset)
                if not chunk:
                    break
                chunks.append(chunk)
                offset += len(chunk)
        finally:
            os.close(reader)
        change = {"files": {obj: b"".join(chunks)}, "xattrs": {obj: self.xattrs_of(fd)},
                  "mtimes": {obj: st.st_mtime_ns}, "modes": {obj: stat.S_IMODE(st.st_mode)}, "meta": {}}
        self.points.append({"kind": "fsync", "path": relative, "sequence": self.fs.sequence, "apply": change})

    def folder_synced(self, path, relative):
        st = os.lstat(path)
        obj = self.object_of(st)
        entries, metas = {}, {}
        for name in sorted(os.listdir(path)):
            child = os.path.join(path, name)
            try:
                child_st = os.lstat(child)
            except FileNotFoundError:
                continue
            child_obj = self.object_of(child_st)
            entries[name] = child_obj
            metas[child_obj] = self.meta_of(child, child_st)
        change = {"dirs": {obj: entries}, "xattrs": {obj: self.xattrs_of(path)}, "mtimes": {obj: st.st_mtime_ns},
                  "modes": {obj: stat.S_IMODE(st.st_mode)}, "meta": metas}
        self.points.append({"kind": "fsyncdir", "path": relative, "sequence": self.fs.sequence, "apply": change})

    def state_after(self, index):
        if index < 0:
            index += len(self.points)
        if not 0 <= index < len(self.points):
            raise ValueError(f"no durability point {index} (there are {len(self.points)})")
        base = max(i for i in range(index + 1) if "state" in self.points[i])
        full = self.points[base]["state"]
        state = {key: dict(full[key]) for key in ("meta", "dirs", "files", "xattrs", "mtimes")}
        state["root"] = full["root"]
        for point in self.points[base + 1:index + 1]:
            change = point["apply"]
            for obj, meta in change["meta"].items():
                # A child's kind and target as its folder's fsync saw it; an
                # object already durable keeps the mode it had.
                old = state["meta"].get(obj)
                state["meta"][obj] = meta if old is None else (meta[0], old[1], meta[2])
            for obj, mode in change["modes"].items():
                kind, _, target = state["meta"].get(obj, (None, mode, None))
                if kind is not None:
                    state["meta"][obj] = (kind, mode, target)
            for key in ("dirs", "files", "xattrs", "mtimes"):
                state[key].update(change.get(key, {}))
        return state

    @staticmethod
    def write_out(state, destination):
        """Makes the folder DEST hold `state` (DEST must not exist)."""
        os.mkdir(destination)
        made = {}  # obj -> first path (hard links)
        folders = []

        def fill(folder, obj, depth):
            for name, child in sorted(state["dirs"].get(obj, {}).items()):
                path = os.path.join(folder, name)
                kind, mode, target = state["meta"].get(child, (stat.S_IFREG, 0o644, None))
                if child in made and kind != stat.S_IFDIR:
                    os.link(made[child], path)
                    continue
                made[child] = path
                if kind == stat.S_IFDIR:
                    if depth > 256:
                        continue
                    os.mkdir(path)
                    fill(path, child, depth + 1)
                    folders.append((path, child, mode))
                    continue
                if kind == stat.S_IFLNK:
                    os.symlink(target, path)
                    continue
                if kind == stat.S_IFIFO:
                    os.mkfifo(path)
                else:
                    with open(path, "wb") as file:
                        file.write(state["files"].get(child, b""))
                for xname, value in state["xattrs"].get(child, {}).items():
                    os.setxattr(path, xname, value)
                os.chmod(path, mode)
                if child in state["mtimes"]:
                    os.utime(path, ns=(state["mtimes"][child], state["mtimes"][child]))

        fill(destination, state["root"], 0)
        folders.append((destination, state["root"], None))
        # Folders last, innermost first: filling them moved their times.
        for path, obj, mode in folders:
            for xname, value in state["xattrs"].get(obj, {}).items():
                os.setxattr(path, xname, value)
            if mode is not None:
                os.chmod(path, mode)
            if obj in state["mtimes"]:
                os.utime(path, ns=(state["mtimes"][obj], state["mtimes"][obj]))


# ----------------------------------------------------------------------------
# The filesystem


def make_operations(pyfuse3):
    FUSEError = pyfuse3.FUSEError

    class FaultFS(pyfuse3.Operations):
        enable_writeback_cache = False

        def __init__(self, source, crash_model, log):
            super().__init__()
            self.source = os.path.realpath(source)
            self.root_ino = os.lstat(self.source).st_ino
            self.paths = {pyfuse3.ROOT_INODE: {self.source}}  # inode -> its known paths
            self.lookups = {}  # inode -> lookup count
            self.handles = {}  # file handle (a real descriptor) -> relative path
            self.folders = {}  # folder handle -> (inode, listing snapshot)
            self.next_folder = 1
            self.faults = []
            self.counts = {}
            self.sequence = 0  # mutating operations so far
            self.generation = {}  # inode -> how often a new object got it
            self.crashed = False
            self.crash_after = None  # (operations left, destination)
            self.log = log
            self.model = DurableModel(self) if crash_model else None
            if self.model:
                self.model.checkpoint("start")

        # -- inodes and paths

        def inode(self, st):
            if st.st_ino == self.root_ino:
                return pyfuse3.ROOT_INODE
            return self.root_ino if st.st_ino == pyfuse3.ROOT_INODE else st.st_ino

        def path(self, inode):
            for path in self.paths.get(inode, ()):
                if os.path.lexists(path):
                    return path
            raise FUSEError(errno.ENOENT)

        def relative(self, path):
            relative = os.path.relpath(path, self.source)
            return "" if relative == "." else relative

        def child(self, parent, name):
            return os.path.join(self.path(parent), os.fsdecode(name))

        def remember(self, path, st, lookup=True):
            inode = self.inode(st)
            self.paths.setdefault(inode, set()).add(path)
            if lookup:
                self.lookups[inode] = self.lookups.get(inode, 0) + 1
            return inode

        def forget_path(self, path):
            for inode, known in list(self.paths.items()):
                known.discard(path)

        def moved(self, old, new):
            """Every known path at or under `old` is now under `new`."""
            prefix = old + os.sep
            for known in self.paths.values():
                for path in list(known):
                    if path == old or path.startswith(prefix):
                        known.discard(path)
                        known.add(new + path[len(old):])

        def attributes(self, st):
            entry = pyfuse3.EntryAttributes()
            entry.st_ino = self.inode(st)
            entry.generation = 0
            entry.entry_timeout = 0
            entry.attr_timeout = 0
            entry.st_mode = st.st_mode
            entry.st_nlink = st.st_nlink
            entry.st_uid = st.st_uid
            entry.st_gid = st.st_gid
            entry.st_rdev = st.st_rdev
            entry.st_size = st.st_size
            entry.st_blksize = st.st_blksize
            entry.st_blocks = st.st_blocks
            entry.st_atime_ns = st.st_atime_ns
            entry.st_mtime_ns = st.st_mtime_ns
            entry.st_ctime_ns = st.st_ctime_ns
            return entry

        def created(self, path):
            """A new object got this path's inode: a new generation."""
            st = os.lstat(path)
            self.generation[st.st_ino] = self.generation.get(st.st_ino, 0) + 1
            return st

        # -- faults, crashes, the log

        def check(self, op, path, mutating=True):
            """Counts the operation; raises the armed fault, or EIO after a crash."""
            self.counts[op] = self.counts.get(op, 0) + 1
            if self.crashed:
                raise FUSEError(errno.EIO)
            if mutating:
                if self.crash_after is not None:
                    left, destination = self.crash_after
                    if left <= 0:
                        self.crash(destination)
                        self.note(op, path, "EIO (crash)")
                        raise FUSEError(errno.EIO)
                    self.crash_after = (left - 1, destination)
                self.sequence += 1
            relative = self.relative(path) if path else ""
            for fault in self.faults:
                if fault.op != op or fault.exhausted() or not fnmatch.fnmatchcase(relative, fault.path):
                    continue
                fault.seen += 1
                if fault.seen <= fault.skip:
                    continue
                fault.fired += 1
                self.note(op, path, errno.errorcode.get(fault.code, str(fault.code)) + " (injected)")
                raise FUSEError(fault.code)

        def note(self, op, path, outcome="ok"):
            if self.log:
                self.log.write(f"{time.time():.6f} {self.sequence} {op} {self.relative(path) if path else '-'} {outcome}\n")
                self.log.flush()

        def crash(self, destination):
            if self.model is None:
                raise ValueError("crashes need --crash-model")
            DurableModel.write_out(self.model.state_after(-1), destination)
            self.crashed = True
            self.crash_after = None

        # -- operations

        async def lookup(self, parent_inode, name, ctx=None):
            path = self.child(parent_inode, name)
            self.check("lookup", path, mutating=False)
            try:
                st = os.lstat(path)
            except OSError as error:
                raise FUSEError(error.errno)
            self.remember(path, st)
            return self.attributes(st)

        def forget(self, inode_list):
            for inode, count in inode_list:
                left = self.lookups.get(inode, 0) - count
                if left > 0 or inode == pyfuse3.ROOT_INODE:
                    self.lookups[inode] = max(left, 0)
                    continue
                self.lookups.pop(inode, None)
                self.paths.pop(inode, None)

        async def getattr(self, inode, ctx=None):
            path = self.path(inode)
            self.check("getattr", path, mutating=False)
            try:
                return self.attributes(os.lstat(path))
            except OSError as error:
                raise FUSEError(error.errno)

        async def setattr(self, inode, attr, fields, fh, ctx):
            path = self.path(inode) if fh is None or fh not in self.handles else os.path.join(self.source, self.handles[fh])
            self.check("setattr", path)
            if fields.update_size:
                self.check("truncate", path, mutating=False)
            try:
                if fields.update_size:
                    if fh is not None and fh in self.handles:
                        os.ftruncate(fh, attr.st_size)
                    else:
                        os.truncate(path, attr.st_size)
                if fields.update_mode and not os.path.islink(path):
                    os.chmod(path, stat.S_IMODE(attr.st_mode))
                if fields.update_uid or fields.update_gid:
                    os.chown(path, attr.st_uid if fields.update_uid else -1, attr.st_gid if fields.update_gid else -1,
                             follow_symlinks=False)
                if fields.update_atime or fields.update_mtime:
                    now = os.lstat(path)
                    os.utime(path, ns=(attr.st_atime_ns if fields.update_atime else now.st_atime_ns,
                                       attr.st_mtime_ns if fields.update_mtime else now.st_mtime_ns), follow_symlinks=False)
                self.note("setattr", path)
                return self.attributes(os.lstat(path))
            except OSError as error:
                raise FUSEError(error.errno)

        async def readlink(self, inode, ctx):
            path = self.path(inode)
            self.check("readlink", path, mutating=False)
            try:
                return os.fsencode(os.readlink(path))
            except OSError as error:
                raise FUSEError(error.errno)

        async def opendir(self, inode, ctx):
            path = self.path(inode)
            self.check("opendir", path, mutating=False)
            if not os.path.isdir(path):
                raise FUSEError(errno.ENOTDIR)
            handle = self.next_folder
            self.next_folder += 1
            self.folders[handle] = (inode, None)
            return handle

        async def readdir(self, fh, start_id, token):
            inode, listing = self.folders[fh]
            path = self.path(inode)
            self.check("readdir", path, mutating=False)
            if start_id == 0 or listing is None:
                try:
                    listing = sorted(os.listdir(path))
                except OSError as error:
                    raise FUSEError(error.errno)
                self.folders[fh] = (inode, listing)
            for index in range(start_id, len(listing)):
                child = os.path.join(path, listing[index])
                try:
                    st = os.lstat(child)
                except OSError:
                    continue
                if not pyfuse3.readdir_reply(token, os.fsencode(listing[index]), self.attributes(st), index + 1):
                    break
                self.remember(child, st)

        async def releasedir(self, fh):
            self.folders.pop(fh, None)

        async def fsyncdir(self, fh, datasync):
            inode, _ = self.folders[fh]
            path = self.path(inode)
            self.check("fsyncdir", path)
            try:
                descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(descriptor)
                finally:
                    os.close(descriptor)
            except OSError as error:
                raise FUSEError(error.errno)
            if self.model:
                self.model.folder_synced(path, self.relative(path))
            self.note("fsyncdir", path)

        def make(self, op, parent_inode, name, ctx, action):
            """Makes a new name (mkdir, mknod, symlink): the armed fault first,
            then the call, owned by the caller; its entry."""
            path = self.child(parent_inode, name)
            self.check(op, path)
            try:
                action(path)
                self.own(path, ctx)
                st = self.created(path)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note(op, path)
            self.remember(path, st)
            return self.attributes(st)

        async def mkdir(self, parent_inode, name, mode, ctx):
            return self.make("mkdir", parent_inode, name, ctx, lambda path: os.mkdir(path, mode))

        async def mknod(self, parent_inode, name, mode, rdev, ctx):
            return self.make("mknod", parent_inode, name, ctx, lambda path: os.mknod(path, mode, rdev))

        async def symlink(self, parent_inode, name, target, ctx):
            return self.make("symlink", parent_inode, name, ctx, lambda path: os.symlink(os.fsdecode(target), path))

        async def link(self, inode, new_parent_inode, new_name, ctx):
            path = self.path(inode)
            new = self.child(new_parent_inode, new_name)
            self.check("link", new)
            try:
                os.link(path, new, follow_symlinks=False)
                st = os.lstat(new)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note("link", new)
            self.remember(new, st)
            return self.attributes(st)

        def remove(self, op, parent_inode, name, action):
            """Removes a name (unlink, rmdir): the armed fault first, then the call."""
            path = self.child(parent_inode, name)
            self.check(op, path)
            try:
                action(path)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note(op, path)
            self.forget_path(path)

        async def unlink(self, parent_inode, name, ctx):
            self.remove("unlink", parent_inode, name, os.unlink)

        async def rmdir(self, parent_inode, name, ctx):
            self.remove("rmdir", parent_inode, name, os.rmdir)

        async def rename(self, parent_inode_old, name_old, parent_inode_new, name_new, flags, ctx):
            old = self.child(parent_inode_old, name_old)
            new = self.child(parent_inode_new, name_new)
            self.check("rename", old)
            try:
                if flags & pyfuse3.RENAME_EXCHANGE:
                    self.renameat2(old, new, 2)
                    parked = new + "\0exchange"
                    self.moved(new, parked)
                    self.moved(old, new)
                    self.moved(parked, old)
                else:
                    if flags & pyfuse3.RENAME_NOREPLACE:
                        self.renameat2(old, new, 1)
                    else:
                        os.rename(old, new)
                    self.forget_path(new)
                    self.moved(old, new)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note("rename", old, "-> " + self.relative(new))

        @staticmethod
        def renameat2(old, new, flags):
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.renameat2(-100, os.fsencode(old), -100, os.fsencode(new), flags) != 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code))

        def own(self, path, ctx):
            if os.geteuid() == 0 and ctx is not None and (ctx.uid, ctx.gid) != (0, 0):
                os.chown(path, ctx.uid, ctx.gid, follow_symlinks=False)

        async def open(self, inode, flags, ctx):
            path = self.path(inode)
            self.check("open", path, mutating=False)
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC):
                self.check("open-write", path, mutating=bool(flags & os.O_TRUNC))
            try:
                fd = os.open(path, flags & ~(os.O_CREAT | os.O_EXCL | os.O_NOCTTY))
            except OSError as error:
                raise FUSEError(error.errno)
            self.handles[fd] = self.relative(path)
            return pyfuse3.FileInfo(fh=fd)

        async def create(self, parent_inode, name, mode, flags, ctx):
            path = self.child(parent_inode, name)
            self.check("create", path)
            try:
                fd = os.open(path, flags | os.O_CREAT, mode)
                self.own(path, ctx)
                st = self.created(path)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note("create", path)
            self.handles[fd] = self.relative(path)
            self.remember(path, st)
            return (pyfuse3.FileInfo(fh=fd), self.attributes(st))

        def handle_path(self, fh):
            return os.path.join(self.source, self.handles.get(fh, ""))

        async def read(self, fh, off, size):
            self.check("read", self.handle_path(fh), mutating=False)
            try:
                return os.pread(fh, size, off)
            except OSError as error:
                raise FUSEError(error.errno)

        async def write(self, fh, off, buf):
            path = self.handle_path(fh)
            self.check("write", path)
            try:
                written = os.pwrite(fh, buf, off)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note("write", path, f"{written}@{off}")
            return written

        async def flush(self, fh):
            self.check("flush", self.handle_path(fh), mutating=False)

        async def release(self, fh):
            path = self.handle_path(fh)
            self.handles.pop(fh, None)
            try:
                self.check("release", path, mutating=False)
            finally:
                os.close(fh)

        async def fsync(self, fh, datasync):
            path = self.handle_path(fh)
            self.check("fsync", path)
            try:
                os.fdatasync(fh) if datasync else os.fsync(fh)
            except OSError as error:
                raise FUSEError(error.errno)
            if self.model:
                self.model.file_synced(fh, self.relative(path))
            self.note("fsync", path)

        async def statfs(self, ctx):
            self.check("statfs", "", mutating=False)
            st = os.statvfs(self.source)
            data = pyfuse3.StatvfsData()
            for attr in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail", "f_namemax"):
                setattr(data, attr, getattr(st, attr))
            return data

        async def setxattr(self, inode, name, value, ctx):
            path = self.path(inode)
            self.check("setxattr", path)
            try:
                os.setxattr(path, name, value, follow_symlinks=False)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note("setxattr", path, os.fsdecode(name))

        async def getxattr(self, inode, name, ctx):
            path = self.path(inode)
            self.check("getxattr", path, mutating=False)
            try:
                return os.getxattr(path, name, follow_symlinks=False)
            except OSError as error:
                raise FUSEError(error.errno)

        async def listxattr(self, inode, ctx):
            path = self.path(inode)
            self.check("listxattr", path, mutating=False)
            try:
                return [os.fsencode(name) for name in os.listxattr(path, follow_symlinks=False)]
            except OSError as error:
                raise FUSEError(error.errno)

        async def removexattr(self, inode, name, ctx):
            path = self.path(inode)
            self.check("removexattr", path)
            try:
                os.removexattr(path, name, follow_symlinks=False)
            except OSError as error:
                raise FUSEError(error.errno)
            self.note("removexattr", path, os.fsdecode(name))

        # -- control

        def command(self, words):
            if not words:
                raise ValueError("empty command")
            verb, arguments = words[0], words[1:]
            if verb == "ping":
                return {}
            if verb == "fail":
                if len(arguments) < 2:
                    raise ValueError("fail OP ERRNO [count=N] [skip=N] [path=GLOB]")
                op = ALIASES.get(arguments[0], arguments[0])
                if op not in FAULT_OPS:
                    raise ValueError(f"unknown operation {arguments[0]!r} (one of {', '.join(sorted(FAULT_OPS))})")
                options = {"count": "1", "skip": "0", "path": "*"}
                for option in arguments[2:]:
                    key, _, value = option.partition("=")
                    if key not in options:
                        raise ValueError(f"unknown option {option!r}")
                    options[key] = value
                fault = Fault(op, parse_errno(arguments[1]), int(options["count"]), int(options["skip"]), options["path"])
                self.faults.append(fault)
                return {"fault": fault.describe()}
            if verb == "clear":
                self.faults = []
                return {}
            if verb == "stats":
                return {"counts": self.counts, "faults": [fault.describe() for fault in self.faults],
                        "sequence": self.sequence, "crashed": self.crashed, "open": sorted(self.handles.values()),
                        "points": len(self.model.points) if self.model else None}
            if self.model is None:
                raise ValueError(f"{verb} needs --crash-model")
            if verb == "sync":
                self.model.checkpoint("sync")
                return {"points": len(self.model.points)}
            if verb == "points":
                return {"points": [{"index": index, "kind": point["kind"], "path": point["path"], "sequence": point["sequence"]}
                                   for index, point in enumerate(self.model.points)]}
            if verb == "durable-state":
                if len(arguments) != 2:
                    raise ValueError("durable-state K DEST")
                DurableModel.write_out(self.model.state_after(int(arguments[0])), arguments[1])
                return {}
            if verb == "crash":
                if len(arguments) != 1:
                    raise ValueError("crash DEST")
                self.crash(arguments[0])
                return {}
            if verb == "crash-after":
                if len(arguments) != 2:
                    raise ValueError("crash-after N DEST")
                self.crash_after = (int(arguments[0]), arguments[1])
                return {}
            raise ValueError(f"unknown command {verb!r}")

    return FaultFS


async def serve_control(trio, filesystem, socket_path):
    listener = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(socket_path):
        os.unlink(socket_path)
    await listener.bind(socket_path)
    os.chmod(socket_path, 0o600)
    listener.listen(8)
    while True:
        client, _ = await listener.accept()
        with client:
            try:
                request = b""
                while not request.endswith(b"\n"):
                    chunk = await client.recv(65536)
                    if not chunk:
                        break
                    request += chunk
                try:
                    reply = {"ok": True, **filesystem.command(json.loads(request))}
                except Exception as error:  # a bad command is an answer, never the end of the filesystem
                    reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
                data = (json.dumps(reply) + "\n").encode()
                while data:
                    data = data[await client.send(data):]
            except OSError:
                pass  # the client went away


def mount(arguments):
    import pyfuse3
    import trio

    log = open(arguments.log, "a") if arguments.log else None
    filesystem = make_operations(pyfuse3)(arguments.source, arguments.crash_model, log)
    options = set(pyfuse3.default_options)
    options.add("fsname=faultfs")
    options.add("subtype=faultfs")
    if arguments.allow_other:
        options.add("allow_other")
    pyfuse3.init(filesystem, arguments.mountpoint, options)

    async def main():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_control, trio, filesystem, arguments.control)

            async def on_signals():
                with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        pyfuse3.terminate()
                        return

            nursery.start_soon(on_signals)

            async def on_orphaning(parent):
                while os.getppid() == parent:
                    await trio.sleep(0.5)
                pyfuse3.terminate()

            if arguments.exit_with_parent:
                nursery.start_soon(on_orphaning, os.getppid())
            await pyfuse3.main()
            nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        pyfuse3.close(unmount=True)
        if os.path.exists(arguments.control):
            os.unlink(arguments.control)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    mounting = commands.add_parser("mount", help="mount SOURCE at MOUNTPOINT (foreground)")
    mounting.add_argument("source")
    mounting.add_argument("mountpoint")
    mounting.add_argument("--control", required=True, help="the control socket's path (outside the mount)")
    mounting.add_argument("--crash-model", action="store_true", help="keep the durable state (crash, durable-state)")
    mounting.add_argument("--log", help="append one line per mutating operation here")
    mounting.add_argument("--allow-other", action="store_true")
    mounting.add_argument("--exit-with-parent", action="store_true", help="unmount and exit once the parent process is gone")
    controlling = commands.add_parser("ctl", help="send a command to a running faultfs")
    controlling.add_argument("socket")
    controlling.add_argument("words", nargs="+")
    arguments = parser.parse_args()
    if arguments.command == "mount":
        mount(arguments)
        return 0
    reply = control(arguments.socket, arguments.words)
    print(json.dumps(reply))
    return 0 if reply.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
