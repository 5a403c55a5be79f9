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

from . import core, launcher


def _host_stand_in(v):
    """A device array's zero-stride host stand-in of its shape and dtype (no memory of its
    size), which is all a draw reads of it; anything else as it is."""
    if core.is_device_array(v):
        return np.broadcast_to(np.zeros((), v.dtype), v.shape)
    return v


def drawn_on_host(draw):
    """The CUDA forward of a random op whose CPU forward is ``draw``: the CPU draw (same
    stream, same counter step) on host stand-ins of its device inputs, uploaded once."""
    def forward(*args, **attrs):
        launcher.not_replayable("draws its random numbers on the host (a new draw each run)")
        return core.to_device(draw(*(_host_stand_in(a) for a in args), **attrs))

    return forward
