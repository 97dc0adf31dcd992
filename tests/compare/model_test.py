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


if __name__ == "__main__":
    unittest.main()
