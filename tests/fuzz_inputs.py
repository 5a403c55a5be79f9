"""The fuzz harness's inputs (tests/fuzzing.py): the dtypes, layouts and sources of odd
arrays a user may hand in, as plain-data recipes (a case's ``inputs``): building them,
writing them as code to paste, and drawing them (hypothesis strategies, parent process
only)."""

from __future__ import annotations

import math

import numpy as np

SUPPORTED = ("float32", "float64", "int64", "int32", "bool")  # the first is drawn most
FLOAT_NAMES = ("float32", "float64")
# What a user may hand in: every NumPy numeric dtype, both byte orders, and some that no
# tensor can hold.
CONVERTIBLE = ("float16", ">f4", ">f8", "uint64", "uint8", "int8", "int16", "uint16", "uint32",
               ">i4", ">i8", ">u8", "float32", "float64", "int32", "int64", "bool")
FOREIGN = ("complex64", "complex128", "object", "<U3", "datetime64[D]")


# -- inputs ------------------------------------------------------------------------------------
def _views():
    def unaligned(b):
        raw = np.frombuffer(b"\0" + b.tobytes(), dtype=np.uint8, offset=1)
        return raw.view(b.dtype).reshape(b.shape) if b.size else b

    return {
        "c": lambda b, shape: b,
        "flip0": lambda b, shape: b[::-1],
        "flipL": lambda b, shape: b[..., ::-1],
        "T": lambda b, shape: b.T,
        "step": lambda b, shape: b[..., ::2],
        "bcast": lambda b, shape: np.broadcast_to(b, shape),
        "F": lambda b, shape: np.asfortranarray(b),
        "unaligned": lambda b, shape: unaligned(b),
    }


VIEWS = _views()
VIEW_TEXT = {"c": "{}", "flip0": "{}[::-1]", "flipL": "{}[..., ::-1]", "T": "{}.T",
             "step": "{}[..., ::2]", "bcast": "np.broadcast_to({}, {shape})",
             "F": "np.asfortranarray({})",
             "unaligned": "np.frombuffer(b'\\0' + {}.tobytes(), np.uint8, offset=1)"
                          ".view({dtype!r}).reshape({shape})"}


def base_shape(shape: tuple, layout: str, mask=()) -> tuple:
    """The shape of the contiguous array that ``layout`` views as ``shape``."""
    if layout == "T":
        return tuple(reversed(shape))
    if layout == "step":
        return shape[:-1] + (2 * shape[-1],)
    if layout == "bcast":
        return tuple(1 if i in mask else d for i, d in enumerate(shape))
    return tuple(shape)


def build_array(spec: dict) -> np.ndarray:
    """The odd array an input spec describes (its view, flags and dtype as a user has it)."""
    base = np.array(spec["values"], dtype=np.dtype(spec["dtype"]))
    base = base.reshape(spec["base_shape"])
    arr = VIEWS[spec["layout"]](base, tuple(spec["shape"]))
    if spec["readonly"] and arr.flags.writeable:
        arr.setflags(write=False)
    return arr


def user_value(spec: dict):
    """What the user hands to kernelgraph: the array, ``array.tolist()`` or a scalar."""
    arr = build_array(spec)
    if spec["source"] == "list":
        return arr.tolist()
    if spec["source"] == "scalar":
        return arr[()] if spec.get("numpy_scalar") else arr.item()
    return arr


def _literal(v) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "np.nan"
        if math.isinf(v):
            return "np.inf" if v > 0 else "-np.inf"
    if isinstance(v, complex):
        return f"complex({_literal(v.real)}, {_literal(v.imag)})"
    return repr(v)


def render_input(name: str, spec: dict) -> str:
    values = "[" + ", ".join(_literal(v) for v in spec["values"]) + "]"
    text = f"np.array({values}, dtype={spec['dtype']!r})"
    if tuple(spec["base_shape"]) != (len(spec["values"]),):
        text += f".reshape({tuple(spec['base_shape'])})"
    text = VIEW_TEXT[spec["layout"]].format(text, shape=tuple(spec["shape"]),
                                            dtype=spec["dtype"])
    lines = [f"{name} = {text}"]
    if spec["readonly"]:
        lines.append(f"{name}.setflags(write=False)")
    if spec["source"] == "list":
        lines.append(f"{name} = {name}.tolist()")
    elif spec["source"] == "scalar":
        lines.append(f"{name} = {name}[()]" if spec.get("numpy_scalar") else
                     f"{name} = {name}.item()")
    return "\n".join(lines)


def decode_index(index):
    return tuple(Ellipsis if i == "..." else slice(*i) if isinstance(i, list | tuple) else i
                 for i in index)


# -- drawing inputs (hypothesis strategies; the parent process only) ---------------------------
def _strategies():
    from hypothesis import strategies as st

    return st


def _float_extremes(dt: np.dtype) -> list:
    fi = np.finfo(dt)
    vals = [float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
            -float(fi.smallest_subnormal), 1e38, -1e38, 1e-45, 3e38, 1e308, 65504.0, 0.1, 100.0]
    return [v for v in vals if abs(v) <= float(fi.max)]


def value_strategy(dtype: str):
    """Python values for ``dtype``: mostly plain, often extreme or special."""
    st = _strategies()
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        odd = [int(info.min), int(info.max), int(info.max) - 1, int(info.min) + 1, 0]
        if dt.kind == "u" and info.max > 2 ** 63:
            odd += [2 ** 63, 2 ** 63 - 1]
        plain = st.integers(max(int(info.min), -3), 3)
        return st.one_of(plain, plain, st.sampled_from(odd))
    if dt.kind == "f":
        plain = st.sampled_from([-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
        special = st.sampled_from([math.nan, math.inf, -math.inf, -0.0])
        return st.one_of(special, plain, special, st.sampled_from(_float_extremes(dt)))
    if dt.kind == "c":
        return st.sampled_from([1 + 2j, 0j, complex(math.nan, 1.0), 2 + 0j])
    if dt.kind == "O":
        return st.sampled_from([1, 2.5, 2 ** 70, -(2 ** 65), True, 3])
    if dt.kind == "U":
        return st.sampled_from(["a", "1.5", ""])
    return st.integers(0, 3)  # datetime64 days


SIDES = (0, 1, 1, 2, 2, 3)


def shapes(min_rank=0, max_rank=3, sides=SIDES):
    st = _strategies()
    return st.lists(st.sampled_from(sides), min_size=min_rank, max_size=max_rank).map(tuple)


def input_spec(draw, shape: tuple, dtypes, sources=("array",)) -> dict:
    """An odd array of ``shape``: a dtype from ``dtypes``, a layout, flags, a source."""
    st = _strategies()
    dtype = draw(st.sampled_from(dtypes))
    numeric = np.dtype(dtype).kind in "biufc"
    layouts = ["c", "c", "F"] + (["flip0", "flipL", "step", "bcast"] if shape else []) + \
        (["T"] if len(shape) >= 2 else []) + (["unaligned"] if numeric else [])
    layout = draw(st.sampled_from(layouts))
    mask = ()
    if layout == "bcast":
        mask = tuple(i for i in range(len(shape)) if draw(st.booleans()))
    bshape = base_shape(shape, layout, mask)
    n = math.prod(bshape)
    values = draw(st.lists(value_strategy(dtype), min_size=n, max_size=n))
    source = draw(st.sampled_from(sources)) if not shape else \
        draw(st.sampled_from([s for s in sources if s != "scalar"] or ["array"]))
    return {"dtype": dtype, "shape": shape, "base_shape": bshape, "values": values,
            "layout": layout, "readonly": draw(st.booleans()), "source": source,
            "numpy_scalar": draw(st.booleans()) if source == "scalar" else False}


def ingestion_cases(cuda: bool = False):
    """Cases of odd inputs alone (no steps): every dtype, layout and source."""
    st = _strategies()

    @st.composite
    def build(draw):
        inputs = {}
        for i in range(draw(st.integers(1, 3))):
            shape = draw(shapes(0, 3))
            dtypes = CONVERTIBLE + FOREIGN if draw(st.booleans()) else CONVERTIBLE
            inputs[f"x{i}"] = input_spec(draw, shape, dtypes, ("array", "list", "scalar"))
        return {"inputs": inputs, "steps": [], "fetch": [],
                "devices": ("cpu", "cuda") if cuda else ("cpu",)}

    return build()


def _natural_name(dtype: str) -> str:
    """The kernelgraph dtype an input of ``dtype`` is expected to become (guides choices)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "bool"
    if dt.kind in "iu":
        return "int32" if dt.kind == "i" and dt.itemsize == 4 else "int64"
    return "float64" if dt.itemsize == 8 else "float32"
