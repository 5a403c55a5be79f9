"""How long the first ``Session.run`` takes in a new process: cold (nothing compiled yet)
and warm (numba's and kernelgraph's on-disk caches filled by the cold run).

Each measurement is a fresh Python process given its own empty cache folders
(``NUMBA_CACHE_DIR``, ``KERNELGRAPH_CACHE``), so it neither reads nor disturbs the caches
of the installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

# The first SGD step of the MLP of rows 11 (batch 64): graph, Session, one run.
_CHILD = """
import json, time
t0 = time.perf_counter()
import kernelgraph as kg
from kernelgraph.bench import cases as C
t1 = time.perf_counter()
impl = C._mlp_kg(64)(kg)
ns = impl.namespace
ns["sess"].run(ns["init"])
t2 = time.perf_counter()
ns["sess"].run(ns["train"], feed_dict=ns["feed"])
t3 = time.perf_counter()
ns["sess"].run(ns["train"], feed_dict=ns["feed"])
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "build_s": t2 - t1, "first_run_s": t3 - t2,
                  "second_run_s": t4 - t3}))
"""
GOAL = {"cold_first_run_s": 1.0, "warm_first_run_s": 0.25}


def _child(env) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure() -> dict:
    """{"cold": {...}, "warm": {...}, "goal": ...}: seconds for import, graph build, the
    first run (plan compile and kernel compile or cache load) and a second run."""
    with tempfile.TemporaryDirectory(prefix="kg-compile-") as root:
        env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(root, "numba"),
                   KERNELGRAPH_CACHE=os.path.join(root, "kernelgraph"))
        cold = _child(env)
        warm = _child(env)
    return {"what": "first Session.run of the MLP SGD step (row 11b) in a new process",
            "cold": cold, "warm": warm, "goal": GOAL}


def describe(result: dict) -> list[str]:
    """Table lines for :func:`measure`'s result."""
    lines = [f"compile: {result['what']}"]
    for kind in ("cold", "warm"):
        r = result[kind]
        if "error" in r:
            lines.append(f"  {kind}: error: {r['error']}")
            continue
        goal = result["goal"][f"{kind}_first_run_s"]
        status = "pass" if r["first_run_s"] <= goal else "FAIL"
        lines.append(f"  {kind}: first run {r['first_run_s']:.3f} s (goal <= {goal:g} s: "
                     f"{status}); import {r['import_s']:.2f} s, build {r['build_s']:.3f} s, "
                     f"second run {r['second_run_s'] * 1e6:.0f} us")
    return lines
