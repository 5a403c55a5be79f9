"""CUDA ``rnn_tanh_cell``: the two products by the package's GEMM (reading the weights
transposed in place), then one kernel for the adds and the tanh, in the CPU kernel's order
(``x w_ih^T + b_ih + h w_hh^T + b_hh``)."""

from __future__ import annotations

import math

from numba import cuda

from ...ops.rnn import _dtype
from .. import cpu
from . import core
from .linalg import gemm


@cuda.jit
def _add_biases_tanh(xw, hw, b_ih, b_hh, hidden):
    start = cuda.grid(1)
    for i in range(start, xw.size, cuda.gridsize(1)):
        j = i % hidden
        xw[i] = math.tanh(xw[i] + b_ih[j] + hw[i] + b_hh[j])


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """CUDA forward of ``rnn_tanh_cell`` (dtypes promoted as the CPU forward does)."""
    values = (x, h, w_ih, w_hh, b_ih, b_hh)
    dt = _dtype([v.dtype for v in values])
    cpu.check_cell_shapes(*values)
    x, h, w_ih, w_hh, b_ih, b_hh = (core.astype(v, dt) for v in values)
    out = gemm(x, w_ih, trans_b=True)  # a new C-contiguous (batch, hidden) array
    if out.size:
        hw = gemm(h, w_hh, trans_b=True)
        blocks, threads = core.launch(out.size)
        _add_biases_tanh[blocks, threads](core.flat(out), core.flat(hw), b_ih, b_hh,
                                          out.shape[1])
    return out


FORWARDS = {"rnn_tanh_cell": rnn_tanh_cell}
