"""PyTorch's random factories: ``rand randn randint randperm normal`` and ``rand_like
randn_like randint_like``, drawn from PyTorch's own CPU generator
(:mod:`kernelgraph.ops.torch_random`), so that after ``kg.manual_seed(n)`` they give the
numbers ``torch`` gives after ``torch.manual_seed(n)``. On a CUDA device the numbers are drawn
on the CPU and copied (PyTorch's CUDA generator is another algorithm: its numbers differ).
"""

from __future__ import annotations

import math

import numpy as np

from .. import devices
from .. import dtypes as D
from ..ops import torch_random as R
from .creation import _float_dtype, _like, _make, _number, _refuse, _size
from .tensors import Tensor

__all__ = ["bernoulli", "get_rng_state", "multinomial", "normal", "rand", "rand_like", "randint",
           "randint_like", "randn", "randn_like", "randperm", "set_rng_state"]


def get_rng_state() -> Tensor:
    """The default generator's state as a uint8 tensor of 5056 bytes, laid out as PyTorch's
    (``torch.get_rng_state``); :func:`set_rng_state` puts it back.

    >>> import kernelgraph as kg
    >>> s = kg.get_rng_state(); a = kg.rand(2).tolist(); kg.set_rng_state(s)
    >>> kg.rand(2).tolist() == a
    True
    """
    return _make(R.get_rng_state(), "cpu", False)


def set_rng_state(new_state) -> None:
    """Restore the default generator from :func:`get_rng_state` (``torch.set_rng_state``)."""
    R.set_rng_state(new_state)


def rand(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """U[0, 1) draws from PyTorch's CPU generator: after ``kg.manual_seed(n)`` the same
    numbers as ``torch.rand``.

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0); kg.rand(3).tolist()
    [0.49625658988952637, 0.7682217955589294, 0.08847743272781372]
    """
    _refuse("rand", out, layout, pin_memory)
    dt = _float_dtype(dtype, "check_uniform_bounds")
    return _make(R.uniform_array(_size(sizes, "rand", size), dt, generator=generator), device,
                 requires_grad, drawn=True)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """N(0, 1) draws from PyTorch's CPU generator, as ``torch.randn``.

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0); [round(v, 4) for v in kg.randn(3).tolist()]
    [1.541, -0.2934, -2.1788]
    """
    _refuse("randn", out, layout, pin_memory)
    dt = _float_dtype(dtype, "normal_kernel_cpu")
    return _make(R.normal_array(_size(sizes, "randn", size), dt, generator=generator), device,
                 requires_grad, drawn=True)


def _randint_args(args: tuple, what: str, low, high, size):
    n = len(args)
    if n == 3:
        low, high, size = args
    elif n == 2:
        if high is None and size is None and isinstance(args[1], tuple | list):
            high, size = args  # randint(high, size)
        elif high is None:
            low, high = args  # randint(low, high, size=...)
        else:
            raise TypeError(f"{what}() received an invalid combination of arguments")
    elif n == 1:
        if high is None and size is not None:
            high = args[0]
        elif high is not None and size is not None:
            low = args[0]
        else:
            raise TypeError(f"{what}() missing required argument 'size' (pos 2)")
    elif n > 3:
        raise TypeError(f"{what}() takes at most 3 positional arguments ({n} given)")
    if high is None or size is None:
        raise TypeError(f"{what}() missing required arguments 'high' and 'size'")
    return _number(0 if low is None else low, what), _number(high, what), size


def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad: bool = False,
            pin_memory: bool = False) -> Tensor:
    """``randint(high, size)`` or ``randint(low, high, size)``: integers in [low, high)
    drawn as PyTorch draws them (int64 unless ``dtype``).

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0); kg.randint(0, 10, (5,)).tolist()
    [4, 9, 3, 0, 3]
    """
    _refuse("randint", out, layout, pin_memory)
    low, high, size = _randint_args(args, "randint", low, high, size)
    dt = D.int64 if dtype is None else D.as_dtype(dtype)
    shape = _size(size if isinstance(size, tuple | list) else (size,), "randint")
    arr = R.randint_array(int(math.ceil(low)), int(math.ceil(high)), shape, "int64",
                          generator=generator)
    return _make(arr.astype(dt), device, requires_grad, drawn=True)


def randperm(n: int, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1``, shuffled as PyTorch's CPU ``randperm``.

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0); kg.randperm(5).tolist()
    [4, 0, 1, 3, 2]
    """
    _refuse("randperm", out, layout, pin_memory)
    n = _number(n, "randperm")
    if not isinstance(n, int):
        raise TypeError(f"randperm(): argument 'n' must be int, not {type(n).__name__}")
    dt = D.int64 if dtype is None else D.as_dtype(dtype)
    arr = R.randperm_array(n, generator=generator).astype(dt)
    return _make(arr, device, requires_grad, drawn=True)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``torch.normal``: ``normal(mean, std, size)`` with numbers, or with a tensor ``mean``
    and/or ``std`` (one draw per element of their broadcast shape: N(0, 1) draws times
    ``std`` plus ``mean``, as PyTorch computes them).

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0); [round(v, 4) for v in kg.normal(2.0, 3.0, (2,)).tolist()]
    [6.623, 1.1197]
    """
    _refuse("normal", out, layout, pin_memory)
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with "
                            "numbers for mean and std, give a size")
        mean, std = _number(mean, "normal"), _number(std, "normal")
        dt = _float_dtype(dtype, "normal_kernel_cpu")
        return _make(R.normal_array(_size((size,), "normal"), dt, mean, std, generator),
                     device, requires_grad, drawn=True)
    if size is not None:
        raise TypeError("normal(): size is only taken with numbers for mean and std")
    m = devices.to_numpy(mean._array) if mt else None
    s = devices.to_numpy(std._array) if st else None
    if s is not None and (s < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    ref = m if m is not None else s
    dt = D.as_dtype(dtype) if dtype is not None else ref.dtype
    if dt.kind != "f":
        raise RuntimeError(f'"normal_kernel_cpu" not implemented for \'{R._torch_name(dt.name)}\'')
    shape = np.broadcast_shapes(*(a.shape for a in (m, s) if a is not None))
    if m is None:  # a number for mean: draws * std + mean
        arr = R.normal_array(shape, dt, 0.0, 1.0, generator) * s.astype(dt)
        arr = (arr + dt.type(_number(mean, "normal"))).astype(dt)
    elif s is None:  # a number for std: N(0, std) draws + mean
        arr = (R.normal_array(shape, dt, 0.0, _number(std, "normal"), generator)
               + m.astype(dt)).astype(dt)
    else:
        arr = ((R.normal_array(shape, dt, 0.0, 1.0, generator) * s.astype(dt)).astype(dt)
               + m.astype(dt)).astype(dt)
    device = device if device is not None else (mean if mt else std).device
    return _make(np.ascontiguousarray(arr), device, requires_grad, drawn=True)


def rand_like(input: Tensor, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    """U[0, 1) draws in ``input``'s shape, dtype and device (``torch.rand_like``).

    >>> import kernelgraph as kg
    >>> tuple(kg.rand_like(kg.zeros(2, 2)).shape)
    (2, 2)
    """
    _refuse("rand_like", None, layout)
    shape, dt, dev = _like(input, "rand_like", dtype, device)
    dt = _float_dtype(dt, "check_uniform_bounds")
    return _make(R.uniform_array(shape, dt, generator=generator), dev, requires_grad, drawn=True)


def randn_like(input: Tensor, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    """N(0, 1) draws in ``input``'s shape, dtype and device (``torch.randn_like``).

    >>> import kernelgraph as kg
    >>> tuple(kg.randn_like(kg.zeros(3)).shape)
    (3,)
    """
    _refuse("randn_like", None, layout)
    shape, dt, dev = _like(input, "randn_like", dtype, device)
    dt = _float_dtype(dt, "normal_kernel_cpu")
    return _make(R.normal_array(shape, dt, generator=generator), dev, requires_grad, drawn=True)


def randint_like(input: Tensor, *args, low=None, high=None, generator=None, dtype=None,
                 layout=None, device=None, requires_grad: bool = False,
                 memory_format=None) -> Tensor:
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``: integers in
    [low, high) in ``input``'s shape and dtype.

    >>> import kernelgraph as kg
    >>> kg.randint_like(kg.zeros(4, dtype=kg.int64), 3).dtype.name
    'int64'
    """
    _refuse("randint_like", None, layout)
    shape, dt, dev = _like(input, "randint_like", dtype, device)
    if len(args) == 1:
        low, high = (args[0], high) if high is not None else (low, args[0])
    elif len(args) == 2:
        low, high = args
    elif args:
        raise TypeError(f"randint_like() takes at most 3 positional arguments "
                        f"({len(args) + 1} given)")
    if high is None:
        raise TypeError("randint_like() missing required argument 'high'")
    low = 0 if low is None else _number(low, "randint_like")
    arr = R.randint_array(int(low), int(_number(high, "randint_like")), shape,
                          generator=generator)
    return _make(arr.astype(dt), dev, requires_grad, drawn=True)


def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:
    """0/1 draws: ``bernoulli(probs)`` draws each element with its own probability (the
    result has ``probs``'s dtype); ``bernoulli(input, p)`` draws ``input``'s shape with the
    probability ``p``. PyTorch's CPU numbers, as ``torch.bernoulli``.

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0); kg.bernoulli(kg.full((4,), 0.5)).tolist()
    [1.0, 0.0, 1.0, 1.0]
    """
    _refuse("bernoulli", out)
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    shape, dt, dev = _like(input, "bernoulli", None, None)
    if p is None:
        if dt.kind != "f":
            raise RuntimeError(f'"bernoulli_tensor_cpu_p_" not implemented for '
                               f"'{R._torch_name(dt.name)}'")
        probs = np.ascontiguousarray(devices.to_numpy(input._array))
        arr = R.bernoulli_array(shape, probs, dt, generator)
    else:
        arr = R.bernoulli_array(shape, _number(p, "bernoulli"), dt, generator)
    return _make(arr, dev, False, drawn=True)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None, out=None) -> Tensor:
    """Sample category indices from each row of ``input`` (non-negative weights), as
    ``torch.multinomial`` draws them on the CPU: one sample, or samples without replacement,
    by the "exponential race" ``argmax/topk(p / q)`` with ``q ~ Exp(1)``; several samples
    with replacement by a binary search in each row's cumulative distribution.

    >>> import kernelgraph as kg
    >>> g = kg.Generator().manual_seed(2147483647)
    >>> kg.multinomial(kg.tensor([0.6, 0.3, 0.1]), 1, replacement=True, generator=g).tolist()
    [0]
    """
    _refuse("multinomial", out)
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    p = devices.to_numpy(input._array)
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{R._torch_name(p.dtype.name)}")
    n = int(_number(num_samples, "multinomial"))
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cats = p.shape[-1]
    if not replacement and n > cats:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = p.reshape(-1, cats)
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement or n == 1:
        q = R.exponential_array(rows.shape, p.dtype, generator=generator)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (rows / q).astype(p.dtype)
        order = np.argsort(-ratio, axis=1, kind="stable")
        result = order[:, :n]
    else:
        result = _multinomial_with_replacement(rows, n, generator)
    result = result.reshape(p.shape[:-1] + (n,)).astype(np.int64)
    return _make(result, input.device, False, drawn=True)


def _multinomial_with_replacement(rows: np.ndarray, n: int, generator) -> np.ndarray:
    result = np.empty((rows.shape[0], n), np.int64)
    for i, row in enumerate(rows):
        cum = np.cumsum(row.astype(np.float64)).astype(row.dtype)
        cum = (cum / cum[-1]).astype(row.dtype)
        cum[-1] = 1
        u = R.uniform_array((n,), "float64", generator=generator)
        result[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return result
