#!/usr/bin/python3
"""The soak's driver (scripts/soak.sh runs it; standard library only).

For DURATION seconds, against a mounted BACKING at MOUNT:
  * one writer makes random changes, one at a time: in BACKING (a bundle
    added, edited, retitled, tagged or untagged, deleted; each saved by
    rename under the item's flock) and through views (ln -s into a tag
    folder, rm from one, mv in by-name to retitle). A change in BACKING
    gives the item a unique title and the newest mtime, so it is visible
    once by-modified/0001 <title>.hpwebsite exists: that wait is the
    change's latency;
  * reader threads list every view, read links and payloads;
  * every KILL_EVERY seconds the daemon gets SIGKILL, the dead mount is
    cleared with `queryfs unmount`, a few changes are made while nothing
    is mounted, and BACKING is mounted again;
  * every REPORT_EVERY seconds (and after each remount) the writer stops,
    and every view is compared with `queryfs ls --no-index BACKING VIEW`
    until they agree (or a mismatch is counted after SETTLE seconds); one
    line says the daemon's RSS and open descriptors, changes so far and
    the latency p50/p99 of the interval.
Exits 1 if any view did not settle, a change never showed, or a reader
failed while the mount was up.
"""

import argparse
import concurrent.futures
import errno
import fcntl
import os
import plistlib
import random
import shutil
import subprocess
import sys
import threading
import time
import uuid


def now():
    return time.monotonic()


def percentile(samples, fraction):
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Soak:
    def __init__(self, arguments):
        self.queryfs = arguments.queryfs
        self.backing = arguments.backing
        self.mount = arguments.mount
        self.log = arguments.log
        self.mount_options = arguments.mount_options.split()
        self.duration = arguments.duration
        self.report_every = arguments.report_every
        self.kill_every = arguments.kill_every
        self.settle = arguments.settle
        self.random = random.Random(arguments.seed)
        self.counter = 0
        self.items = sorted(name for name in os.listdir(self.backing) if not name.startswith("."))
        self.changes = {}  # kind -> count
        self.failures = {}  # "kind: error" -> count (a view edit refused, e.g. an item gone)
        self.latencies = []  # this interval's, seconds
        self.all_latencies = []
        self.edit_times = []
        self.history = {}  # item -> [(seconds into the run, what)]: said when a view of it goes wrong
        self.timeouts = 0
        self.mismatches = 0
        self.reader_errors = 0
        self.reads = 0
        self.remounts = 0
        self.lives = []  # per daemon: (pid, rss and fds after mount, rss and fds at its end)
        self.mounted = threading.Event()
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    # -- the daemon

    def daemon_pid(self):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as file:
                    words = file.read().split(b"\0")
            except OSError:
                continue
            if b"mount" in words and b"-f" in words and os.fsencode(self.mount) in words:
                return int(entry)
        return None

    def resources(self):
        pid = self.daemon_pid()
        if pid is None:
            return None, None, None
        rss = None
        try:
            with open(f"/proc/{pid}/status") as file:
                for line in file:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1]) * 1024
            fds = len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            return pid, None, None
        return pid, rss, fds

    def is_mounted(self):
        with open("/proc/mounts") as file:
            return any(line.split()[1] == self.mount for line in file)

    def do_mount(self):
        started = now()
        subprocess.run([self.queryfs, "mount", self.backing, self.mount, "--log", self.log] + self.mount_options, check=True)
        took = now() - started
        pid, rss, fds = self.resources()
        self.lives.append({"pid": pid, "start": (rss, fds), "end": None})
        self.mounted.set()
        return took

    def kill_and_remount(self):
        self.mounted.clear()
        time.sleep(0.2)  # readers out of the mount
        pid, rss, fds = self.resources()
        self.lives[-1]["end"] = (rss, fds)
        os.kill(pid, 9)
        deadline = now() + 10
        while os.path.exists(f"/proc/{pid}") and now() < deadline:
            time.sleep(0.02)
        # The connection guard aborts the connection: the mount answers ENOTCONN.
        try:
            os.listdir(self.mount)
            state = "still answering"
        except OSError as error:
            state = errno.errorcode.get(error.errno, str(error.errno))
        subprocess.run([self.queryfs, "unmount", self.mount], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.is_mounted():
            subprocess.run(["fusermount3", "-u", "-z", self.mount])
        if self.is_mounted():
            raise SystemExit(f"soak: {self.mount} still mounted after the kill")
        for _ in range(5):  # changes nobody is watching
            self.change_in_backing(measure=False)
        took = self.do_mount()
        self.remounts += 1
        self.say(f"killed daemon {pid} (-9; the mount then answered {state}), changed 5 items unmounted, mounted again in {took:.2f} s")

    # -- changes in BACKING

    def unique_title(self, kind):
        self.counter += 1
        return f"soak {self.counter} {kind}"

    def entry_visible(self, title):
        width = max(4, len(str(len(self.items))))
        return os.path.lexists(f"{self.mount}/by-modified/{1:0{width}d} {title}.hpwebsite")

    def wait(self, condition):
        started = now()
        deadline = started + 10
        while not condition():
            if now() > deadline:
                self.timeouts += 1
                return None
            time.sleep(0.0005)
        return now() - started

    @staticmethod
    def tick():
        # File times come from a coarse clock: two changes in one tick tie in
        # by-modified and then rank by name. Waiting it out keeps "newest" strict.
        time.sleep(0.012)

    def save(self, bundle, payload):
        """Writes the payload by rename, under the item's exclusive lock (SPEC §5)."""
        folder = os.open(bundle, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)
            temporary = os.path.join(bundle, ".soak-payload.tmp")
            with open(temporary, "wb") as file:
                plistlib.dump(payload, file)
            os.rename(temporary, os.path.join(bundle, "payload.plist"))
        finally:
            os.close(folder)

    def load(self, name):
        try:
            with open(os.path.join(self.backing, name, "payload.plist"), "rb") as file:
                return plistlib.load(file)
        except (OSError, plistlib.InvalidFileException, ValueError):
            return {"webTitle": name, "isArchived": False, "tags": []}

    def note(self, item, what):
        self.history.setdefault(item, []).append((now() - self.started, what))

    def measure(self, condition, item, what):
        latency = self.wait(condition)
        if latency is not None:
            self.latencies.append(latency)
            self.note(item, f"{what}: showed in {latency * 1000:.0f} ms")
        else:
            self.note(item, f"{what}: NEVER SHOWED")
            self.say(f"{what} of {item} never showed in by-modified (10 s)")
            self.tell(item)

    def tell(self, item):
        """What the soak did to `item`, and what BACKING and the mount say of it now."""
        for moment, what in self.history.get(item, [])[-8:]:
            print(f"           {moment:6.1f}s {what}", flush=True)
        title = self.load(item).get("webTitle")
        try:
            with open(f"{self.mount}/bundles/{item}/payload.plist", "rb") as file:
                through = plistlib.load(file).get("webTitle")
        except Exception as error:  # noqa: BLE001 - any answer is a diagnosis
            through = f"({error})"
        print(f"           now: title in BACKING {title!r}, through bundles/ {through!r}", flush=True)

    def change_in_backing(self, measure=True):
        kinds = ["add", "edit", "retitle", "tag", "untag", "delete"]
        weights = [2, 3, 3, 2, 2, 2 if len(self.items) > 50 else 0]
        kind = self.random.choices(kinds, weights)[0]
        if kind == "delete":
            # The victim is made the newest first (a retitle, measured), so
            # its entry is at rank 1 until it goes.
            victim = self.random.choice(self.items)
            title = self.unique_title("retitle before delete")
            self.edit_payload(victim, "retitle", title, measure)
            shutil.rmtree(os.path.join(self.backing, victim))
            self.items.remove(victim)
            self.count("delete")
            if measure:
                self.measure(lambda: not self.entry_visible(title), victim, "delete")
            return
        title = self.unique_title(kind)
        if kind != "add":
            self.edit_payload(self.random.choice(self.items), kind, title, measure)
            return
        if measure:
            self.tick()
        name = f"{str(uuid.UUID(int=self.random.getrandbits(128))).upper()}.hpwebsite"
        temporary = os.path.join(self.backing, f".soak-new-{self.counter}")
        os.mkdir(temporary)
        payload = {"webTitle": title, "isArchived": self.random.random() < 0.2,
                   "tags": self.random.sample(["soak", "Work", "swift", "to read"], self.random.randint(0, 2))}
        with open(os.path.join(temporary, "payload.plist"), "wb") as file:
            plistlib.dump(payload, file)
        os.rename(temporary, os.path.join(self.backing, name))
        self.items.append(name)
        self.count("add")
        self.note(name, f"add {title!r}")
        if measure:
            self.measure(lambda: self.entry_visible(title), name, f"add {title!r}")

    def edit_payload(self, name, kind, title, measure):
        """A new title (so the change shows by name), and for `edit` the
        archived flag flipped, for `tag`/`untag` a tag added or removed."""
        payload = self.load(name)
        payload["webTitle"] = title
        tags = list(payload.get("tags") or [])
        if kind == "edit":
            payload["isArchived"] = not payload.get("isArchived", False)
        elif kind == "tag":
            tags.append(self.random.choice(["soak", "soak-two", "Work", "long read"]))
        elif kind == "untag" and tags:
            tags.pop(self.random.randrange(len(tags)))
        payload["tags"] = list(dict.fromkeys(tags))
        if measure:
            self.tick()
        self.save(os.path.join(self.backing, name), payload)
        self.count(kind)
        if measure:
            self.measure(lambda: self.entry_visible(title), name, f"{kind} to {title!r} in BACKING")
        else:
            self.note(name, f"{kind} to {title!r} in BACKING, unmounted")

    def count(self, kind):
        self.changes[kind] = self.changes.get(kind, 0) + 1

    # -- edits through views

    def edit_through_view(self):
        kind = self.random.choice(["ln -s", "rm", "mv"])
        started = now()
        try:
            if kind == "ln -s":
                tags = [name for name in os.listdir(f"{self.mount}/tag")]
                tag = self.random.choice(tags + ["soak"]) if tags else "soak"
                if not os.path.isdir(f"{self.mount}/tag/{tag}"):
                    os.mkdir(f"{self.mount}/tag/{tag}")
                item = self.random.choice(self.items)
                self.note(item, f"ln -s into tag/{tag}")
                os.symlink(f"{self.mount}/bundles/{item}", f"{self.mount}/tag/{tag}/x")
            elif kind == "rm":
                tags = os.listdir(f"{self.mount}/tag")
                if not tags:
                    return
                folder = f"{self.mount}/tag/{self.random.choice(tags)}"
                entries = os.listdir(folder)
                if not entries:
                    return
                entry = self.random.choice(entries)
                self.note(os.path.basename(os.readlink(f"{folder}/{entry}")), f"rm {folder[len(self.mount) + 1:]}/{entry}")
                os.unlink(f"{folder}/{entry}")
            else:
                entries = os.listdir(f"{self.mount}/by-name")
                entry, title = self.random.choice(entries), self.unique_title("mv")
                self.note(os.path.basename(os.readlink(f"{self.mount}/by-name/{entry}")), f"mv by-name/{entry} to {title!r}")
                os.rename(f"{self.mount}/by-name/{entry}", f"{self.mount}/by-name/{title}")
        except OSError as error:
            # EEXIST: ln -s of an item already tagged; EPERM: an item with no
            # fields to edit. Counted, not failures of the mount.
            key = f"{kind}: {errno.errorcode.get(error.errno, error.errno)}"
            if error.errno not in (errno.EEXIST, errno.EPERM, errno.ENOENT):
                self.say(f"view edit {kind}: {error}")
            self.failures[key] = self.failures.get(key, 0) + 1
            return
        self.edit_times.append(now() - started)
        self.count("view " + kind)

    # -- readers

    def reader(self, number):
        rng = random.Random(number)
        while not self.stopping.is_set():
            if not self.mounted.wait(0.1):
                continue
            try:
                views = ["by-name", "by-modified", "by-created", "unarchived", "archived", "conflicts"]
                views += ["tag/" + name for name in os.listdir(f"{self.mount}/tag")]
                for view in views:
                    if not self.mounted.is_set():
                        break
                    try:
                        entries = os.listdir(f"{self.mount}/{view}")
                    except FileNotFoundError:
                        continue  # a tag folder emptied meanwhile
                    for entry in rng.sample(entries, min(3, len(entries))):
                        try:
                            os.readlink(f"{self.mount}/{view}/{entry}")
                            with open(f"{self.mount}/{view}/{entry}/payload.plist", "rb") as file:
                                file.read()
                        except FileNotFoundError:
                            continue  # renamed or deleted since the listing
                    with self.lock:
                        self.reads += 1
            except OSError as error:
                if self.mounted.is_set():
                    with self.lock:
                        self.reader_errors += 1
                    self.say(f"reader {number}: {error}")
                    time.sleep(0.5)

    # -- checks

    def fresh(self, view):
        result = subprocess.run([self.queryfs, "ls", self.backing, "--no-index", "--", view], capture_output=True)
        return [line for line in result.stdout.split(b"\n") if line]

    def differences(self):
        result = subprocess.run([self.queryfs, "views", self.backing, "--no-index"], capture_output=True, check=True)
        views = [line.split(b"\t")[0].decode() for line in result.stdout.split(b"\n") if line]
        problems = []
        expected_tags = sorted(os.fsencode(view[4:]) for view in views if view.startswith("tag/"))
        mounted_tags = sorted(os.listdir(os.fsencode(f"{self.mount}/tag")))
        if expected_tags != mounted_tags:
            problems.append(f"tag folders: mount {len(mounted_tags)}, fresh {len(expected_tags)}: "
                            f"{sorted(set(mounted_tags) ^ set(expected_tags))[:5]}")
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            fresh = dict(zip(views, pool.map(self.fresh, views)))
        for view in views:
            try:
                mine = sorted(os.listdir(os.fsencode(f"{self.mount}/{view}")))
            except OSError as error:
                problems.append(f"{view}: {error}")
                continue
            if mine != fresh[view]:
                only_mount = sorted(set(mine) - set(fresh[view]))[:3]
                only_fresh = sorted(set(fresh[view]) - set(mine))[:3]
                problems.append(f"{view}: mount {len(mine)} entries, fresh {len(fresh[view])}; only in the mount {only_mount}, only fresh {only_fresh}")
        # The targets of one view, entry by entry.
        long = subprocess.run([self.queryfs, "ls", self.backing, "--no-index", "--long", "--", "by-name"], capture_output=True).stdout
        for line in long.split(b"\n"):
            if not line:
                continue
            name, _, target = line.partition(b"\t")
            try:
                mine = os.readlink(os.fsencode(f"{self.mount}/by-name/") + name)
            except OSError:
                mine = None
            if mine != target:
                problems.append(f"by-name/{os.fsdecode(name)}: mount -> {mine}, fresh -> {target}")
                self.stale = os.path.basename(os.fsdecode(target))
                break
        return problems

    def check(self):
        """Waits until every view equals a fresh reading; counts a mismatch if that takes more than SETTLE seconds."""
        started = now()
        self.stale = None
        problems = first = self.differences()
        while problems and now() - started < self.settle:
            time.sleep(0.5)
            problems = self.differences()
        if first and not problems:
            self.say(f"views settled after {now() - started:.1f} s; the first look found {len(first)} differences: {first[0]}")
        if problems:
            self.mismatches += len(problems)
            for problem in problems[:10]:
                self.say(f"MISMATCH after {self.settle:.0f} s: {problem}")
            if self.stale:
                self.say(f"{self.stale}, the first item by-name shows wrongly:")
                self.tell(self.stale)
        return now() - started

    # -- the run

    def say(self, text):
        print(f"[{now() - self.started:6.0f}s] {text}", flush=True)

    def report(self, checked):
        pid, rss, fds = self.resources()
        total = sum(self.changes.values())
        ms = lambda samples, fraction: f"{percentile(samples, fraction) * 1000:6.1f} ms" if samples else "     - ms"
        self.say(f"rss {rss / 1048576 if rss else float('nan'):6.1f} MB  fds {fds}  changes {total} (+{total - self.reported})  "
                 f"latency p50 {ms(self.latencies, 0.5)} p99 {ms(self.latencies, 0.99)} (n={len(self.latencies)})  "
                 f"view edits p99 {ms(self.edit_times[self.reported_edits:], 0.99)}  "
                 f"reads {self.reads}  remounts {self.remounts}  mismatches {self.mismatches}  views checked in {checked:.1f} s")
        self.all_latencies += self.latencies
        self.latencies = []
        self.reported = total
        self.reported_edits = len(self.edit_times)

    def run(self):
        self.started = now()
        self.reported = 0
        self.reported_edits = 0
        self.mounted.set()
        pid, rss, fds = self.resources()
        self.lives.append({"pid": pid, "start": (rss, fds), "end": None})
        self.say(f"soak of {len(self.items)} items for {self.duration} s: daemon {pid}, rss {rss / 1048576:.1f} MB, fds {fds}; "
                 f"report every {self.report_every} s, kill -9 every {self.kill_every} s")
        readers = [threading.Thread(target=self.reader, args=(number,), daemon=True) for number in range(2)]
        for thread in readers:
            thread.start()
        end = self.started + self.duration
        next_report = self.started + self.report_every
        next_kill = self.started + self.kill_every
        while now() < end:
            if self.random.random() < 0.3:
                self.edit_through_view()
            else:
                self.change_in_backing()
            if now() >= next_kill and now() < end - 10:
                self.kill_and_remount()
                self.report(self.check())
                next_kill = now() + self.kill_every
                next_report = now() + self.report_every
            elif now() >= next_report:
                self.report(self.check())
                next_report = now() + self.report_every
        self.report(self.check())
        self.stopping.set()
        for thread in readers:
            thread.join(5)
        pid, rss, fds = self.resources()
        self.lives[-1]["end"] = (rss, fds)
        self.summary()
        return 0 if self.mismatches == 0 and self.timeouts == 0 and self.reader_errors == 0 else 1

    def summary(self):
        first, last = self.lives[0], self.lives[-1]
        mb = lambda value: f"{value / 1048576:.1f} MB" if value else "?"
        print("== soak summary")
        print(f"  duration {now() - self.started:.0f} s, {len(self.items)} items at the end")
        print(f"  rss: {mb(first['start'][0])} at start, {mb(last['end'][0])} at end; fds: {first['start'][1]} at start, {last['end'][1]} at end")
        for number, life in enumerate(self.lives):
            end = life["end"] or (None, None)
            print(f"    daemon {number + 1} (pid {life['pid']}): rss {mb(life['start'][0])} -> {mb(end[0])}, fds {life['start'][1]} -> {end[1]}")
        print(f"  changes applied: {sum(self.changes.values())} ({', '.join(f'{k} {v}' for k, v in sorted(self.changes.items()))})")
        if self.failures:
            print(f"  view edits refused (expected races, not failures): {', '.join(f'{k} {v}' for k, v in sorted(self.failures.items()))}")
        latencies = self.all_latencies
        print(f"  change latency: p50 {percentile(latencies, 0.5) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
              f"max {max(latencies, default=float('nan')) * 1000:.1f} ms over {len(latencies)} samples; {self.timeouts} never showed (10 s)")
        print(f"  view edits: p50 {percentile(self.edit_times, 0.5) * 1000:.1f} ms, p99 {percentile(self.edit_times, 0.99) * 1000:.1f} ms")
        print(f"  kill -9 and remount: {self.remounts}; reads {self.reads}, reader errors while mounted {self.reader_errors}")
        print(f"  mismatches: {self.mismatches}")
        print("  PASS" if self.mismatches == 0 and self.timeouts == 0 and self.reader_errors == 0 else "  FAIL")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--queryfs", required=True)
    parser.add_argument("--backing", required=True)
    parser.add_argument("--mount", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--mount-options", default="", help="extra options for every mount, as one string")
    parser.add_argument("--duration", type=float, required=True)
    parser.add_argument("--report-every", type=float, default=60)
    parser.add_argument("--kill-every", type=float, default=180)
    parser.add_argument("--settle", type=float, default=30)
    parser.add_argument("--seed", type=int, default=7)
    return Soak(parser.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
