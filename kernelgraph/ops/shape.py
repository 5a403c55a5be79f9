"""Shape ops: ``reshape transpose broadcast_to`` (views, no copy) and their gradient helpers.

Their arguments are checked as the framework a mode follows checks them. ``reshape`` takes
exactly what PyTorch's takes, in both modes, with PyTorch's messages. A permutation is
checked with PyTorch's messages where it runs at once (eager mode, and a static graph whose
input rank is only known at run time) and with TF1's where a graph node is built: both
refuse a perm of the wrong length, with an axis out of range or twice, or one that is not
an int (a bool is not an int here, though TF1 reads ``[True, False]`` as ``[1, 0]``).
"""

from __future__ import annotations

import numpy as np

from .. import shapes
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from .reduce import sum_to_like
from .registry import define


class DimensionError(ShapeError, IndexError):
    """An axis out of range: an IndexError, as in PyTorch, and a ShapeError (ValueError),
    as in TF1."""

    checked = True  # raised by the op's own argument check: shown as it is, in PyTorch's words


class ReshapeError(ShapeError, RuntimeError):
    """A shape reshape cannot take: a RuntimeError, as in PyTorch, and a ShapeError."""

    checked = True


class PermuteError(ShapeError, RuntimeError):
    """A perm of the wrong length or with an axis twice (PyTorch's RuntimeError)."""

    checked = True


class SizeError(ShapeError, RuntimeError):
    """A negative size for a new tensor (PyTorch's RuntimeError)."""

    checked = True


class ArgumentTypeError(TypeError):
    """A shape or axis argument that is not made of ints (PyTorch's and TF1's TypeError)."""

    checked = True


def _shape_arg(shape, what: str = "reshape", arg: str = "shape", lenient: bool = False) -> tuple:
    """``shape`` (a tuple or list of ints, NumPy ints too; with ``lenient`` also one int or
    a 1-D integer array) as a tuple of Python ints; a TypeError in PyTorch's words for
    anything else (floats, bools, None; a bare int or an array unless ``lenient``)."""
    if lenient and shapes.is_int(shape):
        return (int(shape),)
    if lenient and isinstance(shape, np.ndarray) and shape.ndim == 1:
        shape = list(shape)
    if type(shape) is not tuple and not isinstance(shape, tuple | list):
        raise ArgumentTypeError(f"{what}(): argument '{arg}' (position 2) must be tuple of "
                                f"ints, not {_type_name(shape)}")
    for i, d in enumerate(shape):
        if not shapes.is_int(d):
            raise ArgumentTypeError(f"{what}(): argument '{arg}' must be tuple of ints, but "
                                    f"found element of type {_type_name(d)} at pos {i}")
    return tuple(int(d) for d in shape)


def size_arg(size: tuple, what: str) -> tuple:
    """The size of ``kg.zeros(2, 3)`` or ``kg.zeros((2, 3))`` (``size`` the positional
    arguments) as a tuple of Python ints, checked as PyTorch checks it.

    >>> size_arg((2, 3), "zeros"), size_arg(([2, 3],), "zeros"), size_arg(((),), "ones")
    ((2, 3), (2, 3), ())
    """
    one = len(size) == 1 and isinstance(size[0], tuple | list)
    out = _shape_arg(size[0] if one else size, what, "size")
    if any(d < 0 for d in out):
        raise SizeError(f"{what}: Dimension size must be non-negative.")
    return out


def _norm_shape(shape) -> tuple:
    """A broadcast_to target: ints, as a tuple, list or 1-D integer array."""
    return _shape_arg(shape, "broadcast_to", "size", lenient=True)


def _type_name(v) -> str:
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _shape_text(target) -> str:
    return "[" + ", ".join(str(d) for d in target) + "]"


def _check_target(target: tuple) -> int | None:
    """PyTorch's checks of a reshape target that need no input shape; the index of its
    -1, or None."""
    inferred = None
    for i, d in enumerate(target):
        if d == -1:
            if inferred is not None:
                raise ReshapeError("only one dimension can be inferred")
            inferred = i
        elif d < 0:
            raise ReshapeError(f"invalid shape dimension {d} at index {i} of shape "
                               f"{_shape_text(target)}")
    return inferred


def reshape_target(shape, src: tuple) -> tuple:
    """The concrete shape ``reshape(x, shape)`` gives an ``x`` of shape ``src``, by
    PyTorch's rules: at most one -1, inferred; no other negative sizes; the element counts
    must match; a -1 next to a zero-sized dim is ambiguous. PyTorch's errors otherwise.

    >>> reshape_target((-1, 3), (2, 3)), reshape_target([], (1, 1))
    ((2, 3), ())
    """
    target = _shape_arg(shape)
    inferred = _check_target(target)
    size = 1
    for d in src:
        size *= d
    rest = 1
    for d in target:
        if d != -1:
            rest *= d
    if size == rest or (inferred is not None and rest > 0 and size % rest == 0):
        if inferred is None:
            return target
        if rest == 0:
            raise ReshapeError(f"cannot reshape tensor of 0 elements into shape "
                               f"{_shape_text(target)} because the unspecified dimension size "
                               "-1 can be any value and is ambiguous")
        return target[:inferred] + (size // rest,) + target[inferred + 1:]
    raise ReshapeError(f"shape '{_shape_text(target)}' is invalid for input of size {size}")


def _reshape_forward(x, shape):
    return np.reshape(x, reshape_target(shape, np.shape(x)))


def _reshape_infer(shapes_, dtypes, attrs):
    src = shapes_[0]
    if shapes.known(src):
        return reshape_target(attrs["shape"], src), dtypes[0]
    target = _shape_arg(attrs["shape"])
    inferred = _check_target(target)
    if src is not None:
        # Some dims unknown: the known ones still bound the element count. A zero among
        # them makes it 0; else it is a multiple of their product.
        known = 1
        for d in src:
            if d is not None:
                known *= d
        rest = 1
        for d in target:
            if d != -1:
                rest *= d
        if known == 0:
            return reshape_target(target, (0,)), dtypes[0]
        if inferred is None and rest % known:
            raise ReshapeError(f"shape '{_shape_text(target)}' is invalid for input of shape "
                               f"{shape_str(src)} (a multiple of {known} elements)")
    return tuple(None if d == -1 else d for d in target), dtypes[0]


def _reshape_cuda(k):
    K = k.shape

    def reshape(x, shape):  # the CPU forward's (PyTorch's) rules and errors
        k.elementwise.check_device_array(x)
        return K.reshape(x, reshape_target(shape, tuple(x.shape)))
    return reshape


def _reshape_grad_fn(node) -> str:
    # kg.dot (and torch.matmul of two vectors) is a (1, n) @ (n, 1) product viewed as 0-d:
    # PyTorch names that DotBackward0.
    source = getattr(node.inputs[0], "_node", None) if node.inputs else None
    if (source is not None and source.op.name == "matmul" and tuple(node.shape) == ()
            and tuple(source.shape) == (1, 1)):
        return "DotBackward0"
    return "ViewBackward0"


reshape = define("reshape", _reshape_forward, _reshape_infer,
                 lambda g, out, needs, attrs, x: (reshape_like(g, x),), traits=("view",),
                 reference=R.reshape, cuda=_reshape_cuda, attr_names=("shape",), saves=(),
                 grad_fn=_reshape_grad_fn,
                 doc="Same elements, new shape (a tuple or list of ints; NumPy ints too). "
                     "Exactly one dim may be -1, inferred from the others; the element "
                     "counts must match. PyTorch's rules and errors, in both modes.",
                     batch="reshape")
reshape_like = define("reshape_like", lambda x, like: np.reshape(x, np.shape(like)),
                      lambda s, d, attrs: (s[1], d[0]),
                      lambda gg, out, needs, attrs, x, like: (reshape_like(gg, x), None),
                      traits=("view",), reference=RG.reshape_like,
                      cuda=lambda k: k.shape.reshape_like,
                      doc="Reshape x to like's shape.", saves=(0,), grad_fn="ViewBackward0")


def _tf_type_name(v) -> str:
    # The DataType TF1 gives a perm holding ``v`` (a Python float list becomes float32).
    if isinstance(v, bool | np.bool_):
        return "bool"
    if isinstance(v, float):
        return "float32"
    if isinstance(v, np.generic):
        return v.dtype.name
    return "string" if isinstance(v, str) else _type_name(v)


_SEQUENCES = (tuple, list, range)


def _perm_items(perm, static: bool) -> tuple:
    if isinstance(perm, np.ndarray) and perm.ndim == 1:
        perm = perm.tolist() if perm.dtype.kind in "iu" else list(perm)
    if not isinstance(perm, _SEQUENCES):
        if static:
            raise ShapeError(f"perm must be a list of ints, got {_type_name(perm)} (Shape "
                             "must be rank 1 but is rank 0)")
        raise ArgumentTypeError(f"permute(): argument 'dims' (position 2) must be tuple of "
                                f"ints, not {_type_name(perm)}")
    for i, p in enumerate(perm):
        if not shapes.is_int(p):
            if static:
                raise ArgumentTypeError(f"Value passed to parameter 'perm' has DataType "
                                        f"{_tf_type_name(p)} not in list of allowed values: "
                                        "int32, int64")
            raise ArgumentTypeError(f"permute(): argument 'dims' (position 2) must be tuple "
                                    f"of ints, but found element of type {_type_name(p)} at "
                                    f"pos {i}")
    return tuple(int(p) for p in perm)


def normalize_perm(perm, ndim: int | None, static: bool = False) -> tuple:
    """``perm`` checked against a rank-``ndim`` input and made non-negative (None: the axes
    reversed). Errors in PyTorch's words (``torch.permute``), or with ``static`` in TF1's
    (``tf.transpose`` building a node); ``ndim`` None (unknown rank, static) checks ``perm``
    against its own length, as TF1 does.

    >>> normalize_perm((0, -1, 1), 3)
    (0, 2, 1)
    >>> normalize_perm((1, -2, 0), 3)
    Traceback (most recent call last):
    ...
    kernelgraph.ops.shape.PermuteError: permute(): duplicate dims are not allowed.
    """
    if perm is None:
        return tuple(range(ndim - 1, -1, -1)) if ndim is not None else None
    items = _perm_items(perm, static)
    n = len(items) if ndim is None else ndim
    if len(items) != n:
        if static:
            raise ShapeError(f"Dimension must be {n} but is {len(items)}")
        raise PermuteError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {n} is not equal to len(dims) = {len(items)}")
    for p in items:
        if not -n <= p < n:
            if static:
                raise ShapeError(f"perm dim {p} is out of range of input rank {n}")
            if n == 0:
                raise DimensionError(f"Dimension specified as {p} but tensor has no "
                                     "dimensions")
            raise DimensionError(f"Dimension out of range (expected to be in range of "
                                 f"[{-n}, {n - 1}], but got {p})")
    out = tuple(p % n for p in items)
    if len(set(out)) != n:
        if static:
            missing = min(set(range(n)) - set(out))
            raise ShapeError(f"{missing} is missing from {{{','.join(map(str, out))}}}.")
        raise PermuteError("permute(): duplicate dims are not allowed.")
    return out


def swapped_axes(ndim: int, dim0, dim1) -> tuple:
    """The perm of ``x.transpose(dim0, dim1)`` for a rank-``ndim`` x: the two dims swapped,
    checked as PyTorch checks them (ints, in range).

    >>> swapped_axes(3, 0, -1)
    (2, 1, 0)
    """
    dims = []
    for k, d in enumerate((dim0, dim1)):
        if not shapes.is_int(d):
            raise ArgumentTypeError(f"transpose(): argument 'dim{k}' (position {k + 1}) must "
                                    f"be int, not {_type_name(d)}")
        n = max(ndim, 1)  # PyTorch lets a 0-d tensor name dim 0 or -1
        if not -n <= d < n:
            raise DimensionError(f"Dimension out of range (expected to be in range of "
                                 f"[{-n}, {n - 1}], but got {d})")
        dims.append(int(d) % n)
    perm = list(range(ndim))
    if ndim:
        perm[dims[0]], perm[dims[1]] = perm[dims[1]], perm[dims[0]]
    return tuple(perm)


def _transpose_forward(x, perm=None):
    return np.transpose(x, normalize_perm(perm, x.ndim))


def _transpose_infer(shapes_, dtypes, attrs):
    src, perm = shapes_[0], attrs.get("perm")
    if src is None:
        # Unknown rank: a perm of length n says the rank is n (TF1 reads it so too).
        p = normalize_perm(perm, None, static=True)
        return (None if p is None else (None,) * len(p)), dtypes[0]
    p = normalize_perm(perm, len(src), static=True)
    return tuple(src[i] for i in p), dtypes[0]


def _transpose_grad(g, out, needs, attrs, x):
    perm = attrs.get("perm")
    if perm is None:
        return (transpose(g),)
    p = normalize_perm(perm, len(perm))
    inverse = [0] * len(p)
    for i, axis in enumerate(p):
        inverse[axis] = i
    return (transpose(g, perm=tuple(inverse)),)


def _transpose_cuda(k):
    permute = k.shape.permute
    return lambda x, perm=None: permute(x, normalize_perm(perm, x.ndim))


def _transpose_grad_fn(node) -> str:
    perm = (node.attrs or {}).get("perm")
    if perm is None:
        return "TBackward0"  # x.t(); kg.transpose(x) reverses the dims as x.t() does
    moved = [i for i, p in enumerate(perm) if p % len(perm) != i]
    return "TransposeBackward0" if len(moved) == 2 else "PermuteBackward0"


transpose = define("transpose", _transpose_forward, _transpose_infer, _transpose_grad,
                   traits=("view",), reference=R.transpose, cuda=_transpose_cuda,
                   attr_names=("perm",), saves=(), grad_fn=_transpose_grad_fn,
                   doc="Permute axes (reverse them when ``perm`` is None).", batch="transpose")


def _matrix_transpose_infer(shapes_, dtypes, attrs):
    s = shapes_[0]
    if s is not None and len(s) < 2:
        raise ShapeError(f"matrix_transpose needs rank >= 2, got shape {shape_str(s)}")
    return (None if s is None else (*s[:-2], s[-1], s[-2])), dtypes[0]


matrix_transpose = define(
    "matrix_transpose", lambda x: np.swapaxes(x, -1, -2), _matrix_transpose_infer,
    lambda g, out, needs, attrs, x: (matrix_transpose(g),), traits=("view",),
    reference=RG.matrix_transpose, cuda=lambda k: k.shape.matrix_transpose,
    doc="Swap the last two axes.", saves=(), grad_fn="TransposeBackward0", batch="elementwise")


def _broadcast_to_infer(shapes_, dtypes, attrs):
    target = _norm_shape(attrs["shape"])
    got = shapes.broadcast(shapes_[0], target, "broadcast_to")
    if got is not None and len(got) == len(target) and any(
            g is not None and g != t for g, t in zip(got, target)):
        raise ShapeError(f"broadcast_to: cannot broadcast {shape_str(shapes_[0])} to "
                         f"{shape_str(target)}")
    if shapes_[0] is not None and len(shapes_[0]) > len(target):
        raise ShapeError(f"broadcast_to: cannot broadcast {shape_str(shapes_[0])} to the "
                         f"lower rank {shape_str(target)}")
    return target, dtypes[0]


broadcast_to = define(
    "broadcast_to", lambda x, shape: np.broadcast_to(x, _norm_shape(shape)),
    _broadcast_to_infer, lambda g, out, needs, attrs, x: (sum_to_like(g, x),),
    traits=("view",), reference=R.broadcast_to,
    cuda=lambda k: lambda x, shape: k.shape.broadcast_to_shape(x, _norm_shape(shape)),
    attr_names=("shape",), saves=(), doc="Broadcast x to ``shape`` (a read-only view).",
    grad_fn="ExpandBackward0", batch="broadcast_to")
