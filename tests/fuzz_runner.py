"""The fuzz harness's runner (tests/fuzzing.py): one case run in every mode and on every
device, in the worker process, each result judged by the oracle and against the other
modes; the findings, one line each."""

from __future__ import annotations

import os
import traceback
import warnings
from pathlib import Path

import numpy as np

from tests.fuzz_inputs import FLOAT_NAMES, SUPPORTED, user_value
from tests.fuzz_oracle import Expect, Refusal, clear_error, compare, expect, same_bits
from tests.fuzz_programs import call_step


# -- running a case (in the worker) ------------------------------------------------------------
def _host(v) -> np.ndarray:
    """A kernelgraph result as a host array."""
    if hasattr(v, "detach"):
        v = v.detach().cpu()._array
    if hasattr(v, "copy_to_host"):
        v = v.copy_to_host()
    return np.asarray(v) if not isinstance(v, np.ndarray) else v


def _kind(dt: np.dtype) -> str:
    return {"b": "b", "i": "i", "u": "i", "f": "f"}.get(dt.kind, "?")


def check_exact(got: np.ndarray, source) -> str | None:
    """None if ``got`` holds exactly the values of ``source`` (an array or nested list)."""
    src = np.asarray(source) if not isinstance(source, np.ndarray) else source
    if got.shape != src.shape:
        return f"shape {got.shape}, expected {src.shape}"
    if src.dtype.kind == "f" or got.dtype.kind == "f":
        a = got.astype(np.float64)
        b = src.astype(np.float64)
        same = (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
    else:
        same = got.astype(object) == src.astype(object)
    if np.all(same):
        return None
    where = tuple(int(i[0]) for i in np.nonzero(~np.asarray(same))) if got.ndim else ()
    return f"values changed: {src[where]!r} became {got[where]!r} at {where}"


def _natural(spec: dict, value) -> np.dtype:
    """The kernelgraph dtype a placeholder fed ``value`` would be declared with."""
    src = np.asarray(value)
    kind = src.dtype.kind
    if kind == "b":
        return np.dtype(np.bool_)
    if kind in "iu":
        return np.dtype(np.int32) if src.dtype == np.dtype(">i4") or src.dtype == np.int32 \
            else np.dtype(np.int64)
    if kind == "f":
        return np.dtype(np.float64) if src.dtype.itemsize == 8 else np.dtype(np.float32)
    return np.dtype(np.float32)


# The file whose lines create the nodes of static mode (call_step's): a run-time error
# names the user's line, here one of them.
CALLS_FROM = Path(call_step.__code__.co_filename).name


class Runner:
    """Runs one case in one process and collects its findings."""

    def __init__(self, case: dict):
        import kernelgraph as kg

        self.kg = kg
        self.case = case
        self.findings: list[str] = []
        self.cuda = "cuda" in case.get("devices", ()) and kg.cuda.is_available()

    def note(self, where: str, text: str) -> None:
        self.findings.append(f"[{where}] {text}")

    def guarded(self, where: str, fn):
        """``fn()``, or None after noting an error that is not a clear one."""
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the error itself is checked
            why = clear_error(e)
            if why is not None:
                self.note(where, f"unclear error: {why}\n{_short_tb(e)}")
            return None

    # -- ingestion -----------------------------------------------------------------------------
    def ingest(self) -> dict:
        """kg.tensor, kg.constant and fed placeholders on each input; returns {name: host
        array that kg.tensor made} for the inputs kernelgraph accepted."""
        kg = self.kg
        accepted = {}
        for name, spec in self.case["inputs"].items():
            value = user_value(spec)
            src = value if isinstance(value, np.ndarray) else _python_numbers(value)
            t, err = None, None
            try:
                t = kg.tensor(value)
            except Exception as e:  # noqa: BLE001
                err = e
            if err is not None:
                why = clear_error(err)
                if why is not None:
                    self.note(f"ingest {name}", f"kg.tensor: unclear error: {why}")
                elif src is not None and src.dtype.kind in "biuf" and not _lossy(src):
                    self.note(f"ingest {name}", f"kg.tensor refused exactly representable "
                              f"{src.dtype} values: {err}")
                elif src is not None and not _from_python(spec) and \
                        src.dtype.name not in str(err) and src.dtype.str not in str(err):
                    self.note(f"ingest {name}", f"kg.tensor's refusal does not name the dtype "
                              f"{src.dtype}: {str(err)[:200]}")
            else:
                got = t._array
                self._check_ingested(f"ingest {name}", "kg.tensor", got, value, src, spec)
                if isinstance(value, np.ndarray) and got.size and np.shares_memory(got, value):
                    self.note(f"ingest {name}", "kg.tensor shares memory with the array")
                accepted[name] = got
            self._ingest_static(name, spec, value, accepted.get(name), err)
            if self.cuda and spec.get("cuda_ingest", True):
                self._ingest_cuda(name, value, accepted.get(name))
        return accepted

    def _check_ingested(self, where, how, got, value, src, spec):
        if got.dtype.name not in SUPPORTED:
            self.note(where, f"{how} made a {got.dtype} array (not a kernelgraph dtype)")
            return
        if src is None:
            return
        if _from_python(spec) and src.dtype.kind == "f" and got.dtype.kind == "f":
            # Python floats become float32 (PyTorch's default): rounded, as there.
            want = src.astype(np.float32) if got.dtype == np.float32 else src
            why = check_exact(got, want)
        elif src.dtype.kind in "biuf" and _kind(src.dtype) != _kind(got.dtype):
            why = f"kind changed: {src.dtype} became {got.dtype}"
        else:
            why = check_exact(got, src) if src.dtype.kind in "biuf" else None
            if src.dtype.kind not in "biuf":
                why = check_exact(got, _object_numbers(src)) if _object_numbers(src) \
                    is not None else f"{src.dtype} values became {got.dtype}"
        if why is not None:
            self.note(where, f"{how}: {why}")

    def _ingest_static(self, name, spec, value, eager, eager_err):
        kg = self.kg
        # kg.constant(value) must agree with kg.tensor(value)
        try:
            g = kg.Graph()
            with g.as_default():
                c = kg.constant(value)
                with kg.Session(g) as sess:
                    got = np.asarray(sess.run(c))
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is not None:
                self.note(f"ingest {name}", f"kg.constant: unclear error: {why}")
            elif eager is not None:
                self.note(f"ingest {name}", f"kg.constant refused what kg.tensor took: {e}")
        else:
            if eager is None:
                self.note(f"ingest {name}", f"kg.constant took what kg.tensor refused "
                          f"({eager_err}): gave {got.dtype} {got!r:.80}")
            elif (why := same_bits(got, eager)) is not None:
                self.note(f"ingest {name}", f"kg.constant differs from kg.tensor: {why}")
        # a placeholder of the natural dtype fed the value
        declared = eager.dtype if eager is not None else _natural(spec, value)
        try:
            g = kg.Graph()
            with g.as_default():
                p = kg.placeholder(declared, shape=None)
                with kg.Session(g) as sess:
                    got = np.asarray(sess.run(kg.identity(p), {p: value}))
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is not None:
                self.note(f"ingest {name}", f"feed to a {declared} placeholder: unclear error: "
                          f"{why}")
            elif eager is not None:
                self.note(f"ingest {name}", f"a {declared} placeholder refused what "
                          f"kg.tensor took: {e}")
        else:
            src = value if isinstance(value, np.ndarray) else _python_numbers(value)
            why = None
            kind = np.asarray(value).dtype.kind
            if eager is None and kind == "M":
                why = f"took the {np.asarray(value).dtype} values kg.tensor refused"
            elif eager is None and kind in "US":
                # TF1's feed_dict reads text as numbers (tests/recorded/dtype_rules.json),
                # and so does kernelgraph's (documented in dtypes.convert): '1.5' is 1.5.
                why = check_exact(got, np.asarray(value).astype(declared))
            elif got.dtype != declared:
                why = f"fetched {got.dtype} from a {declared} placeholder"
            elif src is not None and src.dtype.kind in "biuf" and not (
                    src.dtype.kind == "f" and _from_python(spec)):
                why = check_exact(got, src)
            if why is not None:
                self.note(f"ingest {name}", f"feed to a {declared} placeholder: {why}")

    def _ingest_cuda(self, name, value, eager):
        try:
            t = self.kg.tensor(value, device="cuda")
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is not None:
                self.note(f"ingest {name} cuda", f"unclear error: {why}")
            elif eager is not None:
                self.note(f"ingest {name} cuda", f"refused what the CPU took: {e}")
            return
        if eager is None:
            self.note(f"ingest {name} cuda", "took what the CPU refused")
        elif (why := same_bits(_host(t), eager)) is not None:
            self.note(f"ingest {name} cuda", f"differs from the CPU tensor: {why}")

    # -- programs ------------------------------------------------------------------------------
    def operands(self, step, env):
        return [env[a] if isinstance(a, str) else a for a in step["args"]]

    def eager(self, accepted: dict, device: str = "cpu", entry: str = "tensor",
              override=None):
        """Each step eagerly, checked against the oracle; returns ({id: host value},
        {id: error}) for the comparison with the other modes. ``override`` ({step: array})
        replaces steps' results, as a feed replaces a node's value in a graph."""
        kg = self.kg
        case = self.case
        override = override or {}
        where = f"eager/{entry}/{device}" + "".join(
            f" (with {k} = {v!r:.100})" for k, v in override.items())
        env, host, errors = {}, {}, {}
        dev = None if device == "cpu" else device
        for i, (name, spec) in enumerate(case["inputs"].items()):
            if name not in accepted:
                return host, {"ingest": name}
            host[name] = accepted[name]
            if name in override:
                host[name] = override[name]
                env[name] = kg.tensor(override[name], device=dev)
            elif entry == "raw" or (entry == "mixed" and i == 0):
                env[name] = user_value(spec)
            else:
                env[name] = kg.tensor(user_value(spec), device=dev,
                                      requires_grad=name in case.get("grad_inputs", ()) and
                                      entry == "tensor")
        for step in case["steps"]:
            out = step["out"]
            if out in override:
                host[out] = override[out]
                env[out] = kg.tensor(override[out], device=dev)
                continue
            args = self.operands(step, env)
            ref_args = [host[a] if isinstance(a, str) else a for a in step["args"]]
            if step["op"] in ("concat", "stack"):
                ref_args = [host[a] for a in step["args"]]
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    kg.kernels.cpu.ignore_fp_warnings()  # kernelgraph's filter, as imported
                    result = call_step(kg, step, args, raw=entry == "raw")
            except Exception as e:  # noqa: BLE001
                errors[out] = e
                if not override:  # a replaced run only makes values for static mode's
                    self._judge_error(where, step, ref_args, e)
                return host, errors
            if caught and os.environ.get("KG_FUZZ_WARNINGS"):
                # PyTorch prints nothing for NaN or overflow; kernelgraph should not either.
                self.note(where, f"{out} = {step['op']} warned: "
                          f"{'; '.join(sorted({str(w.message) for w in caught}))}")
            if entry == "raw" and not isinstance(result, np.ndarray) and device == "cpu":
                self.note(where, f"{out}: raw arrays gave a {type(result).__name__}")
                return host, errors
            got = _host(result)
            host[out] = got
            env[out] = result
            if dev is not None and not _on_cuda(result):
                self.note(where, f"{out} = {step['op']}: result left the device "
                          f"({type(result).__name__})")
            if not override:
                self._judge_value(where, step, ref_args, got)
        return host, errors

    def _judge_error(self, where, step, ref_args, e):
        """A step raised: fine if it must (the oracle refuses it) and the error is a clear
        one. A raw array of a dtype kernelgraph does not keep is no excuse: an op converts
        it as kg.tensor does (dtypes.operand), so it computes what kg.tensor inputs do."""
        why = clear_error(e)
        if why is not None:
            self.note(where, f"{step['out']} = {step['op']}: unclear error: {why}\n"
                      f"{_short_tb(e)}")
            return
        try:
            exp = expect(step["op"], ref_args, step["attrs"])
        except Refusal:
            return
        except Exception as oracle_error:  # noqa: BLE001 - a bug of this harness
            self.note(where, f"oracle failed on {step['op']}: {oracle_error!r}")
            return
        if not exp.either:
            self.note(where, f"{step['out']} = {step['op']} raised {type(e).__name__}: "
                      f"{str(e)[:300]}; NumPy computes it")

    def _judge_value(self, where, step, ref_args, got):
        try:
            exp = expect(step["op"], ref_args, step["attrs"], kg_dtype=got.dtype.name)
        except Refusal as r:
            self.note(where, f"{step['out']} = {step['op']} returned {got.dtype} "
                      f"{got.shape} where an error was expected ({r})")
            return
        except Exception as oracle_error:  # noqa: BLE001
            self.note(where, f"oracle failed on {step['op']}: {oracle_error!r}")
            return
        why = compare(got, exp)
        if why is not None:
            self.note(where, f"{step['out']} = {step['op']}: {why}")

    def static(self, accepted: dict, eager_host: dict, eager_errors: dict, feed: str,
               device: str = "cpu", override=None):
        """The program as a graph (placeholders fed the user's arrays, or constants; and
        the steps in ``override`` fed their replacement): the fetched values must be
        eager's (bit for bit on the CPU)."""
        kg = self.kg
        case = self.case
        override = override or {}
        where = f"static/{feed}/{device}" + "".join(
            f" (fed {k} = {v!r:.100})" for k, v in override.items())
        if "ingest" in eager_errors:
            return
        g = kg.Graph()
        env, feeds = {}, {}
        fetch = [f for f in case["fetch"] if f in eager_host]
        failed = next(iter(eager_errors), None)
        if failed is not None:
            fetch = [failed]
        running = False
        try:
            with g.as_default(), kg.device(device):
                for name, spec in case["inputs"].items():
                    if feed == "placeholder":
                        shape = case["ph_shapes"].get(name, "exact")
                        declared = {"exact": tuple(accepted[name].shape),
                                    "dims": (None,) * accepted[name].ndim, "rank": None}[shape]
                        env[name] = kg.placeholder(accepted[name].dtype, shape=declared)
                        feeds[env[name]] = user_value(spec)
                    else:
                        env[name] = kg.constant(user_value(spec))
                    if name in override:
                        feeds[env[name]] = override[name]
                for step in case["steps"]:
                    env[step["out"]] = call_step(kg, step, self.operands(step, env))
                    if step["out"] in override:
                        feeds[env[step["out"]]] = override[step["out"]]
                    if all(f in env for f in fetch):
                        break
                nodes = [env[f] for f in fetch]
                grads = [] if override else self._static_grads(env, feed, fetch, eager_host)
                with kg.Session(g) as sess:
                    running = True
                    values = sess.run(nodes + [x for x in grads if x is not None],
                                      feeds or None)
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is None and running and isinstance(e, kg.errors.OpError) and \
                    CALLS_FROM not in str(e):
                why = f"a run-time error that does not name the line that made the node: {e}"
            if why is not None:
                self.note(where, f"unclear error: {why}\n{_short_tb(e)}")
            elif failed is None:
                self.note(where, f"raised {type(e).__name__} where eager computed: "
                          f"{str(e)[:300]}")
            return
        if failed is not None:
            self.note(where, f"computed {fetch[0]} where eager raised "
                      f"{type(eager_errors[failed]).__name__}: {eager_errors[failed]}")
            return
        for f, v in zip(fetch, values):
            node = env[f]
            v = np.asarray(v)
            if node.dtype != v.dtype:
                self.note(where, f"{f}: node dtype {node.dtype} but ran {v.dtype}")
            if node.shape is not None and (len(node.shape) != v.ndim or any(
                    d is not None and d != s for d, s in zip(node.shape, v.shape))):
                self.note(where, f"{f}: node shape {node.shape} but ran {v.shape}")
            why = same_bits(v, eager_host[f]) if device == "cpu" else \
                _close(v, eager_host[f])
            if why is not None:
                self.note(where, f"{f} differs from eager: {why}")
        if not override:
            self.static_grads = (grads, values[len(fetch):])

    def _static_grads(self, env, feed, fetch, eager_host):
        case = self.case
        if feed != "placeholder" or not case.get("grad_inputs") or len(fetch) != 1 or \
                fetch[0] not in eager_host:
            return []
        kg = self.kg
        out = env[fetch[0]]
        if out.dtype.name not in FLOAT_NAMES:
            return []
        w = kg.constant(grad_weight(eager_host[fetch[0]].shape, out.dtype))
        return kg.gradients(kg.sum(out * w), [env[n] for n in self.grad_wrt()])

    def grad_wrt(self) -> list:
        """The inputs, and maybe one intermediate step, to differentiate with respect to
        (an intermediate one checks total derivatives: the inputs' gradients flow through
        it too)."""
        mid = self.case.get("grad_through")
        return list(self.case["grad_inputs"]) + ([mid] if mid else [])

    def eager_grads(self, device="cpu"):
        """Gradients of sum(out * w) on fresh tensors, {name: host gradient or None}:
        the inputs' by backward(), an intermediate's by kg.autograd.grad."""
        kg = self.kg
        case = self.case
        dev = None if device == "cpu" else device
        env = {}
        for name, spec in case["inputs"].items():
            env[name] = kg.tensor(user_value(spec), device=dev,
                                  requires_grad=name in case["grad_inputs"])
        for step in case["steps"]:
            env[step["out"]] = call_step(kg, step, self.operands(step, env))
        out = env[case["fetch"][0]]
        if out.dtype.name not in FLOAT_NAMES or not out.requires_grad:
            return {n: None for n in case["grad_inputs"]}
        loss = (out * kg.tensor(grad_weight(out.shape, out.dtype), device=dev)).sum()
        grads = {}
        mid = case.get("grad_through")
        if mid and env[mid].requires_grad:
            (g,) = kg.autograd.grad(loss, [env[mid]], retain_graph=True, allow_unused=True)
            grads[mid] = None if g is None else _host(g)
        loss.backward()
        for n in case["grad_inputs"]:
            grads[n] = None if env[n].grad is None else _host(env[n].grad)
        return grads

    def check_grads(self, accepted, device="cpu"):
        where = f"grad/{device}"
        grads = self.guarded(where + " eager", lambda: self.eager_grads(device))
        static = getattr(self, "static_grads", None)
        if grads is None or static is None:
            return
        nodes, values = static
        it = iter(values)
        for name, node in zip(self.grad_wrt(), nodes):
            s = None if node is None else np.asarray(next(it))
            if name not in grads:  # an intermediate that needs no gradient in eager mode
                continue
            e = grads[name]
            if e is None and s is not None and np.any(s != 0):
                self.note(where, f"d/d{name}: static {s!r:.80} but eager None")
            elif e is not None and s is None:
                self.note(where, f"d/d{name}: eager {e!r:.80} but static None")
            elif e is not None and s is not None:
                x = accepted.get(name)
                if x is not None and (e.shape != x.shape or e.dtype != x.dtype):
                    self.note(where, f"d/d{name}: {e.dtype}{e.shape}, input {x.dtype}{x.shape}")
                why = same_bits(s, e) if device == "cpu" else _close(s, e)
                if why is not None:
                    self.note(where, f"d/d{name}: static vs eager: {why}")

    def run(self) -> list[str]:
        case = self.case
        accepted = self.ingest()
        if not case["steps"]:
            return self.findings
        host, errors = self.eager(accepted)
        for entry in case.get("entries", ()):
            raw_host, raw_errors = self.eager(accepted, entry=entry)
            for k, v in raw_host.items():
                if k in host and (why := same_bits(v, host[k])) is not None:
                    self.note(f"eager/{entry}/cpu", f"{k} differs from kg.tensor inputs: {why}")
        for feed in case.get("feeds", ("placeholder",)):
            self.static(accepted, host, errors, feed)
            if feed == "placeholder" and not errors and case.get("grad_inputs"):
                self.check_grads(accepted)
        fed = case.get("feed_step")
        if fed in host and fed not in errors:
            # A fed node's value wins over what its inputs compute (TF1): replace it by
            # its own values reversed, and compare with eager code doing the same.
            value = host[fed]
            override = {fed: np.ascontiguousarray(np.flip(value)) if value.ndim else
                        np.asarray(~value if value.dtype.kind == "b" else value * 2)}
            ohost, oerrors = self.eager(accepted, override=override)
            for feed in case.get("feeds", ("placeholder",)):
                self.static(accepted, ohost, oerrors, feed, override=override)
        if self.cuda:
            chost, cerrors = self.eager(accepted, device="cuda")
            for k in set(host) & set(chost):
                if host[k].dtype != chost[k].dtype or host[k].shape != chost[k].shape:
                    self.note("eager/tensor/cuda", f"{k}: {chost[k].dtype}{chost[k].shape} "
                              f"on cuda, {host[k].dtype}{host[k].shape} on cpu")
            if set(errors) != set(cerrors):
                self.note("eager/tensor/cuda", f"errors differ from the CPU: cuda "
                          f"{ {k: repr(v)[:120] for k, v in cerrors.items()} }, cpu "
                          f"{ {k: repr(v)[:120] for k, v in errors.items()} }")
            self.static_grads = None
            self.static(accepted, chost, cerrors, "placeholder", device="cuda")
            if not cerrors and case.get("grad_inputs"):
                self.check_grads(accepted, device="cuda")
        return self.findings


def _on_cuda(v) -> bool:
    return getattr(getattr(v, "device", None), "type", "cpu") == "cuda"


def _close(a, b) -> str | None:
    """Two results of one device in two modes: same dtype/shape, values within float
    rounding of each other (GPU sums run in no fixed order)."""
    a, b = np.asarray(a), np.asarray(b)
    return compare(a, Expect(b, "accum" if a.dtype.kind == "f" else "exact",
                             magnitude=np.abs(b.astype(np.float64)) + 1.0
                             if b.dtype.kind == "f" else None))


def _lossy(src: np.ndarray) -> bool:
    """True where no kernelgraph dtype holds these values exactly."""
    if src.dtype.kind in "uiO" and src.size:
        ints = [int(v) for v in src.ravel().tolist() if not isinstance(v, float)]
        return any(not -2 ** 63 <= v < 2 ** 63 for v in ints)
    return src.dtype.kind in "f" and src.dtype.itemsize > 8


def _from_python(spec: dict) -> bool:
    """True where the user hands in Python numbers (a list, ``.item()``), not NumPy's."""
    return spec["source"] == "list" or (spec["source"] == "scalar" and
                                        not spec.get("numpy_scalar"))


def _python_numbers(value):
    """Python numbers (a nested list or a scalar) as the array they denote: bools, ints
    (an object array where one is beyond int64), or floats; None for anything else."""
    if isinstance(value, np.generic):
        return np.asarray(value)
    flat = np.asarray(value, dtype=object).ravel().tolist() if isinstance(value, list) \
        else [value]
    if not all(isinstance(v, bool | int | float) for v in flat):
        return None
    shape = np.shape(np.asarray(value, dtype=object))
    if not flat:  # [] is float32 in PyTorch
        return np.zeros(shape, np.float64)
    if all(isinstance(v, bool) for v in flat):
        return np.asarray(value, dtype=bool).reshape(shape)
    if all(isinstance(v, int) for v in flat):
        if any(not -2 ** 63 <= v < 2 ** 63 for v in flat):
            return np.asarray(value, dtype=object).reshape(shape)
        return np.asarray(value, dtype=np.int64).reshape(shape)
    return np.asarray([float(v) for v in flat], dtype=np.float64).reshape(shape)


def _object_numbers(src):
    """An object array of plain numbers as the array NumPy would infer, else None."""
    if src.dtype.kind != "O":
        return None
    try:
        arr = np.array(src.tolist())
    except Exception:  # noqa: BLE001
        return None
    return arr if arr.dtype.kind in "biuf" else None


def grad_weight(shape, dtype) -> np.ndarray:
    """The upstream weight of gradient checks: tests/test_ops.py's (fixed, shape-seeded,
    both signs, away from 0), so that a gradient routed to the wrong element shows."""
    from tests.test_ops import weights

    return weights(tuple(shape), dtype)


def _short_tb(e: BaseException) -> str:
    frames = traceback.extract_tb(e.__traceback__)[-3:]
    return "  " + " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}"
                              for f in reversed(frames))


def run_case(case: dict) -> list[str]:
    """The findings of one case (empty: it passed), in this process. ``crash`` and
    ``hang`` make the harness's own test cases: a segfault and a sleep."""
    if case.get("crash"):
        import signal

        os.kill(os.getpid(), signal.SIGSEGV)
    if case.get("hang"):
        import time

        time.sleep(case["hang"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return Runner(case).run()
        except Exception as e:  # noqa: BLE001 - a harness error is a finding too
            return [f"[harness] {type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"]
