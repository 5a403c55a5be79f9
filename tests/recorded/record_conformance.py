"""Record what the real PyTorch and TensorFlow print for the conformance programs into
``conformance.json`` (read by tests/conformance/test_conformance.py).

Run with an environment that has torch 2.13.0 (CPU), tensorflow-cpu and tf-keras::

    TF_USE_LEGACY_KERAS=1 python tests/recorded/record_conformance.py [NAME ...]

Each program in tests/conformance/programs/ runs in a fresh process of this Python with its
TF 1.x imports mapped to TF 2's ``compat.v1`` (tests/conformance/runner.py); its stdout, and
the type and message of an exception it raised, are stored by program name with the
versions. Naming programs records only those and keeps the others' records.
"""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE / "conformance.json"


def _runner():
    path = HERE.parent / "conformance" / "runner.py"
    spec = importlib.util.spec_from_file_location("conformance_runner", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    import numpy
    import tensorflow as tf
    import torch

    runner = _runner()
    env = {"TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
           "TF_ENABLE_ONEDNN_OPTS": "0", "PYTHONHASHSEED": "0"}
    names = sys.argv[1:] or runner.program_names()
    old = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    programs = {k: v for k, v in old.get("programs", {}).items()
                if k in runner.program_names()}
    for name in names:
        result = runner.run_program(name, "reference", python=sys.executable, env=env)
        programs[name] = {"stdout": result["stdout"], "error": result["error"]}
        status = "ok" if result["error"] is None else f"raised {result['error']['type']}"
        print(f"{name}: {status}")
        if result["error"] is not None:
            print(result["stderr"][-2000:])
    record = {
        "versions": {"torch": torch.__version__, "tensorflow": tf.__version__,
                     "numpy": numpy.__version__, "python": platform.python_version()},
        "programs": dict(sorted(programs.items())),
    }
    OUT.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
