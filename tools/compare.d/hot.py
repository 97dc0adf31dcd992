#!/usr/bin/env python3
"""Names the lab plugin's hot instructions (tools/compare --hot N).

The plugin's hot=N lists, per counting window, the N user-space instruction
addresses that made the most remote LLC misses ("hot W pc=0x...
cpu_node=C page_node=P remote_misses=M remote_accesses=A"). The placement
shim (place_threads.c, PLACE_THREADS_LOG) logs every loaded object with its
load base as the process exits ("object PATH base=HEX"). An address lies in
the object with the highest base at or below it whose PT_LOAD segments cover
it; addr2line names it there (innermost inlined function, and the function it
was inlined into).

  hot.py --dir OUT --labels vanilla,numa [--alloc-code A,B]   every run of a
      tools/compare run directory: runs/PREFIX.hot per run, and hot.md (per
      allocator, summed over its repetitions, by function; with the
      allocators' code as the shim knows it, how much of the allocator's
      remote misses the lists cover)
  hot.py --accesses FILE --objects FILE [--window W]   one window, on stdout

Objects are read at the paths the guest saw, which are the host's (the lab
guest keeps host paths). With several processes under the shim, the last one
to exit names the addresses (a benchmark's main process, usually).
"""
import argparse
import collections
import os
import re
import struct
import subprocess
import sys

HOT_RE = re.compile(
    r"^hot (\d+) pc=0x([0-9a-f]+) cpu_node=(\d+) page_node=(\d+)"
    r" remote_misses=(\d+) remote_accesses=(\d+)$")
DROPPED_RE = re.compile(r"^hot (\d+) dropped=(\d+)$")
TOP_FUNCTIONS = 25


def read_hot(path, window=None):
    """(hot lines as dicts, dropped count) of one window of an accesses file."""
    lines, dropped = [], 0
    with open(path) as f:
        for line in f:
            m = HOT_RE.match(line.strip())
            if m and (window is None or int(m.group(1)) == window):
                lines.append({"pc": int(m.group(2), 16), "cpu_node": int(m.group(3)),
                              "page_node": int(m.group(4)), "misses": int(m.group(5)),
                              "accesses": int(m.group(6))})
                continue
            m = DROPPED_RE.match(line.strip())
            if m and (window is None or int(m.group(1)) == window):
                dropped += int(m.group(2))
    return lines, dropped


def read_objects(path):
    """[(base, path)] of the last process the shim logged."""
    blocks, current = [], None
    if not os.path.exists(path):
        return []
    with open(path) as f:
        for line in f:
            if line.startswith("main "):
                current = []
                blocks.append(current)
            elif line.startswith("object ") and current is not None:
                name, _, base = line[len("object "):].strip().rpartition(" base=")
                current.append((int(base, 16), name))
    return blocks[-1] if blocks else []


_extents = {}  # path -> load_extent(path)


def load_extent(path):
    """(lowest, highest) virtual address of an ELF file's PT_LOAD segments."""
    if path in _extents:
        return _extents[path]
    extent = None
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1:
                phoff, = struct.unpack_from("<Q", head, 32)
                phentsize, phnum = struct.unpack_from("<HH", head, 54)
                f.seek(phoff)
                table = f.read(phentsize * phnum)
                lo, hi = None, None
                for i in range(phnum):
                    p_type, _, _, vaddr, _, _, memsz = struct.unpack_from(
                        "<IIQQQQQ", table, i * phentsize)
                    if p_type == 1:  # PT_LOAD
                        lo = vaddr if lo is None else min(lo, vaddr)
                        hi = vaddr + memsz if hi is None else max(hi, vaddr + memsz)
                if lo is not None:
                    extent = (lo, hi)
    except OSError:
        pass
    _extents[path] = extent
    return extent


def locate(pc, objects):
    """(path, address inside the file) of pc, or (None, pc)."""
    for base, path in sorted(objects, reverse=True):
        if base > pc:
            continue
        extent = load_extent(path)
        if extent and extent[0] <= pc - base < extent[1]:
            return path, pc - base
    return None, pc


def addr2line(path, addresses):
    """{address: (innermost function, outermost function)} via addr2line."""
    names = {}
    if not addresses:
        return names
    ordered = sorted(set(addresses))
    try:
        out = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", path] +
                             ["0x%x" % a for a in ordered],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return names
    groups, current = [], None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            current = []
            groups.append(current)
            i += 1
            continue
        if current is not None:
            current.append(lines[i])  # function; the next line is file:line
        i += 2
    for address, functions in zip(ordered, groups):
        functions = [f for f in functions if f and f != "??"] or ["??"]
        names[address] = (functions[0], functions[-1])
    return names


def name_lines(lines, objects):
    """Adds object, offset, function, caller to each hot line."""
    by_object = collections.defaultdict(list)
    for h in lines:
        h["object"], h["offset"] = locate(h["pc"], objects)
        if h["object"]:
            by_object[h["object"]].append(h["offset"])
    names = {path: addr2line(path, offsets) for path, offsets in by_object.items()}
    for h in lines:
        inner, outer = names.get(h["object"], {}).get(h["offset"], ("??", "??"))
        h["function"], h["caller"] = inner, outer
    return lines


def is_alloc_code(h, spec):
    """Whether a named hot line lies in the allocator's code: its library's
    file name, or NAME@BEGIN-END (hex offsets into NAME: glibc's malloc.c)."""
    if not spec or not h["object"]:
        return False
    name, _, span = spec.partition("@")
    if os.path.basename(h["object"]) != name:
        return False
    if not span:
        return True
    begin, _, end = span.partition("-")
    return int(begin, 16) <= h["offset"] < int(end, 16)


def alloc_remote_misses(path):
    """The allocator's remote LLC misses in a run's split lines (--pin)."""
    total = 0
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) < 5 or fields[0] != "split" or fields[2] != "code=alloc":
                continue
            for field in fields[4:]:
                if field.startswith("misses="):
                    cells = [int(v) for v in field[len("misses="):].split(":")]
                    n = int(round(len(cells) ** 0.5))
                    total += sum(v for i, v in enumerate(cells) if i // n != i % n)
    return total


def describe(h):
    where = "%s+0x%x" % (os.path.basename(h["object"]), h["offset"]) if h["object"] else "unknown object"
    func = h["function"] if h["caller"] == h["function"] else "%s (in %s)" % (h["function"], h["caller"])
    return "%10d %10d  %d->%d  %s  [%s]" % (h["misses"], h["accesses"], h["cpu_node"],
                                             h["page_node"], func, where)


def write_run(f, lines, dropped, objects):
    f.write("# remote LLC misses, remote accesses, vCPU's node -> page's node, function [object+offset]\n")
    if not objects:
        f.write("# no object list (the program did not exit through the shim): addresses only\n")
    for h in lines:
        f.write(describe(h) + "\n")
    if dropped:
        f.write("# %d remote accesses at addresses past the plugin's table (not listed)\n" % dropped)


def one_window(args):
    lines, dropped = read_hot(args.accesses, args.window)
    objects = read_objects(args.objects)
    write_run(sys.stdout, name_lines(lines, objects), dropped, objects)


def run_directory(args):
    labels = args.labels.split(",")
    codes = (args.alloc_code or "").split(",")
    codes += [""] * (len(labels) - len(codes))
    runs = []  # (label, prefix)
    with open(os.path.join(args.dir, "runs.tsv")) as f:
        for row in f:
            fields = row.rstrip("\n").split("\t")
            runs.append((labels[int(fields[3])], fields[2]))
    # Per label, by (caller, function, object): remote misses and accesses.
    misses = {label: collections.Counter() for label in labels}
    accesses = {label: collections.Counter() for label in labels}
    reps = collections.Counter()
    alloc_listed, alloc_total = collections.Counter(), collections.Counter()
    for label, prefix in runs:
        base = os.path.join(args.dir, prefix)
        lines, dropped = read_hot(base + ".accesses")
        objects = read_objects(base + ".objects")
        name_lines(lines, objects)
        with open(base + ".hot", "w") as f:
            write_run(f, lines, dropped, objects)
        reps[label] += 1
        code = codes[labels.index(label)]
        alloc_listed[label] += sum(h["misses"] for h in lines if is_alloc_code(h, code))
        alloc_total[label] += alloc_remote_misses(base + ".accesses")
        for h in lines:
            key = (h["caller"], h["function"],
                   os.path.basename(h["object"]) if h["object"] else "?")
            misses[label][key] += h["misses"]
            accesses[label][key] += h["accesses"]
    with open(os.path.join(args.dir, "hot.md"), "w") as f:
        f.write("# The instructions behind the remote LLC misses (--hot)\n\n")
        f.write("Summed over each allocator's runs, by function (the innermost inlined\n"
                "function, and the function it was inlined into). Only each run's\n"
                "hottest instructions are listed, so the sums are lower bounds.\n")
        for label in labels:
            f.write("\n## %s (%d runs)\n\n" % (label, reps[label]))
            if alloc_total[label]:
                f.write("The allocator's code made %d remote LLC misses; the hot lists "
                        "hold %d of them (%.0f%%).\n\n" % (
                            alloc_total[label], alloc_listed[label],
                            100.0 * alloc_listed[label] / alloc_total[label]))
            f.write("| remote misses | remote accesses | function | inlined into | object |\n")
            f.write("|---:|---:|---|---|---|\n")
            for key, count in misses[label].most_common(TOP_FUNCTIONS):
                caller, function, obj = key
                f.write("| %d | %d | %s | %s | %s |\n" % (
                    count, accesses[label][key], function.replace("|", "\\|"),
                    "" if caller == function else caller.replace("|", "\\|"), obj))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir")
    p.add_argument("--labels")
    p.add_argument("--alloc-code", help="per label, what the shim reports as the "
                   "allocator's code (PLACE_ALLOC_CODE), comma-separated")
    p.add_argument("--accesses")
    p.add_argument("--objects")
    p.add_argument("--window", type=int)
    args = p.parse_args()
    if args.dir and args.labels:
        run_directory(args)
    elif args.accesses and args.objects:
        one_window(args)
    else:
        p.error("give --dir and --labels, or --accesses and --objects")


if __name__ == "__main__":
    main()
