#!/usr/bin/env python3
"""The time model of tools/compare --model (docs/compare.md, "Modelled time").

Per vCPU v on node c, from the lab plugin's counts of one run:

  t_v = (user + kernel instructions) x cpi / ghz
        + sum over memory nodes m of latency(c, m) x (load misses to m / mlp
                                                      + store misses to m / store_mlp)
        + page faults x fault_ns

(misses: user and kernel LLC misses of the modelled cache; a load stalls the
core for its latency unless others overlap it, mlp of them at a time; stores
retire into the store buffer and stream, store_mlp lines in flight, so page
zeroing and copies cost bandwidth, not latency).

latency(c, m) = latency_ns[hops(c, m)]: the profile's hop matrix over its
sockets, guest node n on socket n mod S; two different guest nodes on the
same socket are one hop apart. model.seconds is the busiest vCPU's t_v (the
critical path of a pinned parallel run), model.cpu_seconds the sum.

  model.py list                 the profiles, one a line
  model.py show PROFILE         a profile's parameters (JSON)
  model.py check PROFILE        exit 0, or one line on stderr and exit 1
PROFILE is a name (tools/compare.d/models/NAME.json; host: the one
tools/calibrate-host wrote, .cache/models/host.json) or a file's path.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
REPO = os.path.dirname(os.path.dirname(HERE))
HOST = os.path.join(REPO, ".cache", "models", "host.json")
PARAMS = ("ghz", "cpi", "mlp", "store_mlp", "fault_ns", "latency_ns", "hops")


class ProfileError(Exception):
    pass


def names():
    out = sorted(f[:-5] for f in os.listdir(MODELS) if f.endswith(".json"))
    return out + ["host"]


def path_of(profile):
    if profile == "host":
        if not os.path.exists(HOST):
            raise ProfileError("profile 'host' is not calibrated yet: run tools/calibrate-host")
        return HOST
    if os.sep in profile or profile.endswith(".json"):
        if not os.path.isfile(profile):
            raise ProfileError(f"profile file '{profile}' does not exist")
        return profile
    path = os.path.join(MODELS, profile + ".json")
    if not os.path.isfile(path):
        raise ProfileError(f"unknown profile '{profile}' (known: {', '.join(names())}; or a file's path)")
    return path


def positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def validate(p, where):
    if not isinstance(p, dict):
        raise ProfileError(f"{where}: not a JSON object")
    for k in PARAMS:
        if k not in p:
            raise ProfileError(f"{where}: missing parameter '{k}'")
    for k in ("ghz", "cpi", "mlp", "store_mlp"):
        if not positive(p[k]):
            raise ProfileError(f"{where}: '{k}' must be a positive number, got {p[k]!r}")
    if not (positive(p["fault_ns"]) or p["fault_ns"] == 0):
        raise ProfileError(f"{where}: 'fault_ns' must be a number >= 0, got {p['fault_ns']!r}")
    lat = p["latency_ns"]
    if not isinstance(lat, list) or len(lat) < 2 or not all(positive(x) for x in lat):
        raise ProfileError(f"{where}: 'latency_ns' must list 2 or more positive latencies (local, 1 hop, ...)")
    hops = p["hops"]
    s = len(hops) if isinstance(hops, list) else 0
    if s < 1 or not all(isinstance(r, list) and len(r) == s for r in hops):
        raise ProfileError(f"{where}: 'hops' must be a square matrix (sockets x sockets)")
    for i, r in enumerate(hops):
        for j, h in enumerate(r):
            if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h < len(lat) or (h == 0) != (i == j):
                raise ProfileError(f"{where}: hops[{i}][{j}] must be 0 on the diagonal only, "
                                   f"and index latency_ns (0-{len(lat) - 1})")
    return p


def load(profile):
    path = path_of(profile)
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError) as e:
        raise ProfileError(f"profile '{profile}': cannot read {path}: {e}".splitlines()[0])
    p = validate(p, f"profile '{profile}' ({path})")
    p.setdefault("name", profile)
    return p


def latency(p, cpu_node, mem_node):
    if cpu_node == mem_node:
        return p["latency_ns"][0]
    s = len(p["hops"])
    h = p["hops"][cpu_node % s][mem_node % s]
    return p["latency_ns"][max(h, 1)]


def vcpu_ns(p, v):
    """One vCPU's modelled time, ns, by component."""
    insns = v["insns_user"] + v["insns_kernel"]
    stores = [a + b for a, b in zip(v.get("smisses") or [0] * len(v["misses"]),
                                    v.get("ksmisses") or [0] * len(v["misses"]))]
    loads = [a + b - c for a, b, c in zip(v["misses"], v["kmisses"], stores)]
    miss = sum(latency(p, v["node"], m) * (loads[m] / p["mlp"] + stores[m] / p["store_mlp"])
               for m in range(len(loads)))
    return {"instructions": insns * p["cpi"] / p["ghz"],
            "misses": miss,
            "faults": v["faults"] * p["fault_ns"]}


def model(p, vcpus):
    """{"seconds", "cpu_seconds", "vcpus": [per vCPU ns by component]} from the plugin's vcpu lines."""
    per = [vcpu_ns(p, v) for v in vcpus]
    totals = [sum(c.values()) for c in per]
    return {"seconds": max(totals, default=0.0) / 1e9, "cpu_seconds": sum(totals) / 1e9,
            "vcpus": [{"vcpu": v["vcpu"], "node": v["node"], **{k: x / 1e9 for k, x in c.items()}}
                      for v, c in zip(vcpus, per)]}


def fit_host(ghz, lat, store_mlp, fault_total_ns, fault_kernel_insns, ref_cpu_ns, ref):
    """tools/calibrate-host's (cpi, fault_ns): a fault's kernel instructions
    (priced at cpi) and 64 zeroed lines plus fault_ns make the measured
    fault_total_ns; the reference program's counts (ref: insns, misses,
    store_misses, faults) priced so make its measured CPU time. Its few faults
    couple the two weakly, so a few rounds settle both."""
    cpi = 1.0
    for _ in range(20):
        fault_ns = max(0.0, fault_total_ns - fault_kernel_insns * cpi / ghz - 64 * lat / store_mlp)
        stall = ((ref["misses"] - ref["store_misses"]) * lat + ref["store_misses"] * lat / store_mlp
                 + ref["faults"] * fault_ns)
        cpi = max(0.1, (ref_cpu_ns - stall) * ghz / ref["insns"])
    return cpi, fault_ns


def parameters(p):
    """The parameters, in print order (for the table's legend and the JSON)."""
    return {k: p[k] for k in ("name", *PARAMS, "description", "sources") if k in p}


def legend(p):
    lat = ", ".join(f"{x:g}" for x in p["latency_ns"])
    hops = " ".join("".join(str(h) for h in r) for r in p["hops"])
    return (f"model.*: modelled time, profile {p['name']}: per vCPU (user + kernel instructions) x cpi {p['cpi']:g} "
            f"/ {p['ghz']:g} GHz + (user + kernel LLC misses) x latency_ns [local, 1 hop, ...] = [{lat}] / (mlp "
            f"{p['mlp']:g} for loads, store_mlp {p['store_mlp']:g} for stores) + page faults x fault_ns "
            f"{p['fault_ns']:g}; hops by socket {hops} (guest node n on "
            "socket n mod sockets); model.seconds = the busiest vCPU, model.cpu_seconds = the sum "
            "(docs/compare.md, \"Modelled time\").")


def main(argv):
    if not argv or argv[0] not in ("list", "show", "check") or (argv[0] != "list" and len(argv) != 2):
        sys.stderr.write("usage: model.py list | show PROFILE | check PROFILE\n")
        return 2
    try:
        if argv[0] == "list":
            for n in names():
                try:
                    desc = load(n).get("description", "")
                except ProfileError as e:
                    desc = str(e)
                print(f"{n}\t{desc}")
            return 0
        p = load(argv[1])
    except ProfileError as e:
        sys.stderr.write(f"compare: error: {e}\n")
        return 1
    if argv[0] == "show":
        print(json.dumps(parameters(p), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
