"""Makes a local folder of links go from one listing to another as the
mount's event replay does in a view: each entry that stays is renamed (one
rename per entry, never onto a name in use), those that go are unlinked, new
ones linked. Run against the same listings a view went through, it gives a
file manager the same events on the local disk: the baseline for following.

Usage: transition.py DIR OLD NEW   (OLD, NEW: lines of NAME<TAB>TARGET)
"""
import os
import sys


def listing(path):
    entries = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as file:
        for line in file:
            name, _, target = line.rstrip("\n").partition("\t")
            entries[name] = target
    return entries


def main():
    folder, old, new = sys.argv[1], listing(sys.argv[2]), listing(sys.argv[3])
    old_by_target = {target: name for name, target in old.items()}
    new_by_target = {target: name for name, target in new.items()}
    for target, name in old_by_target.items():
        if target not in new_by_target:
            os.unlink(os.path.join(folder, name))
    # Renames whose destination is free go first; a cycle parks one entry.
    pending = {old_by_target[t]: n for t, n in new_by_target.items() if t in old_by_target and old_by_target[t] != n}
    in_use = set(name for name in old if old[name] in new_by_target)
    parked = 0
    while pending:
        ready = [source for source, destination in pending.items() if destination not in in_use]
        if not ready:
            source = next(iter(pending))
            parked += 1
            hidden = f".parked-{parked}"
            os.rename(os.path.join(folder, source), os.path.join(folder, hidden))
            pending[hidden] = pending.pop(source)
            in_use.discard(source)
            in_use.add(hidden)
            continue
        for source in ready:
            destination = pending.pop(source)
            os.rename(os.path.join(folder, source), os.path.join(folder, destination))
            in_use.discard(source)
            in_use.add(destination)
    for target, name in new_by_target.items():
        if target not in old_by_target:
            os.symlink(target, os.path.join(folder, name))


if __name__ == "__main__":
    main()
