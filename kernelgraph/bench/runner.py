"""Run every case on every framework, print the table, write the JSON.

    python -m kernelgraph.bench                  # full run, writes bench-results.json
    python -m kernelgraph.bench --quick          # a fast smoke run with fewer repeats
    python -m kernelgraph.bench --json out.json --frameworks kernelgraph,numpy
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass

import numpy

from . import cases as C
from . import compile_time
from . import gpu as _gpu_rows
from .frameworks import FRAMEWORKS, LABELS, SHORT, load, machine_info

SCHEMA = "kernelgraph-bench/1"


@dataclass(frozen=True)
class Settings:
    """How long to time each cell (see :mod:`kernelgraph.bench.timing`)."""

    repeat: int = 7
    min_time: float = 0.2
    number: int | None = None  # fixed iterations per batch; None: calibrate to min_time
    gc: bool = True

    def as_json(self) -> dict:
        return {"statistic": "best (minimum) of the repeats; median kept as median_us",
                "repeat": self.repeat, "min_time_s": self.min_time,
                "number": self.number if self.number is not None else "calibrated",
                "gc_enabled_while_timing": self.gc,
                "warmup": "calibration run (or one discarded batch when number is fixed)",
                "unit": "microseconds per call (per graph node for graph construction)"}


FULL = Settings()
QUICK = Settings(repeat=3, min_time=0.02)


def _run_cell(case, name, module, settings, reference, setup=None) -> dict:
    setup = setup if setup is not None else case.setups.get(name)
    if module is None or isinstance(setup, str) or setup is None:
        return {"us": None, "reason": setup if isinstance(setup, str) else "not available"}
    cell, _ = C.timed_cell(lambda: setup(module), settings, reference, rtol=case.rtol)
    return cell


def select_rows(wanted: str | None) -> tuple[list, bool]:
    """The cases named in ``wanted`` (comma-separated row ids; ``11`` also selects 11a, 11b
    ...; ``compile`` selects the first-run compile timing), and whether the compile timing
    is selected. None selects everything.

    >>> cases, compile_too = select_rows("4,11")
    >>> [c.id for c in cases], compile_too
    (['4', '11a', '11b', '11c'], False)
    """
    if wanted is None:
        return list(C.CASES), True
    names = [w.strip() for w in wanted.split(",") if w.strip()]
    ids = [c.id for c in C.CASES]

    def matches(case_id: str, name: str) -> bool:
        return case_id == name or (case_id.startswith(name) and case_id[len(name):].isalpha())

    unknown = [n for n in names if n != "compile" and not any(matches(i, n) for i in ids)]
    if unknown:
        raise ValueError(f"unknown rows {unknown}; expected some of {ids} or 'compile'")
    return [c for c in C.CASES if any(matches(c.id, n) for n in names)], "compile" in names


def run(settings: Settings = FULL, frameworks=FRAMEWORKS, progress=None,
        rows: str | None = None) -> dict:
    """Run every case (or those ``rows`` selects, see :func:`select_rows`); return the
    results document that is written as JSON."""
    # 'gpu' in rows selects the GPU rows (every row is selected by default)
    rows, with_gpu = _gpu_rows.selected(rows)
    cases, with_compile = select_rows(rows)
    unknown = [f for f in frameworks if f not in FRAMEWORKS]
    if unknown:
        raise ValueError(f"unknown frameworks {unknown}; expected some of {list(FRAMEWORKS)}")
    modules, missing = {}, {}
    for name in FRAMEWORKS:
        if name == "kernelgraph" or name in frameworks:
            modules[name], why = load(name)
            if why:
                missing[name] = why
        else:
            modules[name], missing[name] = None, "not selected (--frameworks)"
    if modules["kernelgraph"] is None:
        raise RuntimeError(missing["kernelgraph"])
    out_rows = []
    for case in cases:
        reference = _once(case.reference)  # only when a cell runs (GPU rows may not)
        results = {}
        for name in FRAMEWORKS:
            module = modules[name]
            if progress is not None and module is not None and callable(case.setups[name]):
                progress(f"  {case.id:<3} {case.title:<36} {LABELS[name]} ...")
            results[name] = _run_cell(case, name, module, settings, reference)
            if module is None and not isinstance(case.setups.get(name), str):
                results[name]["reason"] = missing[name]
        kg_us = results["kernelgraph"]["us"]
        ratios = {other: (kg_us / results[other]["us"]
                          if kg_us is not None and results[other]["us"] else None)
                  for other in FRAMEWORKS[1:]}
        row = {"id": case.id, "title": case.title, "unit": case.unit,
               "description": case.description, "results": results, "ratios": ratios}
        bandwidth_ratio = None
        if case.bandwidth is not None:
            row["bandwidth"] = _bandwidth(case, results, numpy, settings, progress)
            bandwidth_ratio = row["bandwidth"]["kernelgraph_vs_baseline"]
        if case.target is not None:
            passed, unchecked = case.target.evaluate(kg_us, ratios, bandwidth_ratio)
            row["target"] = case.target.describe(case.unit)
            row["pass"] = passed
            row["unchecked"] = unchecked
        else:
            row["target"], row["pass"], row["unchecked"] = None, None, []
        out_rows.append(row)
    # figures that need two rows (the speed-up of 20d over 20c); closes the pool
    from . import distributed as _pool_rows
    _pool_rows.finish(out_rows)
    if progress is not None and with_compile:
        progress("  compile time: the first Session.run in new processes (cold, warm) ...")
    # the GPU section (one line saying why, where there is no GPU)
    gpu_section = (_gpu_rows.run(settings, modules["kernelgraph"], modules.get("torch"), progress)
                   if with_gpu else None)
    return {"schema": SCHEMA, "machine": machine_info(modules), "method": settings.as_json(),
            "compile": compile_time.measure() if with_compile else None,
            "chain": [op if c is None else f"{op} {c}" for op, c in C.CHAIN],
            "chain_source": C.chain_source(), "frameworks_missing": missing, "rows": out_rows,
            "gpu": gpu_section}


def _once(fn):
    """``fn`` called at most once, on first use."""
    memo = []

    def get():
        if not memo:
            memo.append(fn())
        return memo[0]

    return get


def _gbps(nbytes: int, us: float | None) -> float | None:
    return nbytes / (us * 1e3) if us else None  # bytes per microsecond / 1000 = GB/s


def _bandwidth(case, results, numpy_, settings, progress) -> dict:
    """Effective GB/s of every framework's cell, and of the baseline copy timed now (with
    NumPy, a dependency of kernelgraph, whichever frameworks were selected)."""
    bw = case.bandwidth
    if progress is not None:
        progress(f"  {case.id:<3} {'(bandwidth baseline)':<36} {bw.baseline_label} ...")
    base = _run_cell(case, "numpy", numpy_, settings, None, setup=bw.baseline)
    base.pop("check", None)
    base_gbps = _gbps(bw.baseline_nbytes, base["us"])
    gbps = {f: _gbps(bw.nbytes, results[f]["us"]) for f in FRAMEWORKS}
    kg = gbps["kernelgraph"]
    return {"bytes_per_call": bw.nbytes, "counting": bw.counting, "gbps": gbps,
            "baseline": {"label": bw.baseline_label, "bytes_per_call": bw.baseline_nbytes,
                         "gbps": base_gbps, **base},
            "kernelgraph_vs_baseline": kg / base_gbps if kg and base_gbps else None}


# -- output -------------------------------------------------------------------------------------
def _fmt_us(cell: dict) -> str:
    us = cell["us"]
    if us is None:
        return "error" if cell.get("error") else "n/a"
    text = f"{us:.3f}" if us < 1 else f"{us:.2f}" if us < 100 else f"{us:.0f}"
    return text + ("!" if cell.get("check", "ok") != "ok" else "")


def _fmt_ratio(r) -> str:
    if r is None:
        return "n/a"
    return f"{r:.3f}x" if r < 1 else f"{r:.2f}x" if r < 10 else f"{r:.1f}x" if r < 100 \
        else f"{r:.0f}x"


def _fmt_gbps(gbps) -> str:
    return "n/a" if gbps is None else f"{gbps:.1f}"


def _fmt_bandwidth(row) -> str:
    bw = row.get("bandwidth")
    if bw is None:
        return "-"
    return f"{_fmt_gbps(bw['gbps']['kernelgraph'])} | {_fmt_gbps(bw['baseline']['gbps'])}"


def _status(row) -> str:
    if row["target"] is None:
        return ""
    if row["pass"] is None:
        return "n/a"
    mark = "pass" if row["pass"] else "FAIL"
    return mark + ("*" if row["unchecked"] else "")


def format_table(doc: dict) -> str:
    """The results as a plain-text table with a header and footnotes."""
    m, method = doc["machine"], doc["method"]
    versions = " | ".join(f"{k} {m[k]}" for k in ("numpy", "numba", "torch", "tensorflow")
                          if m.get(k))
    lines = [
        f"kernelgraph {m['kernelgraph']} benchmarks ({m['date']})",
        f"python {m['python']} ({m['python_implementation']}) | {versions}",
        f"CPUs: {m['cpu_count']} ({m['cpu_usable']} usable), {m['cpu_model']} | "
        f"{m['platform']}",
        f"timing: timeit, best of {method['repeat']} repeats of "
        + (f"{method['number']} iterations" if method["number"] != "calibrated"
           else f"N iterations (N calibrated to >= {method['min_time_s']:g} s a repeat)")
        + f", after warm-up; GC {'on' if method['gc_enabled_while_timing'] else 'off'}; "
        "microseconds per call; ratios are kernelgraph / other (lower is better)",
        "",
    ]
    header = ["#", "benchmark", "unit"] + [LABELS[f] for f in FRAMEWORKS] + \
        [f"kg/{SHORT[f]}" for f in FRAMEWORKS[1:]] + ["GB/s kg | copy", "target", "status"]
    table = [header]
    for row in doc["rows"]:
        res = row["results"]
        table.append([row["id"], row["title"], row["unit"]]
                     + [_fmt_us(res[f]) for f in FRAMEWORKS]
                     + [_fmt_ratio(row["ratios"][f]) for f in FRAMEWORKS[1:]]
                     + [_fmt_bandwidth(row), row["target"] or "-", _status(row)])
    left = {0, 1, 2, len(header) - 2, len(header) - 1}
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]

    def fmt(r):
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    lines.append(fmt(header))
    lines.append("  ".join("-" * w for w in widths))
    lines += [fmt(r) for r in table[1:]]
    lines += ["", *_footnotes(doc)]
    if doc.get("compile"):
        lines += ["", *compile_time.describe(doc["compile"])]
    # the GPU rows
    if doc.get("gpu"):
        lines += ["", *_gpu_rows.describe(doc["gpu"])]
    return "\n".join(lines)


def _footnotes(doc) -> list[str]:
    notes, reasons = [], {}
    for row in doc["rows"]:
        for f in FRAMEWORKS:
            cell = row["results"][f]
            if cell["us"] is None:
                reasons.setdefault((f, cell["reason"]), []).append(row["id"])
            elif cell.get("check", "ok") != "ok":
                notes.append(f"! {LABELS[f]} row {row['id']}: {cell['check']}")
    for (f, why), ids in reasons.items():
        notes.append(f"n/a {LABELS[f]} (rows {', '.join(ids)}): {why}")
    for row in doc["rows"]:
        if row["unchecked"]:
            notes.append(f"* row {row['id']}: not checked: {', '.join(row['unchecked'])}")
        bw = row.get("bandwidth")
        if bw is not None:
            per = ", ".join(f"{LABELS[f]} {_fmt_gbps(g)}" for f, g in bw["gbps"].items())
            base = bw["baseline"]
            ratio = bw["kernelgraph_vs_baseline"]
            notes.append(f"row {row['id']} GB/s: {per}; copy baseline ({base['label']}, "
                         f"same run): {_fmt_gbps(base['gbps'])}"
                         + (f" ({base['reason']})" if base["us"] is None else "")
                         + f"; kernelgraph / copy = {_fmt_ratio(ratio)}; {bw['counting']}")
        nodes = [f"{LABELS[f]} {cell['graph_nodes']}" for f, cell in row["results"].items()
                 if cell.get("graph_nodes")]
        if nodes:
            notes.append(f"row {row['id']} is per node of the graph built; nodes in the built "
                         f"graph: {', '.join(nodes)}")
    # the distributed rows' derived figures
    from . import distributed as _pool_rows
    notes += _pool_rows.footnotes(doc)
    notes.append("chain: (x * 1.01, x + 0.5, tanh(x), sigmoid(x)) x 25 = 100 ops on a (16,) "
                 "float32 tensor; numpy sigmoid is 1 / (1 + exp(-x))")
    return notes


def write_json(doc: dict, path: str) -> None:
    """Write ``doc`` to ``path`` atomically (a temporary file, then a rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bench-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kernelgraph.bench",
        description="Time kernelgraph's eager and static modes against NumPy, and against "
                    "PyTorch and TensorFlow (compat.v1) when they are installed, in one run. "
                    "Prints a table and writes the results as JSON.")
    p.add_argument("--json", default="bench-results.json", metavar="PATH",
                   help="where to write the results (default: %(default)s)")
    p.add_argument("--quick", action="store_true",
                   help=f"fast smoke run: {QUICK.repeat} repeats of >= {QUICK.min_time:g} s "
                        f"(default: {FULL.repeat} repeats of >= {FULL.min_time:g} s)")
    p.add_argument("--repeat", type=int, metavar="N", help="repeats per cell")
    p.add_argument("--number", type=int, metavar="N",
                   help="fixed iterations per repeat (default: calibrated)")
    p.add_argument("--min-time", type=float, metavar="S",
                   help="calibrate each repeat to last at least S seconds")
    p.add_argument("--no-gc", action="store_true",
                   help="disable the garbage collector while timing (timeit's default)")
    p.add_argument("--frameworks", default=",".join(FRAMEWORKS), metavar="LIST",
                   help="comma-separated subset of %(default)s (kernelgraph always runs)")
    p.add_argument("--rows", metavar="LIST",
                   help="only these rows, comma-separated ids (11 selects 11a-c; 'compile' "
                        "the first-run compile timing; 'gpu' the GPU rows G1-G8b); "
                        "default: all")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def main(argv=None) -> int:
    """Command-line entry point; returns the exit status (1 if an output check failed or
    kernelgraph raised, else 0; missed targets are reported, not failed)."""
    parser = _parser()
    args = parser.parse_args(argv)
    for flag in ("repeat", "number"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            parser.error(f"--{flag} must be at least 1")
    if args.min_time is not None and args.min_time <= 0:
        parser.error("--min-time must be positive")
    base = QUICK if args.quick else FULL
    settings = Settings(repeat=args.repeat if args.repeat is not None else base.repeat,
                        min_time=args.min_time if args.min_time is not None else base.min_time,
                        number=args.number, gc=not args.no_gc)
    frameworks = tuple(f.strip() for f in args.frameworks.split(",") if f.strip())
    try:
        progress = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
        doc = run(settings, frameworks, progress, args.rows)
    except (ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_table(doc))
    write_json(doc, args.json)
    print(f"\nwrote {args.json}")
    failed = any((f == "kernelgraph" and cell.get("error")) or cell.get("check", "ok") != "ok"
                 for row in doc["rows"] for f, cell in row["results"].items())
    failed = failed or _gpu_rows.failed(doc.get("gpu"))  # GPU rows' checks
    return 1 if failed else 0
