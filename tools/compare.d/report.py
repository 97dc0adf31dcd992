#!/usr/bin/env python3
"""The report of `tools/compare --cmd`: reads the run files that tools/compare.d/cmd.sh
left in a directory, prints the table, writes the JSON record (docs/compare.md has
its schema) and applies the ratio gate.

Exit status: 0; 1 when the gate fails (one line naming the figure) or cannot be
applied; 2 when the command failed under some allocator (reported loudly).

`report.py medians ...` is the median of the shell parts of tools/compare (the
benchmark tables, the memory table): the one median of tools/, see medians_main."""

import argparse
import json
import math
import os
import re
import shlex
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import model  # tools/compare.d/model.py, beside this file

SCHEMA = "numa-tcmalloc/compare-cmd/1"
PROG = "compare"
# Built-in figures, measured for every run: name -> (unit, better).
BUILTIN = {"wall": ("s", "lower"), "cpu": ("s", "lower"), "rss": ("KiB", "lower")}
UNIT_BYTES = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
MIB = 1 << 20


def median(values):
    """The median of tools/compare, for every table it prints."""
    return statistics.median(values)


def medians_main(argv):
    """`report.py medians --keys 1,4,6,2 --values 5[/DIVISOR],... [--format F] [--count]`:
    reads tab-separated rows on stdin, groups them by the key columns (1-based),
    and prints one row per group, in the order groups first appear: the keys,
    then for each value column the median of its numbers (each divided by
    DIVISOR; "-" is no value, and a group without values gets an empty
    field), printed with --format or exactly (repr), then with --count the
    group's number of rows."""
    p = argparse.ArgumentParser(prog="report.py medians")
    p.add_argument("--keys", required=True)
    p.add_argument("--values", required=True)
    p.add_argument("--format")
    p.add_argument("--count", action="store_true")
    args = p.parse_args(argv)
    keys = [int(k) - 1 for k in args.keys.split(",")]
    values = [(int(v.split("/")[0]) - 1, float(v.split("/")[1]) if "/" in v else 1.0)
              for v in args.values.split(",")]
    groups = {}
    for line in sys.stdin:
        cols = line.rstrip("\n").split("\t")
        g = groups.setdefault(tuple(cols[k] for k in keys), [[] for _ in values] + [0])
        g[-1] += 1
        for i, (col, div) in enumerate(values):
            if cols[col] != "-":
                g[i].append(float(cols[col]) / div)
    for key, g in groups.items():
        cells = list(key)
        for vals in g[:-1]:
            m = median(vals) if vals else None
            cells.append("" if m is None else (args.format % m if args.format else repr(m)))
        if args.count:
            cells.append(str(g[-1]))
        print("\t".join(cells))
    return 0


def say(msg):
    print(f"{PROG}: {msg}", file=sys.stderr)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def slug(label):
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


def parse_time(text):
    """GNU time's line (wall= user= sys= rss_kib=) plus wall_us= and rc= from run_one."""
    fields = dict(re.findall(r"(\w+)=(-?[0-9.]+)", text))
    rc = int(fields.get("rc", "-1"))
    signal = re.search(r"terminated by signal (\d+)", text)
    wall = int(fields["wall_us"]) / 1e6 if "wall_us" in fields else float(fields.get("wall", "nan"))
    figures = {
        "wall": wall,
        "cpu": float(fields.get("user", "nan")) + float(fields.get("sys", "nan")),
        "rss": float(fields.get("rss_kib", "nan")),
    }
    return figures, rc, int(signal.group(1)) if signal else None


def parse_metrics(text, warn):
    """METRIC name value [unit] [higher|lower]; the last line of a name wins."""
    metrics = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 3 or words[0] != "METRIC":
            continue
        name, value, rest = words[1], words[2], words[3:]
        try:
            value = float(value)
        except ValueError:
            warn(f"ignoring '{line.strip()}': '{words[2]}' is not a number")
            continue
        if name in BUILTIN:
            warn(f"ignoring METRIC {name}: the name is taken by a built-in figure")
            continue
        better = "lower"
        unit = ""
        for w in rest:
            if w in ("higher", "lower"):
                better = w
            elif not unit:
                unit = w
        metrics[name] = (value, unit, better)
    return metrics


def number_and_label(part):
    """'64.0 MiB system' or 'system: 64.0 MiB' -> (value, unit, 'system'); None without a number."""
    m = re.search(r"(-?[0-9]+(?:\.[0-9]+)?)\s*(B|KiB|MiB|GiB)?(?![\w.])", part)
    if not m:
        return None
    label = (part[:m.start()] + " " + part[m.end():]).replace(":", " ").strip()
    return (float(m.group(1)), m.group(2), label) if label else None


def parse_numa_stats(text):
    """The blocks TCMALLOC_NUMA_STATS=1 prints at exit, one per process, summed.
    Keyed off labels, not positions: each ';'- or ','-separated part is a number
    (with a unit for sizes) and a label, in either order, so that small format
    changes across rebases still parse. None when no block was printed."""
    stats = {"processes": 0, "active_processes": 0, "nodes": {}, "counters": {}}
    for line in text.splitlines():
        if not line.startswith("NUMA"):
            continue
        node = re.match(r"NUMA node\s*(\d+)\s*:(.*)", line)
        if node:
            fields = stats["nodes"].setdefault(node.group(1), {})
            for part in re.split(r"[;,]", node.group(2)):
                parsed = number_and_label(part)
                if parsed and (parsed[1] or "bytes" in parsed[2]):
                    value, unit, label = parsed
                    key = slug(label.replace("bytes", "")) + "_bytes"
                    fields[key] = fields.get(key, 0) + round(value * UNIT_BYTES[unit or "B"])
            continue
        if line.startswith("NUMA:"):
            stats["processes"] += 1
            if "inactive" in line:
                continue
            stats["active_processes"] += 1
        counters = stats["counters"]
        for part in re.split(r"[;,]", line.split(":", 1)[-1]):
            parsed = number_and_label(part)
            if not parsed or parsed[1]:
                continue
            key = slug(parsed[2])
            value = int(parsed[0])
            # Node counts describe the process; the rest are events, summed over processes.
            counters[key] = max(counters.get(key, 0), value) if "node" in key else counters.get(key, 0) + value
    return stats if stats["processes"] else None


def parse_placement(text):
    """Lines 'pid=P N0=KiB N1=KiB ...' from numa_maps_at_exit.so, summed over processes."""
    nodes = {}
    processes = 0
    for line in text.splitlines():
        if not line.startswith("pid="):
            continue
        processes += 1
        for node, kib in re.findall(r"\bN(\d+)=(\d+)", line):
            nodes[node] = nodes.get(node, 0) + int(kib) * 1024
    return {"processes": processes, "node_bytes": nodes} if processes else None


def matrices(fields):
    """accesses=A00:A01:... misses=... -> square matrices (row = vCPU's node)."""
    flat = {k: [int(x) for x in fields[k].split(":")] for k in ("accesses", "misses")}
    n = math.isqrt(len(flat["accesses"]))
    return n, {k: [v[i * n:(i + 1) * n] for i in range(n)] for k, v in flat.items()}


def parse_accesses(text):
    """The window line of the lab's access plugin for one run (tools/lab-plugin/numa_accesses.c):
    "window N accesses=A00:A01:... misses=... loads=L stores=S kernel=K io=I unknown=U",
    matrices row-major, row = the vCPU's node, column = the page's node, and with --pin its
    split by code and memory ("ranges N ...", "split N code=C mem=M accesses=... misses=...")
    as split[C][M] = {accesses, llc_misses}. None without a window line."""
    out = None
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] not in ("window", "ranges", "split", "vcpu", "faults"):
            continue
        fields = dict(w.split("=", 1) for w in words[2:] if "=" in w)
        if words[0] == "window":
            n, matrix = matrices(fields)
            out = {"window": int(words[1]), "nodes": n,
                   "accesses": matrix["accesses"], "llc_misses": matrix["misses"],
                   **{k: int(fields[k]) for k in ("loads", "stores", "kernel", "io", "unknown") if k in fields}}
        elif out and words[0] == "vcpu":
            user, kernel = (int(x) for x in fields["insns"].split(":"))
            out.setdefault("vcpus", []).append({
                "vcpu": int(words[2]), "node": int(fields["node"]), "insns_user": user, "insns_kernel": kernel,
                "faults": int(fields["faults"]),
                **{k: [int(x) for x in fields[k].split(":")] for k in ("accesses", "misses", "kaccesses", "kmisses", "smisses", "ksmisses") if k in fields}})
        elif out and words[0] == "faults":
            out["fault_entry"] = fields.get("entry")
        elif out and words[0] == "ranges":
            out["ranges"] = {k: int(v) for k, v in fields.items()}
        elif out and words[0] == "split":
            _, matrix = matrices(fields)
            out.setdefault("split", {}).setdefault(fields["code"], {})[fields["mem"]] = {
                "accesses": matrix["accesses"], "llc_misses": matrix["misses"]}
    return out


def parse_access_model(text):
    """The plugin's config line: "config nodes=2 vcpus=2 layout=ramblock llc=2097152/16/64/lru"."""
    for line in text.splitlines():
        if line.startswith("config "):
            fields = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            size, ways, line_bytes, repl = fields["llc"].split("/")
            return {"layout": fields.get("layout"),
                    "llc": {"size_bytes": int(size), "ways": int(ways), "line_bytes": int(line_bytes),
                            "replacement": {"lru": "LRU", "plru": "tree-PLRU"}.get(repl, repl)}}
    return None


def load_runs(d, warn):
    allocators = []
    for line in read(os.path.join(d, "allocators.tsv")).splitlines():
        label, base, library, *env = line.split("\t")
        allocators.append({"name": label, "base": base, "library": library or None,
                           "env": dict(e.split("=", 1) for e in env if e)})
    runs = []
    for line in read(os.path.join(d, "runs.tsv")).splitlines():
        order, rep, prefix, _, label = line.split("\t")
        path = os.path.join(d, prefix)
        figures, rc, signal = parse_time(read(path + ".time"))
        metrics = parse_metrics(read(path + ".out"), warn)
        runs.append({
            "order": int(order), "rep": int(rep), "allocator": label,
            "exit_status": rc, "signal": signal,
            "figures": {**figures, **{k: v[0] for k, v in metrics.items()}},
            "metric_info": {k: v[1:] for k, v in metrics.items()},
            "numa_stats": parse_numa_stats(read(path + ".err")),
            "placement": parse_placement(read(path + ".maps")),
            "accesses": parse_accesses(read(path + ".accesses")),
            "stdout": path + ".out", "stderr": path + ".err",
        })
    return allocators, runs


def info_figures(run, lab_nodes):
    """Per-run figures that describe what happened, not how fast: no ratio.
    Placement lists every node of the guest, those without pages too."""
    out = {}
    st = run["numa_stats"]
    if st:
        for node, fields in sorted(st["nodes"].items(), key=lambda kv: int(kv[0])):
            if "system_bytes" in fields:
                out[f"numa.node{node}.system"] = (fields["system_bytes"] / MIB, "MiB")
        for key, name in (("remote_free_objects", "numa.remote_frees"), ("thread_migrations", "numa.migrations")):
            if key in st["counters"]:
                out[name] = (st["counters"][key], "objects" if "objects" in key else "")
    pl = run["placement"]
    if pl:
        total = sum(pl["node_bytes"].values()) or 1
        nodes = max([lab_nodes or 0] + [int(n) + 1 for n in pl["node_bytes"]])
        for node in range(nodes):
            b = pl["node_bytes"].get(str(node), 0)
            out[f"placement.node{node}"] = (b / MIB, "MiB")
            out[f"placement.node{node}.share"] = (100.0 * b / total, "%")
    return out


def share(matrix):
    """% of a node-by-node matrix off its diagonal (None when it is all zero)."""
    total = sum(map(sum, matrix))
    remote = total - sum(matrix[i][i] for i in range(len(matrix)))
    return 100.0 * remote / total if total else None


# Figures counted by the lab's access plugin: name -> (unit, what it is).
ACCESS_FIGURES = {
    "accesses.remote_share": ("%", "of the accesses, on another node's memory"),
    "accesses.llc_remote_share": ("%", "of the LLC misses, to another node's memory"),
    "accesses.count": ("accesses", "user-space loads and stores in the window"),
    "accesses.llc_misses": ("misses", "of them missing the node's modelled LLC"),
}


# The code and memory classes of the split (numa_accesses.c's print_split).
SPLIT_CODE = ("alloc", "program")
SPLIT_MEM = ("heap", "stack", "tls", "static", "readonly")
SPLIT_FIGURES = {
    "accesses.alloc.remote_share": ("%", "of the allocator's own accesses, on another node's memory"),
    "accesses.alloc.llc_remote_share": ("%", "of the allocator's own LLC misses, to another node's memory"),
    "accesses.program_heap.remote_share": ("%", "of the program's accesses to heap memory, remote"),
    "accesses.program_heap.llc_remote_share": ("%", "of the program's LLC misses to heap memory, remote"),
    "accesses.alloc.share": ("%", "of all accesses, made by the allocator's code"),
}
for _c in SPLIT_CODE:
    for _m in SPLIT_MEM:
        SPLIT_FIGURES[f"accesses.by.{_c}.{_m}.llc_remote"] = (
            "%", f"of all LLC misses: remote ones by {_c} code to {_m} memory")
        SPLIT_FIGURES[f"accesses.by.{_c}.{_m}.remote"] = (
            "%", f"of all accesses: remote ones by {_c} code to {_m} memory")


def remote(matrix):
    return sum(map(sum, matrix)) - sum(matrix[i][i] for i in range(len(matrix)))


def split_figures(a):
    """The split by code and memory (--pin): shares inside a class, and each
    (code, memory) cell's remote accesses and misses as % of the window's
    (the cells add up to accesses.remote_share and llc_remote_share)."""
    split = a.get("split")
    if not split:
        return {}
    zero = [[0] * a["nodes"] for _ in range(a["nodes"])]

    def total(code, mems, kind):
        m = [row[:] for row in zero]
        for mem in mems:
            cell = split.get(code, {}).get(mem, {}).get(kind, zero)
            for i, row in enumerate(cell):
                for j, v in enumerate(row):
                    m[i][j] += v
        return m

    out = {"accesses.alloc.remote_share": share(total("alloc", SPLIT_MEM, "accesses")),
           "accesses.alloc.llc_remote_share": share(total("alloc", SPLIT_MEM, "llc_misses")),
           "accesses.program_heap.remote_share": share(total("program", ["heap"], "accesses")),
           "accesses.program_heap.llc_remote_share": share(total("program", ["heap"], "llc_misses"))}
    all_accesses = sum(map(sum, a["accesses"]))
    all_misses = sum(map(sum, a["llc_misses"]))
    if all_accesses:
        out["accesses.alloc.share"] = 100.0 * sum(map(sum, total("alloc", SPLIT_MEM, "accesses"))) / all_accesses
    for c in SPLIT_CODE:
        for m in SPLIT_MEM:
            if all_accesses:
                out[f"accesses.by.{c}.{m}.remote"] = 100.0 * remote(total(c, [m], "accesses")) / all_accesses
            if all_misses:
                out[f"accesses.by.{c}.{m}.llc_remote"] = 100.0 * remote(total(c, [m], "llc_misses")) / all_misses
    return out


def access_figures(run):
    """Per-run figures from the plugin's counts: all lower-is-better measures."""
    a = run["accesses"]
    if not a:
        return {}
    values = {"accesses.remote_share": share(a["accesses"]),
              "accesses.llc_remote_share": share(a["llc_misses"]),
              "accesses.count": sum(map(sum, a["accesses"])),
              "accesses.llc_misses": sum(map(sum, a["llc_misses"])),
              **split_figures(a)}
    return {k: v for k, v in values.items() if v is not None}


MODEL_FIGURES = {
    "model.seconds": ("s", "modelled time of the busiest vCPU (the run's critical path)"),
    "model.cpu_seconds": ("s", "modelled time summed over the vCPUs"),
}


def model_figures(run, profile):
    """model.seconds and model.cpu_seconds from the plugin's per-vCPU counts (tools/compare.d/model.py)."""
    a = run["accesses"]
    if not profile or not a or not a.get("vcpus"):
        return {}
    m = model.model(profile, a["vcpus"])
    run["model"] = m
    return {"model.seconds": m["seconds"], "model.cpu_seconds": m["cpu_seconds"]}


def ratio(value, base, better):
    """Oriented so that above 1 is worse than vanilla, whatever the direction."""
    if value is None or base is None:
        return None
    num, den = (value, base) if better == "lower" else (base, value)
    if den == 0:
        return 1.0 if num == 0 else float("inf")
    return num / den


def summarize(allocators, runs, lab_nodes, profile=None):
    catalogue = {}  # name -> {unit, better, kind}
    for name, (unit, better) in BUILTIN.items():
        catalogue[name] = {"unit": unit, "better": better, "kind": "measure", "source": "built-in"}
    for run in runs:
        for name, (unit, better) in run.pop("metric_info").items():
            catalogue.setdefault(name, {"unit": unit, "better": better, "kind": "measure", "source": "METRIC"})
    # Counted, not timed: these are what the lab can gate on.
    for run in runs:
        for name, value in access_figures(run).items():
            run["figures"][name] = value
    for name, (unit, _) in {**ACCESS_FIGURES, **SPLIT_FIGURES}.items():
        if any(name in r["figures"] for r in runs):
            catalogue[name] = {"unit": unit, "better": "lower", "kind": "measure", "source": "accesses"}
    for run in runs:
        run["model"] = None
        run["figures"].update(model_figures(run, profile))
    for name, (unit, _) in MODEL_FIGURES.items():
        if any(name in r["figures"] for r in runs):
            catalogue[name] = {"unit": unit, "better": "lower", "kind": "measure", "source": "model"}
    info = {}
    for run in runs:
        for name, (value, unit) in info_figures(run, lab_nodes).items():
            run["figures"][name] = value
            info.setdefault(name, {"unit": unit, "better": None, "kind": "info", "source": name.split(".")[0]})
    # What the allocator did (numa.*), then where the pages went (placement.*).
    for name in sorted(info, key=lambda n: (info[n]["source"] != "numa", list(info).index(n))):
        catalogue[name] = info[name]
    summary = []
    for name, meta in catalogue.items():
        per = {}
        for a in allocators:
            values = [r["figures"][name] for r in runs if r["allocator"] == a["name"] and name in r["figures"]]
            if values:
                per[a["name"]] = {"median": median(values), "min": min(values),
                                  "max": max(values), "spread": max(values) - min(values),
                                  "runs": len(values)}
        base = per.get("vanilla", {}).get("median")
        for a, s in per.items():
            s["ratio"] = ratio(s["median"], base, meta["better"]) if meta["kind"] == "measure" and a != "vanilla" else None
        summary.append({"figure": name, **meta, "allocators": per})
    return catalogue, summary


def fmt(x):
    if x is None:
        return "-"
    if x != x:
        return "nan"
    a = abs(x)
    if a >= 1000 or x == int(x):
        return f"{x:.0f}"
    return f"{x:.1f}" if a >= 10 else f"{x:.3g}"


def cell(s, kind):
    if s is None:
        return "-"
    text = fmt(s["median"])
    if s["runs"] > 1 and s["min"] != s["max"]:
        text += f" [{fmt(s['min'])}-{fmt(s['max'])}]"
    if kind == "measure" and s.get("ratio") is not None:
        text += f" ({s['ratio']:.2f}x)"
    return text


def layer_state(allocator, runs):
    """on / off / mixed, from the TCMALLOC_NUMA_STATS blocks of one allocator's runs."""
    stats = [r["numa_stats"] for r in runs if r["numa_stats"]]
    if not stats:
        # With TCMALLOC_NUMA=0 the library prints no statistics at all.
        off = allocator["base"] == "numa" and allocator["env"].get("TCMALLOC_NUMA") == "0"
        return "off (TCMALLOC_NUMA=0)" if off else "-"
    active = sum(s["active_processes"] for s in stats)
    if active == 0:
        return "off (one node heap)"
    nodes = max(s["counters"].get("nodes", 0) for s in stats)
    return f"on ({nodes} nodes)" if active == sum(s["processes"] for s in stats) else "on in some processes"


def access_matrix(allocators, runs):
    """Accesses and LLC misses by (vCPU's node, page's node), medians over each
    allocator's runs; rows for the nodes whose vCPUs accessed anything."""
    n = max(r["accesses"]["nodes"] for r in runs if r["accesses"])
    rows = [["allocator", "vCPU node"] + [f"accesses: node {j}" for j in range(n)] +
            [f"LLC misses: node {j}" for j in range(n)]]
    for a in allocators:
        mine = [r["accesses"] for r in runs if r["allocator"] == a["name"] and r["accesses"]]
        if not mine:
            continue
        for i in range(n):
            if not any(sum(m["accesses"][i]) for m in mine):
                continue
            cells = [fmt(median([m[k][i][j] for m in mine]))
                     for k in ("accesses", "llc_misses") for j in range(n)]
            rows.append([a["name"], str(i)] + cells)
    widths = [max(3, *(len(r[j]) for r in rows)) for j in range(len(rows[0]))]
    lines = ["Accesses by node: medians of the runs; row = the node of the vCPU that made "
             "them, column = the node of the memory they touched (off the diagonal = remote).", ""]
    for i, r in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
        if i == 0:
            lines.append("| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)


def table(allocators, runs, summary):
    names = [a["name"] for a in allocators]
    rows = [["figure", "unit", "better"] + names]
    status = []
    for n in names:
        mine = [r for r in runs if r["allocator"] == n]
        bad = [r for r in mine if r["exit_status"] != 0]
        status.append("0" if not bad else f"FAILED: {bad[0]['exit_status']} ({len(bad)}/{len(mine)} runs)")
    rows.append(["exit status", "", ""] + status)
    if any(r["numa_stats"] for r in runs):
        rows.append(["numa layer", "", ""] + [layer_state(a, [r for r in runs if r["allocator"] == a["name"]])
                                              for a in allocators])
    for s in summary:
        if not s["allocators"]:
            continue
        rows.append([s["figure"], s["unit"], s["better"] or ""] +
                    [cell(s["allocators"].get(n), s["kind"]) for n in names])
    widths = [max(3, *(len(r[j]) for r in rows)) for j in range(len(rows[0]))]
    lines = []
    for i, r in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
        if i == 0:
            lines.append("| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)


def gate(args, catalogue, summary, allocators):
    """None when no gate was asked for, else its record; prints one line per bound:
    --max-ratio (the numa allocators' median against vanilla's, oriented so that
    above 1 is worse) and --max-value (their median itself, at most V)."""
    if args.max_ratio is None and args.max_value is None:
        return None
    name = args.metric or "wall"
    meta = catalogue.get(name)
    bounds = {"max_ratio": args.max_ratio, "max_value": args.max_value}
    if meta is None or meta["kind"] != "measure":
        known = " ".join(n for n, m in catalogue.items() if m["kind"] == "measure")
        say(f"gate: no figure '{name}' to gate on (figures: {known})")
        return {"metric": name, **bounds, "passed": False, "error": "unknown figure", "checked": []}
    per = next(s for s in summary if s["figure"] == name)["allocators"]
    checked = []
    for a in allocators:
        if a["base"] != "numa":
            continue
        s = per.get(a["name"])
        r = s["ratio"] if s else None
        v = s["median"] if s else None
        ok = True
        if args.max_ratio is not None:
            ok = ok and r is not None and r <= args.max_ratio
        if args.max_value is not None:
            ok = ok and v is not None and v <= args.max_value
        checked.append({"allocator": a["name"], "ratio": r, "value": v, "passed": ok})
    record = {"metric": name, "better": meta["better"], **bounds,
              "passed": bool(checked) and all(c["passed"] for c in checked), "checked": checked}
    if not checked:
        say(f"gate: no numa allocator ran, nothing to check against {args.max_ratio or args.max_value}")
        return record
    if args.max_ratio is not None:
        ratio_line(name, meta, per, checked, args.max_ratio)
    if args.max_value is not None:
        value_line(name, meta, checked, args.max_value)
    return record


def ratio_line(name, meta, per, checked, bound):
    """The --max-ratio verdict, naming the figure and the worst numa allocator."""
    def bad(c):
        return c["ratio"] is None or c["ratio"] > bound
    worst = max(checked, key=lambda c: float("inf") if c["ratio"] is None else c["ratio"])
    base = per.get("vanilla", {}).get("median")
    mine = per.get(worst["allocator"], {}).get("median")
    how = "numa/vanilla" if meta["better"] == "lower" else "vanilla/numa, higher is better"
    detail = (f"{name} median ratio {how}: {worst['ratio']:.3f}" if worst["ratio"] is not None
              else f"{name}: no value under {worst['allocator']}")
    detail += f" ({worst['allocator']} {fmt(mine)}, vanilla {fmt(base)} {meta['unit']})".replace(" )", ")")
    others = sum(1 for c in checked if bad(c)) - 1
    if not bad(worst):
        say(f"gate passed: {detail} <= {bound:g}")
    else:
        say(f"gate FAILED: {detail} > {bound:g}" + (f" (and {others} more allocator(s))" if others > 0 else ""))


def value_line(name, meta, checked, bound):
    """The --max-value verdict: the numa allocators' median itself against the bound."""
    def bad(c):
        return c["value"] is None or c["value"] > bound
    worst = max(checked, key=lambda c: float("inf") if c["value"] is None else c["value"])
    unit = f" {meta['unit']}" if meta["unit"] else ""
    detail = (f"{name} median under {worst['allocator']}: {fmt(worst['value'])}{unit}"
              if worst["value"] is not None else f"{name}: no value under {worst['allocator']}")
    others = sum(1 for c in checked if bad(c)) - 1
    if not bad(worst):
        say(f"gate passed: {detail} <= {bound:g}{unit}")
    else:
        say(f"gate FAILED: {detail} > {bound:g}{unit}" + (f" (and {others} more allocator(s))" if others > 0 else ""))


def failures(allocators, runs):
    """Loud report of non-zero exits, one block per allocator; returns their records."""
    out = []
    for a in allocators:
        bad = [r for r in runs if r["allocator"] == a["name"] and r["exit_status"] != 0]
        if not bad:
            continue
        first = bad[0]
        how = f"signal {first['signal']}" if first["signal"] else f"status {first['exit_status']}"
        say(f"FAILED: the command exited with {how} under {a['name']} "
            f"({len(bad)} of {sum(r['allocator'] == a['name'] for r in runs)} runs); its stderr: {first['stderr']}")
        for line in read(first["stderr"]).splitlines()[-3:]:
            say(f"  | {line}")
        out.append({"allocator": a["name"], "runs": [r["order"] for r in bad],
                    "exit_statuses": sorted({r["exit_status"] for r in bad})})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dir", required=True)
    p.add_argument("--cmd", required=True)
    p.add_argument("--command-line", required=True)
    p.add_argument("--started", required=True)
    p.add_argument("--reps", type=int, required=True)
    p.add_argument("--json")
    p.add_argument("--max-ratio", type=float)
    p.add_argument("--metric")
    p.add_argument("--lab", type=int)
    p.add_argument("--max-value", type=float)
    p.add_argument("--model")
    args = p.parse_args()
    profile = None
    if args.model:
        try:
            profile = model.load(args.model)
        except model.ProfileError as e:
            say(f"error: {e}")
            return 1

    warned = set()

    def warn(msg):
        if msg not in warned:
            warned.add(msg)
            say(msg)

    allocators, runs = load_runs(args.dir, warn)
    catalogue, summary = summarize(allocators, runs, args.lab, profile)
    text = table(allocators, runs, summary)
    legend = ["", f"Cells: median [min-max] of {args.reps} run{'s' if args.reps != 1 else ''}; (N.NNx) = ratio to vanilla, "
              "oriented so that above 1.00 is worse (allocator/vanilla for lower-is-better "
              "figures, vanilla/allocator for higher-is-better ones)."]
    if any(r["numa_stats"] for r in runs):
        legend.append("numa.*: what the allocator did, from TCMALLOC_NUMA_STATS=1 at exit, "
                      "summed over the command's processes (system = bytes each node's heap took).")
    if args.lab:
        legend.append(f"Run in a {args.lab}-node guest of the NUMA lab: timings (wall, cpu, METRIC) are "
                      "NOT meaningful for speed (emulated memory has no remote latency); placement is. "
                      "placement.*: anonymous pages mapped per node at exit (/proc/self/numa_maps).")
    access_model = parse_access_model(read(os.path.join(args.dir, "accesses.txt")))
    if access_model and any(r["accesses"] for r in runs):
        llc = access_model["llc"]
        legend.append("accesses.*: every user-space load and store of the command (the lab's TCG plugin, "
                      "tools/lab-plugin), attributed to (node of the vCPU, node of the page); "
                      "remote_share = % on another node's memory. llc_*: the same for the accesses that "
                      f"miss a modelled last-level cache per node ({llc['size_bytes'] / MIB:g} MiB, "
                      f"{llc['ways']}-way, {llc['line_bytes']} B lines, {llc['replacement']}), "
                      "which is what crosses the interconnect. [min-max] is the spread over the runs: "
                      "threads the guest's scheduler places differently move it (docs/compare.md).")
        if profile:
            legend.append(model.legend(profile))
            if any(r["accesses"] and r["accesses"].get("fault_entry") != "known" for r in runs):
                legend.append("model: the kernel's fault entry was not found in some runs: their faults count 0.")
        text += "\n".join(legend) + "\n\n" + access_matrix(allocators, runs)
    else:
        text += "\n".join(legend)
    print(text)
    with open(os.path.join(args.dir, "table.md"), "w") as f:
        f.write(text + "\n")

    failed = failures(allocators, runs)
    gate_record = gate(args, catalogue, summary, allocators)
    record = {
        "schema": SCHEMA,
        "command": shlex.split(args.cmd),
        "command_line": args.command_line,
        "started": args.started,
        "reps": args.reps,
        "lab": {"nodes": args.lab, "timings_meaningful": False,
                "accesses": access_model} if args.lab else None,
        "model": model.parameters(profile) if profile else None,
        "allocators": allocators,
        "figures": catalogue,
        "runs": runs,
        "summary": summary,
        "failures": failed,
        "gate": gate_record,
    }
    # inf is not JSON: an unbounded ratio is written as null, with the gate record saying it failed.
    def clean(x):
        if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x
    body = json.dumps(clean(record), indent=2) + "\n"
    for path in filter(None, [os.path.join(args.dir, "result.json"), args.json]):
        # Whole or not at all: a reader never sees half a record.
        with open(path + ".tmp", "w") as f:
            f.write(body)
        os.replace(path + ".tmp", path)
    if failed:
        return 2
    if gate_record is not None and not gate_record["passed"]:
        return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["medians"]:
        sys.exit(medians_main(sys.argv[2:]))
    sys.exit(main())
