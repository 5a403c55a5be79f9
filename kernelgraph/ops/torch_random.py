"""PyTorch's default CPU random numbers, bit for bit: ``torch.manual_seed(n)`` then
``torch.rand``/``randn``/``randint``/``randperm``/``normal_``/``uniform_`` give PyTorch's own
numbers.

PyTorch's CPU generator (``at::CPUGeneratorImpl``) is a 32-bit Mersenne Twister (mt19937)
seeded with ``init_genrand`` from the seed's low 32 bits. Everything else is built on two
draws: ``random()``, one 32-bit output, and ``random64()``, two outputs joined (the first is
the high half). On top of them, as in ATen:

- uniform floats: a float32 takes the low 24 bits of ``random()``, a float64 the low 53 bits
  of ``random64()``, times 2^-24 (2^-53), then ``x * (to - from) + from`` in that dtype;
- normal: a contiguous tensor of >= 16 elements is filled with uniforms, then each block of 16
  goes through Box-Muller (``u1 = 1 - data[j]``, ``u2 = data[j + 8]``), and when the size is
  not a multiple of 16 the last 16 are drawn again and recomputed; smaller tensors draw one
  ``normal_distribution<double>`` per element (two 53-bit uniforms, a cached second sample);
- ``randint(low, high)``: ``random() % (high - low) + low`` (``random64()`` when the range
  needs more than 32 bits); ``randperm(n)``: a Fisher-Yates shuffle with ``random() % (n-i)``.

This generator is separate from :mod:`kernelgraph.ops.random` (``kg.random``: TF-style
per-op seeds for static graphs and dropout).

>>> g = Generator().manual_seed(0)
>>> [round(float(v), 4) for v in uniform_array((3,), "float32", generator=g)]
[0.4963, 0.7682, 0.0885]
"""

from __future__ import annotations

import math
import os

import numpy as np

from .torch_vecmath import box_muller16_f32

__all__ = ["Generator", "bernoulli_array", "bernoulli_fill", "default_generator",
           "exponential_array",
           "get_rng_state", "initial_seed", "manual_seed", "normal_fill", "normal_array",
           "randint_array", "randperm_array", "seed", "set_rng_state", "uniform_array",
           "uniform_fill"]

_N, _M = 624, 397
_MATRIX_A = np.uint32(0x9908B0DF)
_UPPER = np.uint32(0x80000000)
_LOWER = np.uint32(0x7FFFFFFF)
_DEFAULT_SEED = 67280421310721  # at::default_rng_seed_val
_STATE_BYTES = 5056  # sizeof(at::CPUGeneratorImplState), what get_state() returns


def _init_genrand(seed: int) -> np.ndarray:
    mt = np.empty(_N, np.uint32)
    x = seed & 0xFFFFFFFF
    mt[0] = x
    for j in range(1, _N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        mt[j] = x
    return mt


def _twist(mt: np.ndarray) -> None:
    """mt19937's next_state in place, vectorised in the three slices whose inputs are ready."""
    def mix(lo, hi, nxt, far):
        y = (mt[lo:hi] & _UPPER) | (nxt & _LOWER)
        mt[lo:hi] = far ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * _MATRIX_A)
    k = _N - _M  # 227
    mix(0, k, mt[1:k + 1].copy(), mt[_M:_N].copy())
    mix(k, 2 * k, mt[k + 1:2 * k + 1].copy(), mt[0:k].copy())
    mix(2 * k, _N - 1, mt[2 * k + 1:_N].copy(), mt[k:_N - 1 - k].copy())
    y = (mt[_N - 1] & _UPPER) | (mt[0] & _LOWER)
    mt[_N - 1] = mt[_M - 1] ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * _MATRIX_A)


def _temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> np.uint32(11))
    y = y ^ ((y << np.uint32(7)) & np.uint32(0x9D2C5680))
    y = y ^ ((y << np.uint32(15)) & np.uint32(0xEFC60000))
    return y ^ (y >> np.uint32(18))


def _to_seed(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"{what}(): argument 'seed' must be int, not {type(value).__name__}")
    value = int(value)
    if not -(1 << 63) <= value < (1 << 64):
        raise RuntimeError("Overflow when unpacking long")
    return value & 0xFFFFFFFFFFFFFFFF  # PyTorch reads a negative seed as its uint64 bits


class Generator:
    """A PyTorch CPU random generator (``torch.Generator``): mt19937 with PyTorch's seeding.

    >>> g = Generator()
    >>> g.manual_seed(42).initial_seed()
    42
    >>> int(g.random()), int(g.random())
    (1608637542, 3421126067)
    """

    def __init__(self, device="cpu"):
        dev = str(getattr(device, "type", device))
        if dev != "cpu":
            raise RuntimeError(f"kernelgraph's torch.Generator is a CPU generator; got device "
                               f"{dev!r} (kernelgraph draws on the CPU and copies to the device)")
        self.device = "cpu"
        self.manual_seed(_DEFAULT_SEED)

    # -- seeding -------------------------------------------------------------------------------
    def manual_seed(self, seed) -> Generator:
        """Seed as ``torch.Generator.manual_seed`` does; returns the generator."""
        self._seed = _to_seed(seed, "manual_seed")
        self._mt = _init_genrand(self._seed)
        self._next = _N  # the twist comes before the first draw
        self._fresh = True  # no draw since seeding (PyTorch's state then says next_ = 0)
        self._next_double_normal: float | None = None
        self._next_float_normal: float | None = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    # -- raw draws -----------------------------------------------------------------------------
    def _draw32(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit outputs, as uint32."""
        out = np.empty(n, np.uint32)
        if n:
            self._fresh = False
        done = 0
        while done < n:
            if self._next >= _N:
                _twist(self._mt)
                self._next = 0
            take = min(n - done, _N - self._next)
            out[done:done + take] = self._mt[self._next:self._next + take]
            self._next += take
            done += take
        return _temper(out)

    def random(self) -> int:
        """One 32-bit draw (``CPUGeneratorImpl::random``)."""
        return int(self._draw32(1)[0])

    def random64(self) -> int:
        """One 64-bit draw made of two 32-bit ones, the first the high half."""
        hi, lo = self._draw32(2)
        return (int(hi) << 32) | int(lo)

    def _draw64(self, n: int) -> np.ndarray:
        pairs = self._draw32(2 * n).astype(np.uint64)
        return (pairs[0::2] << np.uint64(32)) | pairs[1::2]

    # -- state -------------------------------------------------------------------------------
    def get_state(self):
        """The generator's state as 5056 bytes laid out as PyTorch's
        ``CPUGeneratorImplState`` (a uint8 array; the namespace's ``get_rng_state`` wraps it
        in a tensor)."""
        buf = np.zeros(_STATE_BYTES, np.uint8)
        head = np.array([self._seed], np.uint64).view(np.uint8)
        buf[0:8] = head
        left = _N - self._next + 1 if self._next < _N else 1
        buf[8:12] = np.array([left], np.int32).view(np.uint8)
        buf[12:16] = np.array([1], np.int32).view(np.uint8)
        buf[16:24] = np.array([0 if self._fresh else self._next], np.uint64).view(np.uint8)
        buf[24:24 + 8 * _N] = self._mt.astype(np.uint64).view(np.uint8)
        off = 24 + 8 * _N  # normal_x, normal_y, normal_rho, normal_is_valid
        if self._next_double_normal is not None:
            buf[off + 8:off + 16] = np.array([self._next_double_normal], np.float64).view(np.uint8)
            buf[off + 24:off + 28] = np.array([1], np.int32).view(np.uint8)
        off += 32
        if self._next_float_normal is not None:
            buf[off:off + 4] = np.array([self._next_float_normal], np.float32).view(np.uint8)
            buf[off + 4] = 1
        return buf

    def set_state(self, state) -> Generator:
        """Restore a state that :meth:`get_state` (or PyTorch) returned."""
        arr = np.ascontiguousarray(_as_numpy(state))
        if arr.dtype != np.uint8 or arr.size != _STATE_BYTES:
            raise RuntimeError(f"Expected either a THGeneratorState of size 5048 or a "
                               f"CPUGeneratorImplState of size {_STATE_BYTES} but found the "
                               f"input RNG state size to be {arr.nbytes}")
        arr = arr.reshape(-1)
        self._seed = int(arr[0:8].view(np.uint64)[0])
        left = int(arr[8:12].view(np.int32)[0])
        nxt = int(arr[16:24].view(np.uint64)[0])
        self._mt = arr[24:24 + 8 * _N].view(np.uint64).astype(np.uint32)
        if not 1 <= left <= _N or nxt > _N:
            raise RuntimeError("the RNG state is not one a CPU generator can hold")
        self._next = _N if left == 1 else nxt  # left_ == 1: the next draw twists first
        self._fresh = left == 1 and nxt == 0
        off = 24 + 8 * _N
        valid = int(arr[off + 24:off + 28].view(np.int32)[0])
        self._next_double_normal = (float(arr[off + 8:off + 16].view(np.float64)[0])
                                    if valid else None)
        off += 32
        self._next_float_normal = (float(arr[off:off + 4].view(np.float32)[0])
                                   if arr[off + 4] else None)
        return self

    def __repr__(self):
        return "<torch._C.Generator object (kernelgraph, cpu)>"


def _as_numpy(value):
    data = getattr(value, "_array", value)
    if hasattr(data, "copy_to_host"):
        data = data.copy_to_host()
    return np.asarray(data)


default_generator = Generator()


def _gen(generator) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    return generator


# -- the namespace's seeding functions ---------------------------------------------------------
def manual_seed(seed) -> Generator:
    """Seed the default generator (``torch.manual_seed``); returns it.

    >>> _ = manual_seed(0); round(float(uniform_array((1,), "float32")[0]), 4)
    0.4963
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the OS's entropy (``torch.seed``); returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed (``torch.initial_seed``).

    >>> _ = manual_seed(7); initial_seed()
    7
    """
    return default_generator.initial_seed()


def get_rng_state() -> np.ndarray:
    """The default generator's state, 5056 bytes (``torch.get_rng_state`` gives it as a
    uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(state) -> None:
    """Restore the default generator's state from :func:`get_rng_state`."""
    default_generator.set_state(state)


# -- distributions -----------------------------------------------------------------------------
def _uniform01(gen: Generator, n: int, dtype: str) -> np.ndarray:
    """``n`` draws of at::uniform_real_distribution<T>(0, 1), as float64 values (exact)."""
    if dtype == "float64":
        bits = gen._draw64(n) & np.uint64((1 << 53) - 1)
        return bits.astype(np.float64) * (1.0 / (1 << 53))
    bits = gen._draw32(n) & np.uint32((1 << 24) - 1)
    return bits.astype(np.float64) * (1.0 / (1 << 24))


def _float_kind(dtype) -> str:
    name = np.dtype(dtype).name
    if name not in ("float32", "float64"):
        raise RuntimeError(f'"check_uniform_bounds" not implemented for \'{_torch_name(name)}\'')
    return name


def _torch_name(name: str) -> str:
    return {"int64": "Long", "int32": "Int", "bool": "Bool", "int16": "Short",
            "int8": "Char", "uint8": "Byte", "float16": "Half"}.get(name, name)


def uniform_array(shape, dtype="float32", low: float = 0.0, high: float = 1.0,
                  generator=None) -> np.ndarray:
    """A new array of U(low, high) draws, as ``torch.empty(shape).uniform_(low, high)``.

    >>> g = Generator().manual_seed(1)
    >>> uniform_array((2,), "float64", -1.0, 1.0, generator=g).round(6).tolist()
    [-0.877893, -0.550891]
    """
    kind = _float_kind(dtype)
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={low} > to={high}")
    shape = tuple(int(d) for d in shape)
    n = math.prod(shape)
    x = _uniform01(_gen(generator), n, kind)
    if kind == "float32":
        x = x.astype(np.float32)
        lo, hi = np.float32(low), np.float32(high)
        # x * (to - from) + from, fused by the compiler into one FMA: the product is exact
        # in float64, so one float64 sum rounded to float32 is the fused result.
        out = (x.astype(np.float64) * np.float64(hi - lo) + np.float64(lo)).astype(np.float32)
    else:
        out = fma(x, float(high) - float(low), float(low))
    return out.reshape(shape)


def _box_muller16(data: np.ndarray, mean, std, kind: str) -> None:
    """normal_fill_16 on every whole block of 16 in ``data`` (float64 uniforms), in place."""
    blocks = data.reshape(-1, 16)
    u1 = 1.0 - blocks[:, :8]
    u2 = blocks[:, 8:]
    if kind == "float32":  # ATen's AVX2 kernel: vectorised Cephes log/sincos and FMAs
        blocks[...] = box_muller16_f32(blocks.astype(np.float32), mean, std)
        return
    radius = np.sqrt(-2.0 * _libm(np.log, u1))
    theta = 2.0 * math.pi * u2
    blocks[:, :8] = fma(radius * _libm(np.cos, theta), std, mean)
    blocks[:, 8:] = fma(radius * _libm(np.sin, theta), std, mean)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = a * 134217729.0  # 2^27 + 1: Dekker's split into two 26-bit halves
    hi = c - (c - a)
    return hi, a - hi


def fma(a, b, c):
    """a * b + c with one rounding, as ATen's compiled ``x * y + z`` (an FMA instruction),
    by error-free transformations in float64 (exact but for double-rounding ties)."""
    a = np.asarray(a, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(np.float64(b))
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + e == a * b exactly
        s, t = _two_sum(p, np.float64(c))
        out = s + (t + e)
    return np.where(np.isfinite(out), out, p + c)


_LIBM = {np.log: math.log, np.cos: math.cos, np.sin: math.sin}


def _libm(fn, x: np.ndarray) -> np.ndarray:
    """The C library's double function per element, as ATen's scalar code calls it (NumPy's
    own vectorised versions may differ in the last bit)."""
    f = _LIBM[fn]
    return np.array([f(v) for v in x.reshape(-1).tolist()], np.float64).reshape(x.shape)


def _normal_distribution(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """``n`` draws of at::normal_distribution<double>(mean, std), with its cached sample."""
    out = np.empty(n, np.float64)
    for i in range(n):
        cached = gen._next_double_normal
        if cached is not None:
            gen._next_double_normal = None
            out[i] = fma(np.float64(cached), std, mean)
            continue
        u1, u2 = _uniform01(gen, 2, "float64")
        r = math.sqrt(-2.0 * math.log1p(-float(u2)))
        theta = 2.0 * math.pi * float(u1)
        gen._next_double_normal = r * math.sin(theta)
        out[i] = fma(np.float64(r * math.cos(theta)), std, mean)
    return out


def normal_array(shape, dtype="float32", mean: float = 0.0, std: float = 1.0,
                 generator=None, contiguous: bool = True) -> np.ndarray:
    """A new contiguous array of N(mean, std^2) draws, as ``torch.empty(shape).normal_()``.

    >>> g = Generator().manual_seed(0)
    >>> [round(float(v), 4) for v in normal_array((3,), "float32", generator=g)]
    [1.541, -0.2934, -2.1788]
    """
    kind = _float_kind(dtype)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shape = tuple(int(d) for d in shape)
    n = math.prod(shape)
    gen = _gen(generator)
    if n >= 16 and contiguous:
        f = np.float32 if kind == "float32" else np.float64
        m, s = (f(mean), f(std))
        data = _uniform01(gen, n, kind)
        _box_muller16(data[:n - n % 16], m, s, kind)
        if n % 16:
            tail = _uniform01(gen, 16, kind)
            _box_muller16(tail, m, s, kind)
            data[n - 16:] = tail
        return data.astype(kind).reshape(shape)
    return _normal_distribution(gen, n, float(mean), float(std)).astype(kind).reshape(shape)


def randint_array(low: int, high: int, shape, dtype="int64", generator=None) -> np.ndarray:
    """``torch.randint(low, high, shape)``: ``random() % (high - low) + low`` per element.

    >>> g = Generator().manual_seed(0)
    >>> randint_array(0, 10, (5,), generator=g).tolist()
    [4, 9, 3, 0, 3]
    """
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    shape = tuple(int(d) for d in shape)
    n = math.prod(shape)
    span = high - low
    gen = _gen(generator)
    if span >= 1 << 32:
        vals = [(int(v) % span) + low for v in gen._draw64(n)]
        return np.array(vals, np.int64).astype(dtype).reshape(shape)
    vals = (gen._draw32(n).astype(np.int64) % span) + low
    return vals.astype(dtype).reshape(shape)


def randperm_array(n: int, dtype="int64", generator=None) -> np.ndarray:
    """``torch.randperm(n)``: PyTorch's CPU shuffle (swap i with i + random() % (n - i)).

    >>> g = Generator().manual_seed(0)
    >>> randperm_array(5, generator=g).tolist()
    [4, 0, 1, 3, 2]
    """
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    gen = _gen(generator)
    r = list(range(n))
    draws = gen._draw32(max(n - 1, 0)).tolist()
    for i in range(n - 1):
        z = draws[i] % (n - i)
        r[i], r[i + z] = r[i + z], r[i]
    return np.array(r, np.int64).astype(dtype)


def exponential_array(shape, dtype="float32", lambd: float = 1.0,
                      generator=None) -> np.ndarray:
    """Exp(lambd) draws, as ``torch.empty(shape).exponential_(lambd)``:
    ``-1 / lambd * log1p(-u)`` of a 53-bit uniform, cast to ``dtype``.

    >>> g = Generator().manual_seed(0)
    >>> exponential_array((2,), "float64", generator=g).round(4).tolist()
    [3.5083, 1.2304]
    """
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    shape = tuple(int(d) for d in shape)
    u = _uniform01(_gen(generator), math.prod(shape), "float64")
    out = np.array([-1.0 / lambd * math.log1p(-v) for v in u.tolist()], np.float64)
    return out.astype(dtype).reshape(shape)


def bernoulli_array(shape, p, dtype="float32", generator=None) -> np.ndarray:
    """0/1 draws with probability ``p`` of a 1. With a number ``p`` as
    ``torch.empty(shape).bernoulli_(p)`` (a 53-bit uniform below ``p``: what ``F.dropout``
    draws its mask with, ``bernoulli_(1 - p)``); with an array ``p`` (of ``shape``) as
    ``torch.bernoulli(p)`` (a 24-bit uniform for float32 ``p``, 53-bit for float64).

    >>> g = Generator().manual_seed(0)
    >>> bernoulli_array((6,), 0.5, generator=g).tolist()
    [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    """
    shape = tuple(int(d) for d in shape)
    n = math.prod(shape)
    gen = _gen(generator)
    if isinstance(p, np.ndarray):
        kind = "float64" if p.dtype == np.float64 else "float32"
        if p.size and ((p < 0).any() or (p > 1).any()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true")
        probs = np.broadcast_to(p, shape).reshape(-1)
        u = _uniform01(gen, n, kind)
        hit = u < probs.astype(np.float64) if kind == "float64" else \
            u.astype(np.float32) < probs.astype(np.float32)
    else:
        p = float(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        hit = _uniform01(gen, n, "float64") < p
    return hit.astype(dtype).reshape(shape)


def bernoulli_fill(array: np.ndarray, p, generator=None) -> np.ndarray:
    """Fill ``array`` in place with 0/1 draws, as ``tensor.bernoulli_(p)``; returns it.

    >>> a = np.zeros(4); _ = manual_seed(0); bernoulli_fill(a, 0.5).tolist()
    [0.0, 0.0, 1.0, 0.0]
    """
    view = _iteration_view(array)
    pv = _iteration_view(np.broadcast_to(p, array.shape)) if isinstance(p, np.ndarray) else p
    view[...] = bernoulli_array(view.shape, np.ascontiguousarray(pv)
                                if isinstance(pv, np.ndarray) else pv, array.dtype, generator)
    return array


def bernoulli_like(array: np.ndarray, p: float, generator=None) -> np.ndarray:
    """``torch.empty_like(t).bernoulli_(p)`` for a tensor holding ``array`` (what
    ``F.dropout`` draws its mask with): ATen's ``empty_like`` keeps the strides of a dense
    view (a transpose), and ``bernoulli_`` fills in memory order, so a transposed input's
    mask is drawn along its storage; other inputs get a contiguous mask.

    >>> _ = manual_seed(0); bernoulli_like(np.zeros((2, 3)).T, 0.5).tolist()
    [[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]]
    """
    order = sorted(range(array.ndim), key=lambda a: -array.strides[a])
    step, dense = array.itemsize, True
    for a in reversed(order):
        if array.shape[a] != 1:
            dense = dense and array.strides[a] == step
            step *= array.shape[a]
    if not dense:
        order = list(range(array.ndim))
    mask = np.empty([array.shape[a] for a in order], array.dtype).transpose(np.argsort(order))
    return bernoulli_fill(mask, p, generator)


def _iteration_view(array: np.ndarray) -> np.ndarray:
    """``array`` seen in the order ATen's TensorIterator visits it: its axes sorted by
    decreasing stride (memory order), so a transposed view is filled as its storage is."""
    order = sorted(range(array.ndim), key=lambda a: -abs(array.strides[a]))
    return array.transpose(order)


def uniform_fill(array: np.ndarray, low: float = 0.0, high: float = 1.0,
                 generator=None) -> np.ndarray:
    """Fill a float array in place with U(low, high) draws, as ``tensor.uniform_()`` (in
    memory order, as ATen fills a non-contiguous tensor); returns it.

    >>> a = np.zeros(3); _ = manual_seed(0); uniform_fill(a).round(4).tolist()
    [0.9701, 0.7078, 0.4594]
    """
    view = _iteration_view(array)
    view[...] = uniform_array(view.shape, array.dtype, low, high, generator)
    return array


def normal_fill(array: np.ndarray, mean: float = 0.0, std: float = 1.0,
                generator=None) -> np.ndarray:
    """Fill a float array in place with N(mean, std^2) draws, as ``tensor.normal_()``: the
    16-wide Box-Muller of a contiguous array, the per-element draw of a non-contiguous one
    (in memory order); returns it.

    >>> a = np.zeros(2); _ = manual_seed(0); normal_fill(a).round(4).tolist()
    [1.541, -0.2934]
    """
    contiguous = array.flags.c_contiguous
    view = array if contiguous else _iteration_view(array)
    view[...] = normal_array(view.shape, array.dtype, mean, std, generator,
                             contiguous=contiguous)
    return array
