"""The frameworks a benchmark compares, imported only when asked for, and the machine info.

PyTorch and TensorFlow are not dependencies of kernelgraph: each is imported lazily, and a
missing (or broken) one turns its cells into "n/a" with the reason, never into a failure.
"""

from __future__ import annotations

import datetime
import importlib
import os
import platform
import sys

import kernelgraph

#: Every framework the benchmarks know, in table order.
FRAMEWORKS = ("kernelgraph", "numpy", "torch", "tensorflow")

#: Column headings.
LABELS = {"kernelgraph": "kernelgraph", "numpy": "numpy", "torch": "torch",
          "tensorflow": "tf.compat.v1"}

#: Short names for the ratio columns (kernelgraph / other).
SHORT = {"numpy": "np", "torch": "torch", "tensorflow": "tf1"}


def load(name: str):
    """``(module, None)`` for framework ``name``, or ``(None, reason)`` when it can't load."""
    if name not in FRAMEWORKS:
        raise ValueError(f"unknown framework {name!r}; expected one of {', '.join(FRAMEWORKS)}")
    if name == "tensorflow":
        # TensorFlow logs several INFO lines on import; keep the table readable.
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        return importlib.import_module(name), None
    except ImportError as e:
        return None, f"{name} is not installed ({e})"
    except Exception as e:  # noqa: BLE001 - a broken install is reported, not fatal
        return None, f"{name} failed to import: {type(e).__name__}: {e}"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(modules: dict) -> dict:
    """Versions and CPU facts worth keeping next to the numbers.

    ``modules`` maps framework names to the imported module, or None when unavailable.
    """
    import numba
    import numpy

    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "kernelgraph": kernelgraph.__version__,
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "torch": None,
        "tensorflow": None,
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "executable": sys.executable,
    }
    torch = modules.get("torch")
    if torch is not None:
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    tf = modules.get("tensorflow")
    if tf is not None:
        info["tensorflow"] = tf.__version__
    return info
