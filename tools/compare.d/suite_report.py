#!/usr/bin/env python3
"""The report of `tools/compare --suite mimalloc-bench` (tools/compare.d/suite.sh): reads the
JSON record that each step (one benchmark, natively or in an N-node lab guest) left as
`tools/compare --cmd` writes it, and prints the suite's tables: natively, each benchmark's own
figure, wall time and peak RSS; in the lab, the remote share of accesses and of LLC misses,
and their split by code (the allocator's or the program's) and by memory (heap, stack and TLS,
static and read-only data). Cells are median [min-max] over the repetitions. Writes the
suite's JSON (every step's record inside) and applies the gate the steps were run with.

Exit status: 0; 1 when the gate failed; 2 when a benchmark failed under some allocator."""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import fmt, median, read, say  # noqa: E402  (tools/compare.d/report.py)
import model  # noqa: E402  (tools/compare.d/model.py)

SCHEMA = "numa-tcmalloc/compare-suite/1"
# A benchmark's own figure, from its stdout: regex, name, unit, better. The
# benchmarks without one are measured by their time, as the suite's bench.sh does.
OWN = {
    "larson": (r"Throughput =\s*([0-9.]+) operations per second", "throughput", "ops/s", "higher"),
    "larson-sized": (r"Throughput =\s*([0-9.]+) operations per second", "throughput", "ops/s", "higher"),
    "xmalloc-test": (r"free/sec: ([0-9.]+) M", "frees", "M/s", "higher"),
    "rptest": (r"([0-9]+) memory ops/CPU second", "ops", "ops/CPU s", "higher"),
    "glibc-thread": (r"^([0-9]+) iterations", "iterations", "in 2 s", "higher"),
    "alloc-test": (r"operations in ([0-9]+) ms", "time", "ms", "lower"),
}
# Benchmarks that run for a fixed time: the guest gets through more or less of
# their work as it runs faster or slower, so their modelled time is scaled to
# one amount of work, the baseline allocator's median run. Every thread runs
# the whole time, however fast the emulator runs its vCPU, so the critical
# path of that work is the vCPUs' mean, not the busiest. The kernel's
# instructions and misses are left out (its faults are kept): over a fixed
# time they are mostly the guest's periodic work, the same in every run
# (larson: about 10 M kernel instructions a run under each allocator), which
# scaling would charge to the run that got less done. Each entry gives a
# number proportional to a run's work, from its stdout (the duration is the
# same in every run): larson's throughput, xmalloc-test's rtime (100 / its
# frees a microsecond, printed to more digits than free/sec), glibc-thread's
# iterations.
TIMED = {
    "larson": (OWN["larson"][0], float),
    "larson-sized": (OWN["larson-sized"][0], float),
    "xmalloc-test": (r"rtime: ([0-9.]+),", lambda rtime: 1 / float(rtime)),
    "glibc-thread": (OWN["glibc-thread"][0], float),
}
# The split's cells gathered for the tables: (label, [(code, memory)...]).
GROUPS = [
    ("alloc: heap", [("alloc", "heap")]),
    ("alloc: static", [("alloc", "static")]),
    ("alloc: stack, TLS", [("alloc", "stack"), ("alloc", "tls"), ("alloc", "readonly")]),
    ("program: heap", [("program", "heap")]),
    ("program: stack, TLS", [("program", "stack"), ("program", "tls")]),
    ("program: static, read-only", [("program", "static"), ("program", "readonly")]),
]


def stats(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": median(values), "min": min(values), "max": max(values),
            "spread": max(values) - min(values), "runs": len(values)}


def cell(s, digits=1):
    if not s:
        return "-"
    f = (lambda x: f"{x:.{digits}f}") if digits is not None else fmt
    text = f(s["median"])
    if s["runs"] > 1 and f(s["min"]) != f(s["max"]):
        text += f" [{f(s['min'])}-{f(s['max'])}]"
    return text


def own_figure(bench, run):
    """The benchmark's own figure for one run: its printed figure, else its wall time."""
    spec = OWN.get(bench)
    if not spec:
        return run["figures"].get("wall")
    m = re.search(spec[0], read(run["stdout"]), re.M)
    return float(m.group(1)) if m else None


def work_done(bench, run):
    """A number proportional to the work a run of a TIMED benchmark got through."""
    regex, value = TIMED[bench]
    m = re.search(regex, read(run["stdout"]), re.M)
    return value(m.group(1)) if m and float(m.group(1)) > 0 else None


def user_mode_seconds(record, run):
    """model.cpu_seconds of a run's user-mode counts and faults (how a TIMED
    benchmark is priced: over a fixed time the kernel's counts are mostly its
    periodic work), or None."""
    vcpus = (run.get("accesses") or {}).get("vcpus")
    if not vcpus or not record.get("model"):
        return None
    user = [dict(v, insns_kernel=0, kmisses=[0] * len(v["misses"]), ksmisses=[0] * len(v["misses"]))
            for v in vcpus]
    return model.model(record["model"], user)["cpu_seconds"]


def modelled_ms(bench, record, name):
    """{allocator: stats} of model.seconds or model.cpu_seconds in ms, scaled to the
    baseline's median work for a TIMED benchmark; and that baseline, or None."""
    if bench not in TIMED:
        return by_allocator(record, None, lambda run: (
            run["figures"][name] * 1000 if name in run["figures"] else None)), None
    names = [a["name"] for a in record["allocators"]]
    base = "vanilla" if "vanilla" in names else names[0]
    work = stats([work_done(bench, r) for r in record["runs"] if r["allocator"] == base])
    if not work:
        return {}, None

    def scaled(run):
        w, cpu = work_done(bench, run), user_mode_seconds(record, run)
        if not w or cpu is None:
            return None
        vcpus = len(run["accesses"]["vcpus"])
        return cpu * 1000 * work["median"] / w / (vcpus if name == "model.seconds" else 1)
    return by_allocator(record, None, scaled), base


def modelled_gate(metric, max_ratio, figure):
    """report.py's gate for one step, on its modelled times (scaled if TIMED)."""
    checked = [{"allocator": a, "ratio": s["median"] / figure["vanilla"]["median"], "value": s["median"]}
               for a, s in figure.items() if a.split(":")[0] == "numa"] if "vanilla" in figure else []
    for c in checked:
        c["passed"] = c["ratio"] <= max_ratio
    return {"metric": metric, "max_ratio": max_ratio, "checked": checked,
            "passed": bool(checked) and all(c["passed"] for c in checked)}


def by_allocator(record, figure, runs_value=None):
    """{allocator: stats} of one figure over each allocator's runs."""
    out = {}
    for a in record["allocators"]:
        mine = [r for r in record["runs"] if r["allocator"] == a["name"]]
        values = [runs_value(r) if runs_value else r["figures"].get(figure) for r in mine]
        s = stats(values)
        if s:
            out[a["name"]] = s
    return out


def group_share(run, cells):
    """Remote LLC misses of some (code, memory) cells, % of all the run's misses."""
    a = run.get("accesses")
    if not a or not a.get("split"):
        return None
    total = sum(map(sum, a["llc_misses"]))
    remote = 0
    for code, mem in cells:
        m = a["split"].get(code, {}).get(mem)
        if m:
            mm = m["llc_misses"]
            remote += sum(map(sum, mm)) - sum(mm[i][i] for i in range(len(mm)))
    return 100.0 * remote / total if total else None


def table(header, rows):
    widths = [max(len(str(r[j])) for r in [header] + rows) for j in range(len(header))]
    lines = ["| " + " | ".join(str(c).ljust(w) for c, w in zip(header, widths)) + " |",
             "| " + " | ".join("-" * w for w in widths) + " |"]
    lines += ["| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dir", required=True)
    p.add_argument("--started", required=True)
    p.add_argument("--command-line", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--json")
    p.add_argument("--max-ratio", type=float)
    p.add_argument("--metric")
    args = p.parse_args()

    steps = []
    for line in read(os.path.join(args.dir, "steps.tsv")).splitlines():
        bench, where, threads, bench_args = line.split("\t")
        path = os.path.join(args.dir, f"{bench}.{where}.json")
        rc = read(os.path.join(args.dir, f"{bench}.{where}.rc")).strip()
        record = json.load(open(path)) if os.path.exists(path) else None
        steps.append({"benchmark": bench, "where": where, "threads": int(threads),
                      "nodes": int(where[3:]) if where.startswith("lab") else None,
                      "command": f"{bench} {bench_args}", "exit_status": int(rc or -1),
                      "record": record})
    allocators = []
    for s in steps:
        for a in (s["record"] or {}).get("allocators", []):
            if a["name"] not in allocators:
                allocators.append(a["name"])
    figures = {}  # benchmark -> where -> figure -> allocator -> stats
    for s in steps:
        r = s["record"]
        if not r:
            continue
        f = figures.setdefault(s["benchmark"], {}).setdefault(s["where"], {})
        if s["where"] == "native":
            f["own"] = by_allocator(r, None, lambda run, b=s["benchmark"]: own_figure(b, run))
            f["wall"] = by_allocator(r, "wall")
            f["rss_mib"] = by_allocator(r, None, lambda run: run["figures"].get("rss", 0) / 1024)
        else:
            for name in ("accesses.remote_share", "accesses.llc_remote_share", "accesses.llc_misses",
                         "accesses.alloc.remote_share", "accesses.alloc.llc_remote_share",
                         "accesses.program_heap.remote_share", "accesses.program_heap.llc_remote_share"):
                f[name] = by_allocator(r, name)
            for name in ("model.seconds", "model.cpu_seconds"):  # in ms
                f[name], base = modelled_ms(s["benchmark"], r, name)
                if base:
                    s["model_scaled_to"] = base
                if name == args.metric and args.max_ratio is not None:
                    r["gate"] = modelled_gate(name, args.max_ratio, f[name])
            for label, cells in GROUPS:
                f["llc_remote." + label] = by_allocator(r, None, lambda run, c=cells: group_share(run, c))

    out = []
    native = [s for s in steps if s["where"] == "native" and s["record"]]
    if native:
        out.append(f"## Native ({args.threads} threads; median [min-max] of the repetitions)\n")
        for key, title, digits in (("own", "the benchmark's own figure (its printed figure, else its wall time in s)", None),
                                   ("wall", "wall time, s", 2), ("rss_mib", "peak RSS, MiB", 1)):
            rows = []
            for s in native:
                b = s["benchmark"]
                unit = OWN[b][2] + (", higher is better" if OWN[b][3] == "higher" else "") if b in OWN else "s"
                rows.append([b] + ([unit] if key == "own" else []) +
                            [cell(figures[b]["native"][key].get(a), digits) for a in allocators])
            out.append(f"{title[0].upper()}{title[1:]}:\n")
            out.append(table(["benchmark"] + (["unit"] if key == "own" else []) + allocators, rows) + "\n")
    for nodes in sorted({s["nodes"] for s in steps if s["nodes"]}):
        lab = [s for s in steps if s["nodes"] == nodes and s["record"]]
        if not lab:
            continue
        where = f"lab{nodes}"
        reps = max(len(x["runs"]) // max(1, len(x["allocators"])) for x in (s["record"] for s in lab))
        out.append(f"## Lab, {nodes} nodes ({nodes} threads' worth, placed round-robin unless said; "
                   f"median [min-max] of {reps})\n")
        def pair(first, second, title):
            rows = [[s["benchmark"]] + [f"{cell(figures[s['benchmark']][where][first].get(a))} "
                                        f"({cell(figures[s['benchmark']][where][second].get(a))})"
                                        for a in allocators] for s in lab]
            out.append(title + "\n")
            out.append(table(["benchmark"] + allocators, rows) + "\n")

        pair("accesses.remote_share", "accesses.llc_remote_share",
             "% of accesses remote (% of LLC misses remote):")
        rows = [[s["benchmark"]] + [f"{cell(figures[s['benchmark']][where]['accesses.llc_misses'].get(a), None)}"
                                    for a in allocators] for s in lab]
        out.append("LLC misses per run (the sample behind the shares):\n")
        out.append(table(["benchmark"] + allocators, rows) + "\n")
        if any(figures[s["benchmark"]][where]["model.seconds"] for s in lab):
            profile = next((s["record"].get("model") or {}).get("name") for s in lab if s["record"].get("model"))
            pair("model.seconds", "model.cpu_seconds",
                 f"Modelled time on {profile}, ms: busiest vCPU (sum over vCPUs) (docs/compare.md, \"Modelled time\"):")
            timed = [f"{s['benchmark']} ({s['model_scaled_to']})" for s in lab if s.get("model_scaled_to")]
            if timed:
                out.append("Run for a fixed time, so scaled to the work of one allocator's median run: "
                           + ", ".join(timed) + ".\n")
        pair("accesses.alloc.remote_share", "accesses.alloc.llc_remote_share",
             "The allocator's own code: % of its accesses remote (% of its LLC misses remote):")
        pair("accesses.program_heap.remote_share", "accesses.program_heap.llc_remote_share",
             "The program's accesses to heap memory: % remote (% of their LLC misses remote):")
        rows = []
        for s in lab:
            for a in allocators:
                f = figures[s["benchmark"]][where]
                rows.append([s["benchmark"], a, cell(f["accesses.llc_remote_share"].get(a))] +
                            [cell(f["llc_remote." + label].get(a)) for label, _ in GROUPS])
        out.append("Where the remote LLC misses come from, % of all LLC misses "
                   "(by code: the allocator's or the program's; by memory; the columns add up to the total):\n")
        out.append(table(["benchmark", "allocator", "total"] + [g for g, _ in GROUPS], rows) + "\n")
    text = "\n".join(out)
    print(text)
    with open(os.path.join(args.dir, "tables.md"), "w") as fh:
        fh.write(text + "\n")

    failed = [s for s in steps if s["exit_status"] == 2 or (s["record"] and s["record"].get("failures"))]
    for s in failed:
        say(f"suite: {s['benchmark']} ({s['where']}) failed under some allocator: {args.dir}/{s['benchmark']}.{s['where']}.txt")
    missing = [s for s in steps if not s["record"]]
    for s in missing:
        say(f"suite: {s['benchmark']} ({s['where']}) left no record (status {s['exit_status']})")
    gate = None
    if args.max_ratio is not None:
        checked = [{"benchmark": s["benchmark"], "where": s["where"], **(s["record"] or {}).get("gate", {})}
                   for s in steps if s["nodes"]]
        gate = {"metric": args.metric, "max_ratio": args.max_ratio, "checked": checked,
                "passed": bool(checked) and all(c.get("passed") for c in checked)}
        bad = [c for c in checked if not c.get("passed")]
        detail = ", ".join(f"{c['benchmark']} ({c['where']}): " +
                           ", ".join(f"{x['allocator']} {fmt(x['ratio'])}x" for x in c.get("checked", []))
                           for c in checked)
        say(f"suite gate {'passed' if gate['passed'] else 'FAILED'}: {args.metric} numa/vanilla "
            f"{'<=' if gate['passed'] else 'above'} {args.max_ratio:g} "
            f"{'everywhere' if gate['passed'] else f'on {len(bad)} of {len(checked)}'}: {detail}")
    record = {"schema": SCHEMA, "suite": "mimalloc-bench", "command_line": args.command_line,
              "started": args.started, "binaries": args.bin, "native_threads": args.threads,
              "allocators": allocators, "figures": figures, "steps": steps, "gate": gate}
    body = json.dumps(record, indent=1) + "\n"
    for path in filter(None, [os.path.join(args.dir, "result.json"), args.json]):
        with open(path + ".tmp", "w") as fh:
            fh.write(body)
        os.replace(path + ".tmp", path)
    if failed or missing:
        return 2
    if gate is not None and not gate["passed"]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
