"""Running generated fusion kernels on CUDA (:mod:`kernelgraph.static.fusion` writes them).

A fused group becomes one module of generated source: a ``cuda.jit(device=True)`` scalar
function ``fused`` built from the same scalar bodies as the single-op kernels
(:mod:`kernelgraph.kernels.cpu`), and the (flat, strided) kernel pair of its arity
(:func:`elementwise.nary_kernel_source`). :class:`FusedCudaKernel` checks the operands and
launches that pair with the elementwise launcher (:func:`elementwise.launch_map`), so
broadcasting, the flat fast path and dtypes behave as in one elementwise op.

Same bits as the unfused run. The GPU compiler (NVVM, and ptxas after it) contracts a
multiply followed by an add into one fused multiply-add, which rounds once instead of
twice. Op by op, a multiply's result is stored to memory before the next kernel adds to it;
inside one fused kernel it would not be, and ``relu(x * w + b)`` would come out differently.
So every float value that crosses from one member node to the next goes through
:func:`keep`: on a GPU an ``add.rn`` of -0.0 in inline PTX, which is the identity on every
number (x + -0.0 == x, also for +-0 and inf) and which neither NVVM (inline assembly is
opaque to it) nor ptxas (``.rn`` forbids contraction) fuses with a multiply. It costs one
add per intermediate value. A NaN passing through it comes out as the GPU's canonical NaN:
the same value, possibly other payload bits. Under the simulator it is the identity.
"""

from __future__ import annotations

import numpy as np

from . import core
from . import elementwise as E
from .simulator import use_gpu_math

__all__ = ["FusedCudaKernel", "keep"]

if core.SIMULATOR:
    def keep(x):
        """The value ``x`` itself, never contracted with the operations around it (see the
        module docstring).

        >>> keep(1.5)
        1.5
        """
        return x
else:  # pragma: no cover - needs a GPU (checked offline by compiling PTX for sm_90)
    from llvmlite import ir
    from numba.core import types
    from numba.core.extending import intrinsic

    # (inline PTX, register constraint) per float type; other types pass through unchanged.
    _BARRIERS = {types.float32: ("add.rn.f32 $0, $1, 0f80000000;", "=f,f"),
                 types.float64: ("add.rn.f64 $0, $1, 0d8000000000000000;", "=d,d")}

    @intrinsic
    def keep(typingctx, x):
        """The value ``x`` itself, never contracted with the operations around it (see the
        module docstring)."""
        def codegen(context, builder, signature, args):
            barrier = _BARRIERS.get(signature.args[0])
            if barrier is None:
                return args[0]
            ty = context.get_value_type(signature.return_type)
            return builder.asm(ir.FunctionType(ty, [ty]), barrier[0], barrier[1], args,
                               side_effect=False)

        return x(x), codegen


class FusedCudaKernel:
    """One fused group's CUDA kernels, called like an elementwise op's CUDA forward.

    ``kernel(*operands)`` takes the group's leaves (C-contiguous device arrays of the dtypes
    the group was compiled for, or Python numbers), broadcasts them like NumPy and returns a
    new device array of ``out_dtype``. ``members`` names the nodes computed inside (a plan's
    error messages list them); ``source`` is the generated module.

    >>> from numba import cuda
    >>> from kernelgraph.kernels import cpu
    >>> scope = {"cuda": cuda, "f": cuda.jit(device=True)(cpu._add)}
    >>> exec(E.nary_kernel_source(2, cache=False), scope)
    >>> k = FusedCudaKernel("k", "", (scope["flat"], scope["strided"]), ["add"],
    ...                     (np.float32, np.float32), np.float32)
    >>> k(core.to_device(np.ones((2, 2), np.float32)), 1.0).copy_to_host()
    array([[2., 2.],
           [2., 2.]], dtype=float32)
    """

    def __init__(self, key: str, source: str, kernels: tuple, members: list[str],
                 leaf_dtypes: tuple, out_dtype):
        self.key = key
        self.source = source
        use_gpu_math(kernels[0])  # under the simulator: exp(1000) is inf, as on a GPU
        self.kernels = kernels  # (flat, strided), as elementwise.launch_map takes them
        self.members = members
        self.leaf_dtypes = tuple(np.dtype(d) for d in leaf_dtypes)
        self.out_dtype = np.dtype(out_dtype)

    def __call__(self, *operands):
        if len(operands) != len(self.leaf_dtypes):
            raise TypeError(f"{self!r} takes {len(self.leaf_dtypes)} operands, got "
                            f"{len(operands)}")
        arrays, shapes = [], []
        for j, (v, dt) in enumerate(zip(operands, self.leaf_dtypes)):
            if isinstance(v, E._NUMBERS):
                arrays.append(core.scalar_array(v, dt))
                shapes.append(())
                continue
            E.check_device_array(v)
            # The generated casts assume these dtypes (the nodes' dtypes): converting here
            # would hide a bug elsewhere.
            if v.dtype != dt:
                raise TypeError(f"operand {j} of {self!r} is {v.dtype}; the kernel was "
                                f"generated for {dt}")
            arrays.append(v)
            shapes.append(tuple(v.shape))
        out = core.empty(E.broadcast_shape(shapes), self.out_dtype)
        if out.size == 0:
            return out
        return E.launch_map(self.kernels, out, arrays, shapes)

    def __repr__(self):
        return f"<fused CUDA kernel of {', '.join(self.members)}>"
