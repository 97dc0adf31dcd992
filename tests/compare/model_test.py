#!/usr/bin/env python3
"""Unit tests of the time model (tools/compare.d/model.py): hand-computed
counts in, seconds out. Run: python3 tests/compare/model_test.py"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "..", "tools", "compare.d")
sys.path.insert(0, TOOLS)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import model  # noqa: E402

# Three sockets in a line: 0-1 and 1-2 linked, 0-2 two hops.
LINE3 = {"name": "line3", "ghz": 2.0, "cpi": 1.0, "mlp": 1.0, "store_mlp": 4.0, "fault_ns": 1000,
         "latency_ns": [100, 200, 300], "hops": [[0, 1, 2], [1, 0, 1], [2, 1, 0]]}


def vcpu(i, node, user, kernel, misses, kmisses, faults=0):
    return {"vcpu": i, "node": node, "insns_user": user, "insns_kernel": kernel, "faults": faults,
            "misses": misses, "kmisses": kmisses}


class ModelTest(unittest.TestCase):
    def test_host_fit_prices_what_it_measured(self):
        # tools/calibrate-host's fit: priced with the fitted cpi and fault_ns,
        # one fault (2000 kernel instructions, 64 zeroed lines, the fault) costs
        # the measured 3000 ns, and the reference program its measured CPU time.
        cpi, fault_ns = model.fit_host(2.0, 100.0, 10.0, 3000.0, 2000, 360000.0,
                                       {"insns": 10 ** 6, "misses": 1000, "store_misses": 0, "faults": 5})
        p = dict(LINE3, cpi=cpi, fault_ns=fault_ns, store_mlp=10.0, latency_ns=[100], hops=[[0]])
        fault = vcpu(0, 0, 0, 2000, [64], [0], faults=1)
        fault["ksmisses"] = [64]
        self.assertAlmostEqual(model.model(p, [fault])["cpu_seconds"], 3000e-9)
        self.assertAlmostEqual(model.model(p, [vcpu(0, 0, 10 ** 6, 0, [1000], [0], faults=5)])["cpu_seconds"],
                               360000e-9)

    def test_three_distances_and_faults(self):
        # vCPU 0 on node 0: 2000 instructions at 1 cycle / 2 GHz = 1000 ns;
        # misses 10 local (1000 ns), 5 one hop (1000), 2 two hops (600); one fault 1000.
        # vCPU 1 on node 2: 1000 ns of kernel instructions, 1 miss two hops away
        # (300 ns) and 4 kernel misses local (400 ns).
        vs = [vcpu(0, 0, 1000, 1000, [10, 5, 2], [0, 0, 0], faults=1),
              vcpu(1, 2, 0, 2000, [1, 0, 0], [0, 0, 4])]
        m = model.model(LINE3, vs)
        self.assertAlmostEqual(m["seconds"], 4600e-9)
        self.assertAlmostEqual(m["cpu_seconds"], 6300e-9)
        self.assertAlmostEqual(m["vcpus"][0]["faults"], 1000e-9)
        self.assertAlmostEqual(m["vcpus"][1]["misses"], 700e-9)

    def test_two_nodes_mlp(self):
        p = dict(LINE3, mlp=2.0, hops=[[0, 1], [1, 0]], latency_ns=[100, 150])
        # 0 instructions; misses: 4 local, 4 remote = 400 + 600 = 1000 ns / mlp 2 = 500.
        m = model.model(p, [vcpu(0, 0, 0, 0, [2, 4], [2, 0])])
        self.assertAlmostEqual(m["seconds"], 500e-9)

    def test_store_misses_stream(self):
        # 8 local misses, 4 of them stores: 4 x 100 / mlp 1 + 4 x 100 / store_mlp 4 = 500 ns;
        # kernel store misses (page zeroing) likewise: 8 one hop away = 8 x 200 / 4 = 400.
        v = dict(vcpu(0, 0, 0, 0, [8, 0, 0], [0, 8, 0]), smisses=[4, 0, 0], ksmisses=[0, 8, 0])
        self.assertAlmostEqual(model.model(LINE3, [v])["seconds"], 900e-9)

    def test_more_guest_nodes_than_sockets(self):
        # Guest nodes 0 and 2 share socket 0 of a 2-socket profile: one hop apart, not local.
        p = dict(LINE3, hops=[[0, 1], [1, 0]], latency_ns=[100, 150])
        m = model.model(p, [vcpu(0, 0, 0, 0, [0, 0, 1, 0], [0, 0, 0, 0])])
        self.assertAlmostEqual(m["seconds"], 150e-9)

    def test_published_profiles_load(self):
        for name in ("opteron-870-4s", "xeon-2s", "epyc-2s"):
            p = model.load(name)
            self.assertIn("sources", p)
        # The paper's machine: 0-3 two hops, 0-1 one.
        p = model.load("opteron-870-4s")
        self.assertEqual(model.latency(p, 0, 3), p["latency_ns"][2])
        self.assertEqual(model.latency(p, 0, 1), p["latency_ns"][1])

    def check(self, profile):
        return subprocess.run([sys.executable, os.path.join(TOOLS, "model.py"), "check", profile],
                              capture_output=True, text=True)

    def test_bad_profiles(self):
        with tempfile.TemporaryDirectory() as d:
            cases = {"missing": {k: v for k, v in LINE3.items() if k != "cpi"},
                     "not_square": dict(LINE3, hops=[[0, 1], [1]]),
                     "diagonal": dict(LINE3, hops=[[1, 1], [1, 0]]),
                     "negative": dict(LINE3, ghz=-1)}
            for name, p in cases.items():
                path = os.path.join(d, name + ".json")
                with open(path, "w") as f:
                    json.dump(p, f)
                r = self.check(path)
                self.assertEqual(r.returncode, 1, name)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, (name, r.stderr))
            path = os.path.join(d, "bad.json")
            with open(path, "w") as f:
                f.write("{")
            self.assertEqual(self.check(path).returncode, 1)
        r = self.check("no-such-profile")
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown profile", r.stderr)
        self.assertEqual(self.check("xeon-2s").returncode, 0)


class SuiteScalingTest(unittest.TestCase):
    """tools/compare.d/suite_report.py: a benchmark that runs for a fixed time has
    its modelled time scaled to vanilla's median work; one of fixed work does not."""

    def suite_dir(self, d):
        steps = [("xmalloc-test", "rtime: {:.3f}, free/sec: 0.1 M\n"), ("mstress", "done\n")]
        # (allocator, model.seconds, rtime): vanilla's median rtime is 500; numa's
        # run at rtime 1000 did half that work in the same modelled time.
        runs = [("vanilla", 0.020, 400.0), ("vanilla", 0.030, 500.0), ("vanilla", 0.040, 600.0),
                ("numa", 0.020, 1000.0)]
        with open(os.path.join(d, "steps.tsv"), "w") as f:
            for bench, _ in steps:
                f.write(f"{bench}\tlab2\t2\targs\n")
        for bench, out in steps:
            # 1 ns an instruction, 100 ns a miss, 1000 ns a fault.
            record = {"allocators": [{"name": "vanilla"}, {"name": "numa"}], "runs": [], "failures": [],
                      "model": dict(LINE3, ghz=1.0, name="ns")}
            for i, (a, seconds, rtime) in enumerate(runs):
                path = os.path.join(d, f"{bench}.{i}.out")
                with open(path, "w") as f:
                    f.write(out.format(rtime))
                # Two vCPUs whose user counts make 3 x `seconds` of CPU time
                # (instructions, one local miss, one fault each), and kernel
                # counts that a timed benchmark's scaling leaves out.
                user_ns = 3 * seconds * 1e9 / 2
                vcpus = [dict(vcpu(v, v, user_ns - 1100, 10 ** 9, [1, 0, 0] if v == 0 else [0, 1, 0],
                                   [0, 0, 10 ** 6] if v == 0 else [10 ** 6, 0, 0], faults=1),
                              smisses=[0, 0, 0], ksmisses=[0, 0, 0]) for v in (0, 1)]
                record["runs"].append({"allocator": a, "rep": i, "stdout": path, "figures": {
                    "model.seconds": seconds, "model.cpu_seconds": 99.0},
                    "accesses": {"vcpus": vcpus}})
            with open(os.path.join(d, f"{bench}.lab2.json"), "w") as f:
                json.dump(record, f)
            with open(os.path.join(d, f"{bench}.lab2.rc"), "w") as f:
                f.write("0\n")

    def test_timed_benchmark_scaled_to_vanillas_median_work(self):
        with tempfile.TemporaryDirectory() as d:
            self.suite_dir(d)
            out = os.path.join(d, "out.json")
            r = subprocess.run([sys.executable, os.path.join(TOOLS, "suite_report.py"), "--dir", d,
                                "--started", "x", "--command-line", "x", "--bin", "x", "--threads", "2",
                                "--json", out, "--max-ratio", "1.0", "--metric", "model.seconds"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stderr)  # xmalloc-test's scaled ratio is 1.33
            with open(out) as f:
                d_ = json.load(f)
            x = d_["figures"]["xmalloc-test"]["lab2"]["model.seconds"]
            # Work is 1/rtime. The critical path of a timed run is the vCPUs' mean:
            # vanilla's CPU times 60, 90 and 120 ms, scaled to rtime 500 and over
            # 2 vCPUs, are 37.5, 45 and 50 ms.
            self.assertAlmostEqual(x["vanilla"]["median"], 45.0)
            self.assertAlmostEqual(x["numa"]["median"], 60.0)  # 60 ms of CPU for half the work
            self.assertAlmostEqual(d_["figures"]["xmalloc-test"]["lab2"]["model.cpu_seconds"]["numa"]["median"], 120.0)
            m = d_["figures"]["mstress"]["lab2"]["model.seconds"]
            self.assertAlmostEqual(m["vanilla"]["median"], 30.0)
            self.assertAlmostEqual(m["numa"]["median"], 20.0)  # fixed work: as measured
            gates = {c["benchmark"]: c["passed"] for c in d_["gate"]["checked"]}
            self.assertEqual(gates, {"xmalloc-test": False, "mstress": True})
            self.assertIn("scaled to the work of one allocator's median run: xmalloc-test (vanilla)", r.stdout)


if __name__ == "__main__":
    unittest.main()
