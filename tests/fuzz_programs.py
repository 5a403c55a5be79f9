"""The fuzz harness's programs (tests/fuzzing.py): cases of 1-6 steps drawn from the op
families over odd inputs (hypothesis strategies, parent process only), one step called on
kernelgraph values (tensors, graph nodes, raw arrays, numbers), and a case written as a
program to paste."""

from __future__ import annotations

import math

import numpy as np

from tests.fuzz_inputs import (
    CONVERTIBLE,
    FLOAT_NAMES,
    SIDES,
    SUPPORTED,
    _literal,
    _natural_name,
    _strategies,
    decode_index,
    input_spec,
    render_input,
    shapes,
)
from tests.fuzz_oracle import ARITH, COMPARE, NN, REDUCE, SHAPE, UNARY, Refusal, expect

# -- steps: calling kernelgraph --------------------------------------------------------------
OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "less": "<",
             "less_equal": "<=", "greater": ">", "greater_equal": ">="}


def call_step(kg, step: dict, values: list, raw: bool = False):
    """Run one step on kernelgraph values (tensors, graph nodes, raw arrays, numbers)."""
    op, attrs = step["op"], dict(step["attrs"])
    # A Python operator or x[...] on raw arrays and numbers alone is NumPy's, not ours.
    raw = raw or all(isinstance(v, np.ndarray | int | float) for v in values)
    if op == "getitem":
        if raw:
            return kg.ops.getitem(values[0], index=kg.ops.normalize_index(decode_index(
                attrs["index"])))
        return values[0][decode_index(attrs["index"])]
    if op in ("concat", "stack"):
        return getattr(kg, op)(values, **attrs)
    if step.get("form") == "operator" and not raw and op in OPERATORS:
        a, b = values
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: a / b, "**": lambda: a ** b, "<": lambda: a < b,
                "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[
                    OPERATORS[op]]()
    if op == "cast":
        attrs["dtype"] = getattr(kg, {"bool": "bool_"}.get(attrs["dtype"], attrs["dtype"]))
    return getattr(kg.ops if op in CARD_ONLY else kg, op)(*values, **attrs)


# Ops whose kg name means PyTorch's function (kg.equal of two tensors is torch.equal, a
# bool): the fuzzer calls the elementwise card itself.
CARD_ONLY = {"equal"}


def render_step(step: dict, names: list, raw: bool = False) -> str:
    op, attrs = step["op"], step["attrs"]
    args = [n if isinstance(n, str) else _literal(n) for n in names]
    if op == "getitem":
        idx = ", ".join("..." if i == "..." else "None" if i is None else
                        ":".join("" if p is None else str(p) for p in i)
                        if isinstance(i, list | tuple) else str(i) for i in attrs["index"]
                        ) or "()"
        if raw:
            return f"kg.ops.getitem({args[0]}, index=kg.ops.normalize_index(np.s_[{idx}]))"
        return f"{args[0]}[{idx}]"
    if step.get("form") == "operator" and op in OPERATORS and not raw:
        return f"{args[0]} {OPERATORS[op]} {args[1]}"
    kw = "".join(f", {k}={v!r}" if k != "dtype" else f", dtype=kg.{v}"
                 for k, v in attrs.items())
    if op in ("concat", "stack"):
        return f"kg.{op}([{', '.join(args)}]{kw})"
    space = "kg.ops" if op in CARD_ONLY else "kg"
    return f"{space}.{op}({', '.join(args)}{kw})"


def render(case: dict, mode: str = "eager", device: str = "cpu") -> str:
    """The case as a short program a person can paste (``mode``: eager, raw, mixed,
    placeholder, constant)."""
    lines = ["import numpy as np", "import kernelgraph as kg"]
    inputs = case["inputs"]
    for name, spec in inputs.items():
        lines.append(render_input(name, spec))
    dev = "" if device == "cpu" else f", device={device!r}"
    static = mode in ("placeholder", "constant")
    if static:
        lines.append("g = kg.Graph()")
        lines.append("with g.as_default()" + (f", kg.device({device!r}):" if dev else ":"))
    ind = "    " if static else ""
    feeds = []
    for i, name in enumerate(inputs):
        if mode == "eager" or (mode == "mixed" and i > 0):
            grad = ", requires_grad=True" if name in case.get("grad_inputs", ()) else ""
            lines.append(f"{name} = kg.tensor({name}{grad}{dev})")
        elif mode == "placeholder":
            shape = tuple(inputs[name]["shape"])
            declared = {"exact": shape, "dims": (None,) * len(shape), "rank": None}[
                case["ph_shapes"].get(name, "exact")]
            lines.append(f"{ind}{name}_p = kg.placeholder(kg.{case['ph_dtypes'].get(name, '?')}"
                         f", shape={declared!r})")
            feeds.append(name)
        elif mode == "constant":
            lines.append(f"{ind}{name}_p = kg.constant({name})")
    raw_names = set(inputs) if mode == "raw" else set(list(inputs)[:1]) if mode == "mixed" \
        else set()
    for step in case["steps"]:
        names = [(a + "_p" if static and a in inputs else a) if isinstance(a, str) else a
                 for a in step["args"]]
        raw = all(a in raw_names for a in step["args"] if isinstance(a, str))
        if raw and mode in ("raw", "mixed"):
            raw_names.add(step["out"])
        lines.append(f"{ind}{step['out']} = {render_step(step, names, raw=raw)}")
    fetch = case["fetch"] or list(inputs)
    if case.get("feed_step"):
        lines.append(f"# a finding marked 'fed {case['feed_step']} = ...' feeds that value "
                     f"to {case['feed_step']} too")
    if case.get("grad_inputs"):
        wrt = ", ".join(list(case["grad_inputs"]) + [case["grad_through"]]
                        if case.get("grad_through") else list(case["grad_inputs"]))
        lines.append(f"# a 'grad' finding: gradients of sum({fetch[0]} * w) with respect to "
                     f"{wrt} (w: test_ops.weights)")
    if static:
        feed = "{" + ", ".join(f"{n}_p: {n}" for n in feeds) + "}"
        lines.append(f"{ind}print(kg.Session().run([{', '.join(fetch)}], {feed}))")
    else:
        lines.append(f"print({', '.join(fetch)})")
    return "\n".join(lines)


# -- drawing programs (hypothesis strategies; the parent process only) -------------------------
# Identities first and often: the static compiler simplifies x + 0, x * 1, x ** 1 ...
IDENTITIES = [0, 1, -0.0, 0.0, 1.0, True, False]
SCALARS = [-1, 2, -3, 0.5, 2.5, 1e38, math.nan, math.inf, -math.inf, 2 ** 31, 1e-45, -2.0]
FAMILIES = {
    "elementwise": UNARY + ARITH + COMPARE + ("where", "cast", "clip"),
    "reduce": REDUCE,
    "shape": SHAPE + ("gather", "one_hot"),
    "nn": NN,
}


class _Program:
    """The state of a program being drawn: its inputs, steps and the abstract (shape,
    dtype) of every value."""

    def __init__(self, draw, dtypes, odd_share):
        self.draw = draw
        self.dtypes = dtypes
        self.odd_share = odd_share
        self.inputs, self.steps, self.abstract = {}, [], {}
        self.done = False

    def new_input(self, shape, dtype=None) -> str:
        st = _strategies()
        if dtype is None:
            odd = self.draw(st.integers(0, 99)) < self.odd_share
            dtypes = self.dtypes if odd else SUPPORTED
        else:
            dtypes = (dtype,)
        name = f"x{len(self.inputs)}"
        self.inputs[name] = input_spec(self.draw, tuple(shape), dtypes)
        self.abstract[name] = (tuple(shape), _natural_name(self.inputs[name]["dtype"]))
        return name

    def int_input(self, shape, low, high) -> str:
        st = _strategies()
        name = f"x{len(self.inputs)}"
        n = math.prod(shape)
        dtype = self.draw(st.sampled_from(["int64", "int32", "int64", "uint8"] if low >= 0
                                          else ["int64", "int32"]))
        values = self.draw(st.lists(st.integers(low, high), min_size=n, max_size=n))
        self.inputs[name] = {"dtype": dtype, "shape": tuple(shape), "base_shape": tuple(shape),
                             "values": values, "layout": "c", "readonly": False,
                             "source": "array", "numpy_scalar": False}
        self.abstract[name] = (tuple(shape), _natural_name(dtype))
        return name

    def pick(self) -> str:
        st = _strategies()
        ids = list(self.abstract)
        last = ids[-1]
        return self.draw(st.sampled_from([last, last, last] + ids))

    def zeros(self, vid):
        shape, dt = self.abstract[vid]
        return np.zeros(shape, dt)

    def add(self, op, args, attrs, form="fn"):
        out = f"v{len(self.steps)}"
        step = {"op": op, "args": args, "attrs": attrs, "out": out, "form": form}
        self.steps.append(step)
        ref_args = [self.zeros(a) if isinstance(a, str) else a for a in args]
        try:
            exp = expect(op, ref_args, attrs)
        except (Refusal, Exception):  # noqa: BLE001 - the step is expected to fail: last one
            self.done = True
            return out
        if exp.value is None:
            self.done = True
            return out
        self.abstract[out] = (exp.value.shape, exp.value.dtype.name)
        return out


def _broadcastable_shape(draw, shape):
    st = _strategies()
    keep = draw(st.integers(0, len(shape)))
    tail = [1 if draw(st.booleans()) else d for d in shape[len(shape) - keep:]]
    lead = draw(st.lists(st.sampled_from([1, 2]), max_size=1)) if len(shape) < 3 and \
        keep == len(shape) else []
    return tuple(lead + tail)


def _axis(draw, rank, allow_none=True, allow_tuple=True, bad=True):
    st = _strategies()
    choices = ["int"] * 3 + (["none"] if allow_none else []) + (["tuple"] if allow_tuple else [])
    kind = draw(st.sampled_from(choices)) if rank else ("none" if allow_none else "int")
    if kind == "none":
        return None
    if bad and draw(st.integers(0, 19)) == 0:
        return rank + draw(st.integers(0, 1))  # out of range: a clear error is expected
    if kind == "int":
        return draw(st.integers(-rank, rank - 1)) if rank else 0
    # Not (): NumPy and TF1 reduce over no axis there, PyTorch over every axis.
    axes = draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=1, max_size=rank))
    return tuple(a - rank if draw(st.booleans()) else a for a in axes)


def _reshape_target(draw, shape):
    st = _strategies()
    size = math.prod(shape)
    if draw(st.integers(0, 14)) == 0:
        return (size + 1,)  # wrong size
    if size == 0:
        dims = list(draw(shapes(1, 3, (0, 1, 2, 3))))
        if 0 not in dims:
            dims[0] = 0
        return tuple(dims)
    factors, n = [], size
    for p in (2, 3, 5, 7):
        while n % p == 0:
            factors.append(p)
            n //= p
    if n > 1:
        factors.append(n)
    rank = draw(st.integers(0 if size == 1 else 1, 3))
    dims = [1] * rank
    for f in factors:
        dims[draw(st.integers(0, rank - 1))] *= f
    if rank and draw(st.booleans()):
        dims[draw(st.integers(0, rank - 1))] = -1
    return tuple(dims)


def _index(draw, shape):
    st = _strategies()
    items, rank = [], len(shape)
    dim = 0
    used_ellipsis = False
    while dim < rank and draw(st.integers(0, 3)):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        d = shape[dim]
        if kind == "int":
            if d == 0 or draw(st.integers(0, 19)) == 0:
                items.append(d + draw(st.integers(0, 1)))  # out of range
            else:
                items.append(draw(st.integers(-d, d - 1)))
            dim += 1
        elif kind == "slice":
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            start = draw(st.one_of(st.none(), st.integers(-d - 1, d + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-d - 1, d + 1)))
            items.append([start, stop, step])
            dim += 1
        elif kind == "none":
            items.append(None)
        elif not used_ellipsis:
            items.append("...")
            used_ellipsis = True
            dim = rank - draw(st.integers(0, rank - dim))
    return items


def _draw_step(draw, prog: _Program, op: str) -> None:
    """Append one step of ``op`` to ``prog``, choosing operands and attributes that fit
    (and now and then ones that must be refused)."""
    st = _strategies()
    x = prog.pick()
    shape, dt = prog.abstract[x]
    rank = len(shape)
    if op in UNARY:
        prog.add(op, [x], {})
    elif op in ARITH or op in COMPARE:
        kind = draw(st.sampled_from(["same", "pool", "new", "scalar", "scalar"]))
        if kind == "pool":
            others = [v for v, (s, _) in prog.abstract.items() if _broadcasts(s, shape)]
            y = draw(st.sampled_from(others))
        elif kind == "new":
            y = prog.new_input(_broadcastable_shape(draw, shape))
        elif kind == "scalar":
            y = draw(st.one_of(st.sampled_from(IDENTITIES), st.sampled_from(SCALARS)))
        else:
            y = x
        args = [x, y] if draw(st.booleans()) or kind != "scalar" else [y, x]
        form = draw(st.sampled_from(["fn", "operator"])) if op in OPERATORS else "fn"
        prog.add(op, args, {}, form)
    elif op == "where":
        conds = [v for v, (s, d) in prog.abstract.items() if d == "bool" and _broadcasts(s,
                                                                                       shape)]
        cond = draw(st.sampled_from(conds)) if conds and draw(st.booleans()) else \
            prog.new_input(_broadcastable_shape(draw, shape), "bool")
        other = draw(st.one_of(st.just(x), st.sampled_from(list(prog.abstract))))
        if not _broadcasts(prog.abstract[other][0], shape):
            other = x
        prog.add("where", [cond, x, other], {})
    elif op == "cast":
        prog.add("cast", [x], {"dtype": draw(st.sampled_from(SUPPORTED))})
    elif op == "clip":
        lo = draw(st.sampled_from([None, -1, 0, 0.5, -1e38, -0.0]))
        hi = draw(st.sampled_from([None, 1, 2, 1.5, 1e38])) if lo is not None else \
            draw(st.sampled_from([1, 2, 1.5, 1e38]))
        prog.add("clip", [x], {"min": lo, "max": hi})
    elif op in ("sum", "mean", "max"):
        prog.add(op, [x], {"axis": _axis(draw, rank), "keepdims": draw(st.booleans())})
    elif op == "argmax":
        prog.add(op, [x], {"axis": _axis(draw, rank, allow_tuple=False),
                           "keepdims": draw(st.booleans())})
    elif op == "reshape":
        prog.add(op, [x], {"shape": _reshape_target(draw, shape)})
    elif op == "transpose":
        perm = None
        if draw(st.booleans()):
            perm = tuple(p - rank if draw(st.booleans()) else p
                         for p in draw(st.permutations(range(rank))))
            if draw(st.integers(0, 14)) == 0:
                perm = perm + (0,) if perm else (1,)  # a wrong permutation
        prog.add(op, [x], {"perm": perm} if perm is not None else {})
    elif op == "broadcast_to":
        target = [draw(st.sampled_from([0, 2, 3])) if d == 1 and draw(st.booleans()) else d
                  for d in shape]
        lead = draw(st.lists(st.sampled_from([0, 1, 2]), max_size=1 if rank < 3 else 0))
        prog.add(op, [x], {"shape": tuple(lead + target)})
    elif op == "getitem":
        prog.add(op, [x], {"index": _index(draw, shape)})
    elif op in ("concat", "stack"):
        same = [v for v, (s, d) in prog.abstract.items() if s == shape and d == dt]
        parts = draw(st.lists(st.sampled_from(same), min_size=1, max_size=3))
        r = rank + (op == "stack")
        axis = draw(st.integers(-r, r - 1)) if r else 0
        prog.add(op, parts, {"axis": axis})
    elif op == "pad":
        pairs = [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in shape]
        prog.add(op, [x], {"paddings": pairs})
    elif op == "gather":
        if rank == 0:
            x = prog.new_input(draw(shapes(1, 3)))
            shape = prog.abstract[x][0]
            rank = len(shape)
        axis = draw(st.integers(-rank, rank - 1))
        d = shape[axis]
        bad = draw(st.integers(0, 9)) == 0
        idx = prog.int_input(draw(shapes(0, 2)), -1 if bad else 0, d if bad else max(d - 1, 0))
        if d == 0 and not bad:
            idx = prog.int_input((0,), 0, 0)
        prog.add(op, [x, idx], {"axis": axis})
    elif op == "one_hot":
        depth = draw(st.integers(0, 4))
        idx = prog.int_input(draw(shapes(0, 2)), -1, depth)
        prog.add(op, [idx], {"depth": depth})
    elif op in ("softmax", "log_softmax"):
        if rank == 0:
            x = prog.new_input(draw(shapes(1, 3)))
            rank = len(prog.abstract[x][0])
        prog.add(op, [x], {"axis": draw(st.integers(-rank, rank - 1))})
    elif op == "softmax_cross_entropy":
        n, c = draw(st.sampled_from([0, 1, 2, 3])), draw(st.sampled_from([0, 1, 2, 3]))
        if rank == 2 and dt in FLOAT_NAMES:
            n, c = shape
        else:
            x = prog.new_input((n, c))
        bad = draw(st.integers(0, 9)) == 0
        labels = prog.int_input((n,), -1 if bad else 0, c if bad else max(c - 1, 0))
        prog.add(op, [x, labels], {})
    elif op == "matmul":
        if rank < 2:
            x = prog.new_input(draw(shapes(2, 3)))
            shape, dt = prog.abstract[x]
        k = shape[-1]
        n = draw(st.sampled_from(SIDES))
        lead = list(shape[:-2]) if draw(st.booleans()) else []
        b = prog.new_input(tuple(lead) + (k, n), dt if draw(st.integers(0, 4)) else None)
        prog.add(op, [x, b] if draw(st.integers(0, 3)) else [b, x] if rank >= 2 else [x, b],
                 {})
    elif op in ("max_pool2d", "avg_pool2d", "global_avg_pool2d", "conv2d"):
        if rank != 4:
            x = prog.new_input((draw(st.sampled_from([0, 1, 2])), draw(st.sampled_from(
                [0, 1, 2])), draw(st.integers(1, 4)), draw(st.integers(1, 4))))
            shape, dt = prog.abstract[x]
        if op == "global_avg_pool2d":
            prog.add(op, [x], {})
        elif op == "conv2d":
            kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
            w = prog.new_input((draw(st.integers(1, 2)), shape[1], kh, kw),
                               dt if draw(st.integers(0, 4)) else None)
            attrs = {"stride": draw(st.sampled_from([1, 2, (1, 2)])),
                     "padding": draw(st.sampled_from([0, 1, (0, 1)])),
                     "dilation": draw(st.sampled_from([1, 1, 2]))}
            prog.add(op, [x, w], attrs)
        else:
            k = draw(st.sampled_from([1, 2, 3, (2, 1)]))
            attrs = {"kernel_size": k, "stride": draw(st.sampled_from([None, 1, 2])),
                     "padding": draw(st.sampled_from([0, 0, 1]))}
            prog.add(op, [x], attrs)
    else:
        raise AssertionError(op)


def _broadcasts(a, b) -> bool:
    try:
        return np.broadcast_shapes(tuple(a), tuple(b)) == tuple(b)
    except ValueError:
        return False


def programs(families=tuple(FAMILIES), max_steps: int = 6, cuda: bool = False,
             entries=("raw", "mixed"), odd_share: int = 40, grads: bool = True):
    """Cases of 1-``max_steps`` ops from ``families`` over odd inputs (``odd_share`` percent
    of inputs get a non-kernelgraph dtype), a chain or a DAG; ``cuda`` adds the device."""
    st = _strategies()
    ops = tuple(op for f in families for op in FAMILIES[f])

    @st.composite
    def build(draw):
        prog = _Program(draw, CONVERTIBLE, odd_share)
        first = draw(st.sampled_from(ops))
        rank = (4,) if first in ("max_pool2d", "avg_pool2d", "global_avg_pool2d",
                                 "conv2d") else (2,) if first in (
                                     "matmul", "softmax_cross_entropy") else None
        prog.new_input(draw(shapes(*(rank * 2 if rank else (0, 3)))) if not rank or rank !=
                       (4,) else (draw(st.sampled_from([0, 1, 2])), draw(st.sampled_from(
                           [0, 1, 2])), draw(st.integers(1, 4)), draw(st.integers(1, 4))))
        n = draw(st.integers(1, max_steps))
        for i in range(n):
            op = first if i == 0 else draw(st.sampled_from(ops))
            _draw_step(draw, prog, op)
            if prog.done:
                break
        last = prog.steps[-1]["out"]
        fetch = [last]
        extra = [s["out"] for s in prog.steps[:-1] if s["out"] in prog.abstract]
        if extra and draw(st.booleans()):
            fetch.append(draw(st.sampled_from(extra)))
        grad_inputs, through = (), None
        if grads and len(fetch) == 1 and not prog.done:
            floats = [k for k, (_, d) in prog.abstract.items()
                      if k in prog.inputs and d in FLOAT_NAMES]
            grad_inputs = tuple(k for k in floats if draw(st.booleans()))
            mids = [s["out"] for s in prog.steps
                    if prog.abstract.get(s["out"], (0, ""))[1] in FLOAT_NAMES]
            if grad_inputs and mids and draw(st.booleans()):
                through = draw(st.sampled_from(mids))
        computed = list(prog.inputs) + [s["out"] for s in prog.steps
                                        if s["out"] in prog.abstract]
        fed = draw(st.sampled_from(computed)) if draw(st.booleans()) else None
        return {
            "inputs": prog.inputs, "steps": prog.steps, "fetch": fetch,
            "grad_inputs": grad_inputs, "grad_through": through, "feed_step": fed,
            "ph_shapes": {k: draw(st.sampled_from(["exact", "dims", "rank"]))
                          for k in prog.inputs},
            "ph_dtypes": {k: prog.abstract[k][1] for k in prog.inputs},
            "feeds": ("placeholder", "constant"),
            "entries": entries,
            "devices": ("cpu", "cuda") if cuda else ("cpu",),
        }

    return build()
