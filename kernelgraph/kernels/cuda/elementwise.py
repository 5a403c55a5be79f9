"""CUDA elementwise ops: arithmetic, math functions, comparisons, ``where``, ``cast``.

Every op is its scalar body (:mod:`kernelgraph.kernels.cpu`, the one the CPU's ufuncs are
built from) compiled as a CUDA device function and mapped over the output by one of two
kernels per arity:

- *flat*: when the operands, after :func:`coalesce`, are all walked as one run (same shape
  as the output, a size-1 array, or a Python number), ``out[i] = f(a[i * ka], b[i * kb])``
  with steps ``ka, kb`` of 1 or 0. No index arithmetic, fully coalesced: this is the path
  that must run at memory bandwidth.
- *strided*: NumPy broadcasting through per-operand element strides (0 on a broadcast
  dimension). One pass of divisions over the coalesced output shape yields every operand's
  offset, so a bias add ``(N, C) + (C,)`` costs one integer division per element.

Dtypes follow the CPU forward exactly: the same promotion
(:func:`kernelgraph.dtypes.operand_dtype`) and the op card's compute rule (passed in by the
card: :func:`unary`, :func:`binary`), operands cast to the compute dtype first, Python
numbers as 1-element device arrays (:func:`core.scalar_array`) read with step/stride 0.
"""

from __future__ import annotations

import functools
import keyword

import numpy as np
from numba import cuda

from ... import dtypes as D
from .. import cpu
from . import core, launcher
from .simulator import device_function

# Operands that are numbers ("weak" scalars in the promotion rules), not arrays.
_NUMBERS = (int, float, bool, np.generic)


def check_operand(v):
    """Numbers and device arrays only: a host array here would mean a hidden upload."""
    if isinstance(v, np.ndarray):
        raise TypeError("a CUDA op got a host NumPy array; move it to the device first "
                        "(kernelgraph.kernels.cuda.core.to_device)")


def check_device_array(x):
    """Raise TypeError unless ``x`` is a device array (for inputs that may not be numbers)."""
    check_operand(x)
    if not core.is_device_array(x):
        raise TypeError(f"expected a CUDA device array, got {type(x).__name__}")


def operand_dtype(values) -> np.dtype:
    """The CPU forward's promoted dtype of device arrays and Python numbers."""
    for v in values:
        check_operand(v)
    return D.operand_dtype(values)


def shape_of(v) -> tuple:
    """The shape of a device array, ``()`` for a number."""
    return () if isinstance(v, _NUMBERS) else tuple(v.shape)


def broadcast_shape(shapes) -> tuple:
    """NumPy's broadcast of ``shapes``, raising the ValueError a ufunc raises."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"operands could not be broadcast together with shapes {listed}") \
            from None


def coalesce(shape, strides_list) -> tuple:
    """(shape, [strides per operand]) with size-1 dims dropped and neighbouring dims merged
    wherever every operand walks them as one run (outer stride == inner stride * inner size).

    Fewer dims mean fewer divisions per element in :func:`core.offset`-style indexing, and a
    result of rank <= 1 means a plain flat loop. Shapes with a 0 are not coalesced (no
    kernel runs on them).
    """
    dims: list = []  # [size, [stride of each operand]]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        ss = [s[d] for s in strides_list]
        if dims and all(prev == s * n for prev, s in zip(dims[-1][1], ss)):
            dims[-1][0] *= n
            dims[-1][1] = ss
        else:
            dims.append([n, ss])
    return (tuple(n for n, _ in dims),
            [tuple(ss[j] for _, ss in dims) for j in range(len(strides_list))])


# -- kernels ---------------------------------------------------------------------------------
@cuda.jit(device=True)
def _offsets2(i, shape, sa, sb):
    # Shapes here have rank >= 2 (rank <= 1 takes the flat kernel); the outermost index
    # needs no division.
    oa = 0
    ob = 0
    for d in range(len(shape) - 1, 0, -1):
        n = shape[d]
        q = i // n
        r = i - q * n
        oa += r * sa[d]
        ob += r * sb[d]
        i = q
    return oa + i * sa[0], ob + i * sb[0]


@cuda.jit(device=True)
def _offsets3(i, shape, sa, sb, sc):
    oa = 0
    ob = 0
    oc = 0
    for d in range(len(shape) - 1, 0, -1):
        n = shape[d]
        q = i // n
        r = i - q * n
        oa += r * sa[d]
        ob += r * sb[d]
        oc += r * sc[d]
        i = q
    return oa + i * sa[0], ob + i * sb[0], oc + i * sc[0]


@functools.cache
def _unary_kernel(fn):
    """``out[i] = fn(a[i])`` (unary outputs always have the input's shape)."""
    f = device_function(fn)

    @cuda.jit
    def flat(out, a):
        start, step = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, step):
            out[i] = f(a[i])

    return flat


@functools.cache
def _binary_kernels(fn):
    """(flat, strided) kernels for ``out = fn(a, b)`` (see the module docstring)."""
    f = device_function(fn)

    @cuda.jit
    def flat(out, a, b, ka, kb):
        start, step = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, step):
            out[i] = f(a[i * ka], b[i * kb])

    @cuda.jit
    def strided(out, a, b, shape, sa, sb):
        start, step = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, step):
            oa, ob = _offsets2(i, shape, sa, sb)
            out[i] = f(a[oa], b[ob])

    return flat, strided


@functools.cache
def _ternary_kernels(fn):
    """(flat, strided) kernels for ``out = fn(a, b, c)``."""
    f = device_function(fn)

    @cuda.jit
    def flat(out, a, b, c, ka, kb, kc):
        start, step = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, step):
            out[i] = f(a[i * ka], b[i * kb], c[i * kc])

    @cuda.jit
    def strided(out, a, b, c, shape, sa, sb, sc):
        start, step = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, step):
            oa, ob, oc = _offsets3(i, shape, sa, sb, sc)
            out[i] = f(a[oa], b[ob], c[oc])

    return flat, strided


def nary_kernel_source(arity: int, fn: str = "f", cache: bool = True) -> str:
    """Python source of the (flat, strided) kernel pair for ``out = fn(a0, ..., a{n-1})``.

    The binary and ternary kernels above, written out for any number of operands (numba
    kernels take no ``*args``). Generated fusion kernels embed this text in their module,
    next to their scalar function ``fn``, so numba can cache them on disk (``cache=True``; the
    simulator ignores it). Source run with ``exec`` has no file to cache next to, and on a
    GPU numba refuses ``cache=True`` there: pass ``cache=False``. The pair is launched by
    :func:`launch_map`.

    >>> print(nary_kernel_source(1).splitlines()[1])
    def flat(out, a0, k0):
    """
    if arity < 1:
        raise ValueError(f"a kernel needs at least one operand, got arity {arity}")
    if not (isinstance(fn, str) and fn.isascii() and fn.isidentifier()
            and not keyword.iskeyword(fn)):
        # fn is pasted into the source as a name: nothing else may get there.
        raise ValueError(f"fn must be the name of a Python function (an ASCII identifier), "
                         f"got {type(fn).__name__} {str(fn)[:40]!r}")
    a = [f"a{j}" for j in range(arity)]
    ks = [f"k{j}" for j in range(arity)]
    ss = [f"s{j}" for j in range(arity)]
    offsets = [f"o{j}" for j in range(arity)]
    loop = ("    start, step = cuda.grid(1), cuda.gridsize(1)\n"
            "    for i in range(start, out.size, step):\n")
    flat_call = ", ".join(f"{x}[i * {k}]" for x, k in zip(a, ks))
    strided_call = ", ".join(f"{x}[{o} + j * {s}[0]]" for x, o, s in zip(a, offsets, ss))
    # The strided walk of _offsets2/_offsets3: one division per coalesced dim, the outermost
    # index needs none (rank >= 2 here; rank <= 1 takes the flat kernel).
    decorator = f"@cuda.jit(cache={cache})\n"
    return (decorator
            + f"def flat(out, {', '.join(a + ks)}):\n" + loop
            + f"        out[i] = {fn}({flat_call})\n\n\n"
            + decorator
            + f"def strided(out, {', '.join(a)}, shape, {', '.join(ss)}):\n" + loop
            + "        j = i\n"
            + "".join(f"        {o} = 0\n" for o in offsets)
            + "        for d in range(len(shape) - 1, 0, -1):\n"
              "            m = shape[d]\n"
              "            q = j // m\n"
              "            r = j - q * m\n"
            + "".join(f"            {o} += r * {s}[d]\n" for o, s in zip(offsets, ss))
            + "            j = q\n"
            + f"        out[i] = {fn}({strided_call})\n")


def launch_map(kernels, out, operands, shapes):
    """Run a (flat, strided) kernel pair over ``out`` (see the module docstring):
    ``operands`` are C-contiguous device arrays, any number of them, whose logical shapes
    ``shapes`` (``()`` for numbers) broadcast to ``out``'s. Returns ``out``.

    >>> from kernelgraph.kernels.cuda import core
    >>> a, b = core.to_device(np.arange(3.0)), core.to_device(np.ones((2, 1)))
    >>> out = core.empty((2, 3), np.float64)
    >>> launch_map(_binary_kernels(cpu._add), out, [a, b], [(3,), (2, 1)]).copy_to_host()
    array([[1., 2., 3.],
           [1., 2., 3.]])
    """
    n = out.size
    strides = [core.broadcast_strides(s, out.shape) for s in shapes]
    shape, strides = coalesce(out.shape, strides)
    blocks, threads = core.launch(n)
    flat_args = [core.flat(out), *(core.flat(a) for a in operands)]
    if len(shape) <= 1:
        steps = [s[0] if s else 0 for s in strides]
        launcher.launch(kernels[0], blocks, threads, *flat_args, *steps)
    else:
        launcher.launch(kernels[1], blocks, threads, *flat_args, shape, *strides)
    return out


def _as_operand(v, dt):
    """``v`` as a device array of dtype ``dt``: numbers via the cached scalar arrays."""
    if isinstance(v, _NUMBERS):
        return core.scalar_array(v, dt)
    return core.astype(v, dt)


def _map(kernels, compute, values, out_dtype=None):
    """The CPU forward's promotion, then one kernel launch over the broadcast shape."""
    cd = compute(operand_dtype(values))
    shapes = [shape_of(v) for v in values]
    out = core.empty(broadcast_shape(shapes), out_dtype or cd)
    if out.size == 0:
        return out
    operands = [_as_operand(v, cd) for v in values]
    if len(values) == 1:
        blocks, threads = core.launch(out.size)
        launcher.launch(kernels, blocks, threads, core.flat(out), core.flat(operands[0]))
        return out
    return launch_map(kernels, out, operands, shapes)


def unary(fn, compute):
    """A CUDA forward ``f(x)`` mapping the scalar body ``fn`` with the op card's compute
    dtype rule ``compute`` (:mod:`kernelgraph.dtypes`)."""
    kernel = _unary_kernel(_SIMULATOR_BODIES.get(fn, fn))

    def forward(x):
        return _map(kernel, compute, (x,))

    return forward


def binary(fn, compute, out_dtype=None):
    """A CUDA forward ``f(x, y)`` with NumPy broadcasting (``out_dtype``: bool for the
    comparisons, else the compute dtype)."""
    kernels = _binary_kernels(fn)

    def forward(x, y):
        return _map(kernels, compute, (x, y), out_dtype)

    return forward


# -- integer powers: their exponents checked on the device ----------------------------------
@cuda.jit
def _any_negative(a, flag):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, a.size, step):
        if a[i] < 0:
            flag[0] = 1  # every writer writes 1: the race is harmless


def has_negative(y) -> bool:
    """Whether integer ``y`` (a device array or a number) holds a negative value: a flag set
    on the device, read back after a sync (one int, the same as an index check)."""
    if isinstance(y, _NUMBERS):
        return y < 0
    if y.size == 0:
        return False
    flag = core.full((1,), 0, np.int32)
    blocks, threads = core.launch(y.size)
    launcher.launch(_any_negative, blocks, threads, core.flat(y), flag)
    launcher.not_replayable("checks its integer exponents for negatives on the host")
    return bool(flag.copy_to_host()[0])


@cuda.jit
def _any_zero(y, flag):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, y.size, step):
        if y[i] == 0:
            flag[0] = 1


def has_zero(y) -> bool:
    """Whether ``y`` (a device array or a number) holds a zero (an integer divisor): a flag
    set on the device, read back after a sync."""
    if isinstance(y, _NUMBERS):
        return y == 0
    if y.size == 0:
        return False
    flag = core.full((1,), 0, np.int32)
    blocks, threads = core.launch(y.size)
    launcher.launch(_any_zero, blocks, threads, core.flat(y), flag)
    launcher.not_replayable("checks its integer divisors for zeros on the host")
    return bool(flag.copy_to_host()[0])


# -- where, cast, fills ----------------------------------------------------------------------
_where_kernels = _ternary_kernels(cpu._where)


def where(cond, x, y):
    """x where cond (cast to bool, as NumPy does) else y, broadcasting all three."""
    if not isinstance(cond, _NUMBERS):
        check_device_array(cond)
    cd = operand_dtype((x, y))  # bools stay bool, as on the CPU
    if isinstance(cond, _NUMBERS):
        c = core.scalar_array(bool(cond), D.bool_)
    else:
        c = core.astype(cond, D.bool_)
    shapes = [shape_of(cond), shape_of(x), shape_of(y)]
    out = core.empty(broadcast_shape(shapes), cd)
    if out.size == 0:
        return out
    return launch_map(_where_kernels, out, [c, _as_operand(x, cd), _as_operand(y, cd)], shapes)


def _host_dtype(x) -> np.dtype:
    # What np.asarray(x).dtype is on the CPU (a Python float is float64 there).
    return np.asarray(x).dtype if isinstance(x, _NUMBERS) else x.dtype


def cast(x, dtype):
    """``x`` converted to ``dtype`` (always a new array, as ``astype`` is on the CPU)."""
    dt = D.as_dtype(dtype)
    check_operand(x)
    if isinstance(x, _NUMBERS):
        return core.full((), np.asarray(x).astype(dt)[()], dt)
    out = core.astype(x, dt)
    return core.copy(out) if out is x else out


def like(fill):
    """The CUDA forward of ``zeros_like`` (``fill`` 0) or ``ones_like`` (1)."""
    def forward(x):
        check_operand(x)
        return core.full(shape_of(x), fill, _host_dtype(x))

    return forward


def identity(x):
    """x itself (a view op on the CPU too)."""
    return x


# The sign body subtracts two bools; numba compiles that, but the simulator runs the body
# on NumPy scalars, where bool - bool is a TypeError. Same values, simulator-safe.
def _sign_sim(a):
    return (1 if a > 0 else 0) - (1 if a < 0 else 0)


_SIMULATOR_BODIES = {cpu._sign: _sign_sim} if core.SIMULATOR else {}
