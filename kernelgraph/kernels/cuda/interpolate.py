"""CUDA separable resampling (:mod:`kernelgraph.kernels.interpolate`): one thread per output
element sums its table entries, as the CPU loop does, in the same order, so the results
round as the CPU's. The tables are small host arrays; they are copied to the device with
each call.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import interpolate as K
from . import core, launcher


@cuda.jit
def _resample(x, out, rptr, ridx, rwt, cptr, cidx, cwt):
    n_, c_, oh_, ow_ = out.shape
    start = cuda.grid(1)
    for i in range(start, out.size, cuda.gridsize(1)):
        ox = i % ow_
        oy = (i // ow_) % oh_
        c = (i // (ow_ * oh_)) % c_
        n = i // (ow_ * oh_ * c_)
        acc = 0.0
        for a in range(rptr[oy], rptr[oy + 1]):
            row = 0.0
            for b in range(cptr[ox], cptr[ox + 1]):
                row += cwt[b] * x[n, c, ridx[a], cidx[b]]
            acc += rwt[a] * row
        out[n, c, oy, ox] = acc


def resample2d(x, rows, cols):
    """The CUDA twin of :func:`kernelgraph.kernels.interpolate.resample2d`."""
    shape = K.check_tables(tuple(int(s) for s in x.shape), rows, cols)
    out = core.empty(shape, np.dtype(x.dtype))
    if out.size:
        blocks, threads = core.launch(out.size)
        launcher.launch(_resample, blocks, threads, x, out,
                        *(core.to_device(a) for a in (*rows, *cols)))
    return out
