"""CUDA forwards of the random ops: ``random_normal``, ``random_uniform``, ``dropout_mask``.

kernelgraph promises identical random streams in eager and static mode *and on every
device*: after ``kg.random.seed(0)`` the same calls give the same numbers on CPU and CUDA.
The streams are NumPy ``Generator`` draws seeded with ``(global seed, op seed, draw)``
(:mod:`kernelgraph.ops.random`); numba's device RNG (xoroshiro128+) would give a different
stream, so these forwards draw with the CPU forward on the host and upload the result once.

That upload is the one host -> device transfer in the CUDA forwards, and it is by design:
it costs one copy of the output per draw, and the stream (and the draw counter it advances)
stays exactly the CPU's. Nothing comes back from the device: ``dropout_mask`` reads only
the shape and dtype of its device input.
"""

from __future__ import annotations

import numpy as np

from ...ops import random as R
from . import core


def random_normal(shape, mean, std, dtype, global_seed, seed, stream):
    """CUDA ``random_normal``: the CPU draw (same stream, same counter step), uploaded."""
    return core.to_device(R.random_normal_op.forward(
        shape=shape, mean=mean, std=std, dtype=dtype, global_seed=global_seed, seed=seed,
        stream=stream))


def random_uniform(shape, low, high, dtype, global_seed, seed, stream):
    """CUDA ``random_uniform``: the CPU draw (same stream, same counter step), uploaded."""
    return core.to_device(R.random_uniform_op.forward(
        shape=shape, low=low, high=high, dtype=dtype, global_seed=global_seed, seed=seed,
        stream=stream))


def dropout_mask(x, p, global_seed, seed, stream):
    """CUDA ``dropout_mask``: the CPU mask for x's shape and dtype, uploaded. ``x`` stays on
    the device: the CPU forward gets a zero-stride host stand-in with x's shape and dtype
    (no memory of x's size), which is all the mask depends on."""
    like = np.broadcast_to(np.zeros((), x.dtype), x.shape)
    return core.to_device(R.dropout_mask.forward(like, p=p, global_seed=global_seed,
                                                 seed=seed, stream=stream))


FORWARDS = {
    "random_normal": random_normal,
    "random_uniform": random_uniform,
    "dropout_mask": dropout_mask,
}
