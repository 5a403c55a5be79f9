"""TensorFlow 1's names for kernelgraph's ops, dtypes and variables (``tf.multiply``,
``tf.reduce_sum``, ``tf.assign``, ``tf.concat``, ``tf.random_normal`` ...): each one a
kernelgraph op or a thin call of one, with TF's argument names."""

from __future__ import annotations

import numpy as np

from ... import errors, ops
from ...devices import device as kg_device
from ...dtypes import as_dtype, bool_, float32, float64, int64
from ...eager import Tensor as EagerTensor  # passed through unchanged (eager mode)
from ...graph import Node
from ...static.variables import constant, global_variables_initializer
from .tensor_shape import as_shape
from .tensors import constant as tf_constant
from .tensors import tf_op

bool = bool_  # noqa: A001 - tf.bool



add, subtract = tf_op(ops.add, "Add"), tf_op(ops.sub, "Sub")
multiply = tf_op(ops.mul, "Mul")
divide, truediv = tf_op(ops.div, "truediv"), tf_op(ops.div, "truediv")
negative, pow = tf_op(ops.neg, "Neg"), tf_op(ops.pow, "Pow")
square, sqrt = tf_op(ops.square, "Square"), tf_op(ops.sqrt, "Sqrt")
exp, log = tf_op(ops.exp, "Exp"), tf_op(ops.log, "Log")
abs, sign = tf_op(ops.abs, "Abs"), tf_op(ops.sign, "Sign")
maximum, minimum = tf_op(ops.maximum, "Maximum"), tf_op(ops.minimum, "Minimum")
where = tf_op(ops.where, "Select")
tanh, sigmoid = tf_op(ops.tanh, "Tanh"), tf_op(ops.sigmoid, "Sigmoid")
_matmul, identity = tf_op(ops.matmul, "MatMul"), tf_op(ops.identity, "Identity")
equal, not_equal = tf_op(ops.equal, "Equal"), tf_op(ops.not_equal, "NotEqual")
less, less_equal = tf_op(ops.less, "Less"), tf_op(ops.less_equal, "LessEqual")
greater = tf_op(ops.greater, "Greater")
greater_equal = tf_op(ops.greater_equal, "GreaterEqual")
zeros_like = tf_op(ops.zeros_like, "zeros_like")
ones_like = tf_op(ops.ones_like, "ones_like")
initialize_all_variables = global_variables_initializer


def bool_py(x):
    return True if x else False




def _dims(shape, what: str) -> tuple:
    """A shape argument (a list, a TensorShape, a constant tensor such as a known
    ``tf.shape(x)``) as a tuple of ints, None for an unknown size."""
    if isinstance(shape, Node):
        if shape.op.name != "const":
            raise NotImplementedError(f"{what} with a shape computed at run time is not "
                                      "implemented in kernelgraph; pass Python ints (or -1)")
        shape = shape.attrs["value"].tolist()
    if isinstance(shape, int | np.integer):
        shape = [shape]
    return tuple(as_shape(shape).as_list())


def reshape(tensor, shape, name=None):
    """tf.reshape(tensor, shape): -1 (or None) for the one size to infer."""
    dims = tuple(-1 if d is None else d for d in _dims(shape, "tf.reshape"))
    return ops.reshape(tensor, shape=dims, name=name or "Reshape")


def _swap_last(x):
    x = x if isinstance(x, Node | EagerTensor) else tf_constant(x)
    rank = len(x.shape) if x.shape is not None else 2
    return ops.transpose(x, perm=[*range(rank - 2), rank - 1, rank - 2])


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """tf.matmul(a, b, transpose_a=, transpose_b=): the product of the (batched) matrices,
    each transposed first if asked (adjoint is the transpose for real numbers)."""
    if transpose_a or adjoint_a:
        a = _swap_last(a)
    if transpose_b or adjoint_b:
        b = _swap_last(b)
    return _matmul(a, b, name=name)


def transpose(a, perm=None, name=None):
    # perm is checked by the op (a list, tuple or 1-D int array of distinct axes in range).
    return ops.transpose(a, perm=perm, name=name or "transpose")


def broadcast_to(input, shape, name=None):  # noqa: A002 - TF's argument name
    return ops.broadcast_to(input, shape=tuple(shape), name=name)


def cast(x, dtype, name=None):
    """tf.cast(x, dtype): a tensor (or a value) converted to ``dtype``."""
    if not isinstance(x, Node | EagerTensor):
        x = tf_constant(x)
    return ops.cast(x, dtype=as_dtype(dtype), name=name or "Cast")


def _dim_source(d):
    """A size in a shape list: an int, or ``(x, axis)`` for a size known only at run time
    (``tf.shape(x)[axis]``: a getitem of tf.shape's stack of dim_size nodes); else None."""
    if not isinstance(d, Node):
        return int(d) if isinstance(d, int | np.integer) else None
    name = d.op.name
    if name == "const" and np.ndim(d.attrs["value"]) == 0:
        return int(d.attrs["value"])
    if name == "dim_size":
        return d.inputs[0], d.attrs["axis"]
    if name == "cast" and d.shape == ():
        return _dim_source(d.inputs[0])
    if name == "getitem" and len(d.attrs["index"]) == 1 and isinstance(d.attrs["index"][0], int):
        src = d.inputs[0]
        while src.op.name == "cast":
            src = src.inputs[0]
        if src.op.name == "stack" and src.attrs["axis"] == 0:
            return _dim_source(src.inputs[d.attrs["index"][0]])
    return None


def _run_time_like(shape):
    """For a shape list holding ``tf.shape(x)[i]`` tensors (TF1 stacks such a list into a
    shape tensor): a float32 tensor of that shape (sizes known at run time), else None."""
    if not isinstance(shape, list | tuple) or not any(isinstance(d, Node) for d in shape):
        return None
    sources = [_dim_source(d) for d in shape]
    if any(s is None for s in sources):
        raise NotImplementedError("a shape list holding tensors other than tf.shape(x)[i] is "
                                  "not implemented in kernelgraph; pass Python ints")
    rank, out = len(sources), None
    for i, src in enumerate(sources):
        where_ = [1] * rank
        if isinstance(src, int):
            where_[i] = src
            part = constant(np.zeros(where_, np.float32))
        else:
            x, axis = src
            others = [a for a in range(len(x.shape)) if a != axis % len(x.shape)]
            vec = ops.cast(x, dtype=float32)
            if others:
                vec = ops.sum(vec, axis=tuple(others))
            where_[i] = -1
            part = ops.reshape(ops.mul(vec, 0.0), shape=tuple(where_))
        out = part if out is None else ops.add(out, part)
    return out


def _full_dims(shape, what):
    dims = _dims(shape, what)
    if None in dims:
        raise ValueError(f"{what}: the shape {as_shape(dims)} must be fully known")
    return dims


def zeros(shape, dtype=float32, name=None):
    like = _run_time_like(shape)
    if like is not None:
        return ops.cast(ops.zeros_like(like), dtype=as_dtype(dtype), name=name or "zeros")
    return constant(np.zeros(_full_dims(shape, "tf.zeros")), dtype=dtype, name=name or "zeros")


def ones(shape, dtype=float32, name=None):
    like = _run_time_like(shape)
    if like is not None:
        return ops.cast(ops.ones_like(like), dtype=as_dtype(dtype), name=name or "ones")
    return constant(np.ones(_full_dims(shape, "tf.ones")), dtype=dtype, name=name or "ones")


def assign(ref, value, name=None):
    return ref.assign(value, name=name or "Assign")


def assign_add(ref, value, name=None):
    return ref.assign_add(value, name=name or "AssignAdd")


def assign_sub(ref, value, name=None):
    return ref.assign_sub(value, name=name or "AssignSub")


def _sparse_xent(_sentinel=None, labels=None, logits=None, name=None):
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    return ops.softmax_cross_entropy(logits, labels, name=name)


def disable_v2_behavior() -> None:
    """Nothing to disable: kernelgraph's static mode is already TF1's graph mode."""


disable_eager_execution = disable_v2_behavior
device = kg_device  # tf.device('/gpu:0') places nodes, as kg.device('cuda') does


# -- indexing and random ops -------------------------------------------------------------------
def concat(values, axis, name=None):
    """tf.concat(values, axis)."""
    return ops.concat(values, axis=axis, name=name)


def stack(values, axis=0, name=None):
    """tf.stack(values, axis=0)."""
    return ops.stack(values, axis=axis, name=name)


def split(value, num_or_size_splits, axis=0, name=None):
    """tf.split(value, num_or_size_splits, axis=0): a list of pieces."""
    return ops.split(value, num_or_size_splits, axis=axis, name=name)


def gather(params, indices, axis=0, name=None):
    """tf.gather(params, indices, axis=0)."""
    return ops.gather(params, indices, axis=axis, name=name)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """tf.pad(tensor, paddings, constant_values=0) (CONSTANT mode only)."""
    if str(mode).upper() != "CONSTANT":
        raise NotImplementedError(f"tf.pad: only mode='CONSTANT' is implemented, got "
                                  f"{errors.shown(mode)}")
    return ops.pad(tensor, paddings=paddings, value=constant_values, name=name)


def one_hot(indices, depth, dtype=float32, name=None):
    """tf.one_hot(indices, depth) (on_value 1, off_value 0)."""
    if not isinstance(indices, Node):  # graph mode even for a Python list
        indices = constant(indices, dtype=int64)
    return ops.one_hot(indices, depth=depth, dtype=dtype, name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """tf.clip_by_value(t, min, max) with Python-number bounds."""
    return ops.clip(t, min=clip_value_min, max=clip_value_max, name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """tf.random_normal / tf.random.normal: a new draw each Session.run."""
    return ops.random.random_normal(shape, mean=mean, std=stddev, seed=seed, dtype=dtype,
                                    name=name)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=float32, seed=None, name=None):
    """tf.random_uniform / tf.random.uniform: a new draw each Session.run."""
    return ops.random.random_uniform(shape, low=minval, high=maxval, seed=seed, dtype=dtype,
                                     name=name)


def _nn_dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    if noise_shape is not None:
        raise NotImplementedError("tf.nn.dropout: noise_shape is not implemented")
    if (rate is None) == (keep_prob is None):
        raise ValueError("tf.nn.dropout: pass exactly one of rate= or keep_prob=")
    return ops.dropout(x, p=rate if rate is not None else 1.0 - keep_prob, seed=seed)


set_random_seed = ops.random.seed


# -- issue 21: TF1's reductions with reduction_indices= and keep_dims=, argmax's dimension=,
# and the math TF1 tutorials compose ------------------------------------------------------------
def _axis(axis, reduction_indices, what):
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError(f"{what}: can not specify both 'axis' and 'reduction_indices'")
        axis = reduction_indices
    if isinstance(axis, Node):
        raise NotImplementedError(f"{what}: axis as a tensor is not implemented in kernelgraph; "
                                  "pass Python ints")
    if isinstance(axis, list | np.ndarray):
        axis = tuple(int(a) for a in axis)
    return axis


def _tf_reduce(op_name, keep_int=False):
    def reduce(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
        what = f"tf.reduce_{op_name}"
        axis = _axis(axis, reduction_indices, what)
        if keep_dims is not None:
            if keepdims is not None:
                raise ValueError(f"{what}: can not specify both 'keepdims' and 'keep_dims'")
            keepdims = keep_dims
        x = input_tensor if isinstance(input_tensor, Node | EagerTensor) else \
            tf_constant(input_tensor)
        if axis == ():  # TF1: an empty axis list reduces nothing
            return ops.identity(x, name=name)
        if op_name == "mean" and x.dtype.kind in "iub":  # TF1: an int mean is an int
            x = ops.cast(x, dtype=float64)
            out = ops.cast(ops.mean(x, axis=axis, keepdims=bool_py(keepdims)),
                           dtype=input_tensor.dtype, name=name or "Mean")
            return out
        name = name or op_name.capitalize()
        card = ops.OPS[op_name]
        if keep_int and x.dtype.kind in "iu" and card.infer(
                [x.shape], [x.dtype], {"axis": axis, "keepdims": bool_py(keepdims)}
        )[1] is not x.dtype:  # TF1 keeps the input's int dtype (kernelgraph sums in int64)
            out = card(x, axis=axis, keepdims=bool_py(keepdims))
            return ops.cast(out, dtype=x.dtype, name=name)
        return card(x, axis=axis, keepdims=bool_py(keepdims), name=name)
    reduce.__name__ = f"reduce_{op_name}"
    reduce.__doc__ = (f"tf.reduce_{op_name}(input_tensor, axis=None, keepdims=None, "
                      "reduction_indices=None, keep_dims=None)")
    return reduce


reduce_sum = _tf_reduce("sum", keep_int=True)
reduce_mean = _tf_reduce("mean", keep_int=True)
reduce_max, reduce_min = _tf_reduce("max"), _tf_reduce("min")
reduce_prod = _tf_reduce("prod", keep_int=True)
reduce_any, reduce_all = _tf_reduce("any"), _tf_reduce("all")


def _tf_arg(op_name):
    def arg(input, axis=None, name=None, dimension=None, output_type=int64):  # noqa: A002
        what = f"tf.arg{op_name[3:]}"
        if dimension is not None:
            if axis is not None:
                raise ValueError(f"{what}: Cannot specify both 'axis' and 'dimension'")
            axis = dimension
        x = input if isinstance(input, Node | EagerTensor) else tf_constant(input)
        out = ops.OPS[op_name](x, axis=0 if axis is None else int(axis),
                               name=name or ("ArgMax" if op_name == "argmax" else "ArgMin"))
        output_type = as_dtype(output_type)
        return out if out.dtype is output_type else ops.cast(out, dtype=output_type)
    arg.__name__ = op_name
    arg.__doc__ = f"{op_name}(input, axis=None, dimension=None, output_type=tf.int64)"
    return arg


argmax, argmin = _tf_arg("argmax"), _tf_arg("argmin")


def arg_max(input, dimension, name=None, output_type=int64):  # noqa: A002
    """TF1's old ``tf.arg_max(input, dimension)``."""
    return argmax(input, dimension=dimension, name=name, output_type=output_type)


def arg_min(input, dimension, name=None, output_type=int64):  # noqa: A002
    """TF1's old ``tf.arg_min(input, dimension)``."""
    return argmin(input, dimension=dimension, name=name, output_type=output_type)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    """TF1's ``tf.count_nonzero``: how many elements are not zero (int64)."""
    x = input_tensor if input_tensor is not None else input
    nz = ops.cast(ops.not_equal(x, 0), dtype=int64)
    out = reduce_sum(nz, axis, keepdims, name, reduction_indices, keep_dims)
    return out if as_dtype(dtype) is int64 else ops.cast(out, dtype=as_dtype(dtype))


def add_n(inputs, name=None):
    """TF1's ``tf.add_n``: the sum of a list of tensors of one shape and dtype."""
    if not inputs:
        raise ValueError("inputs must be an iterable of at least one Tensor/IndexedSlices "
                         "with the same dtype and shape")
    total = inputs[0]
    for x in inputs[1:]:
        total = ops.add(total, x)
    return ops.identity(total, name=name) if name else total


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None,
                     reduction_indices=None, keep_dims=None):
    """TF1's ``tf.reduce_logsumexp``: log(sum(exp(x))) computed stably."""
    axis = _axis(axis, reduction_indices, "tf.reduce_logsumexp")
    keep = bool_py(keep_dims if keep_dims is not None else keepdims)
    m = ops.max(input_tensor, axis=axis, keepdims=True)
    s = ops.sum(ops.exp(ops.sub(input_tensor, m)), axis=axis, keepdims=True)
    out = ops.add(ops.log(s), m)
    if not keep:
        out = ops.sum(out, axis=axis, keepdims=False)  # drops the kept size-1 axes
    return ops.identity(out, name=name) if name else out


def fill(dims, value, name=None):
    """TF1's ``tf.fill(dims, value)`` (dims as Python ints)."""
    if isinstance(dims, Node):
        raise NotImplementedError("tf.fill with a tensor of dims is not implemented in "
                                  "kernelgraph: pass Python ints")
    if np.ndim(value):
        raise ValueError(f"tf.fill: value must be a scalar, got shape {np.shape(value)}")
    return tf_constant(value, shape=[int(d) for d in dims], name=name or "Fill")


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None):
    """TF1's ``tf.eye``."""
    arr = np.eye(num_rows, num_columns)
    if batch_shape is not None:
        arr = np.broadcast_to(arr, (*batch_shape, *arr.shape))
    return constant(arr, dtype=dtype, name=name or "eye")


def linspace(start, stop, num, name=None, axis=0):
    """TF1's ``tf.linspace`` / ``tf.lin_space`` (float32 for Python numbers)."""
    dt = float64 if isinstance(start, np.float64) else float32
    return constant(np.linspace(start, stop, int(num)), dtype=dt, name=name or "LinSpace")


lin_space = linspace


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """TF1's ``tf.expand_dims`` (``dim=`` too): a size-1 axis inserted at ``axis``."""
    axis = dim if axis is None else axis
    shape = input.shape if isinstance(input, Node) else np.shape(input)
    if shape is None or None in shape:
        raise NotImplementedError("tf.expand_dims needs the input's full shape in kernelgraph")
    rank_ = len(shape)
    if not -rank_ - 1 <= axis <= rank_:
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank_}")
    axis = axis % (rank_ + 1)
    return reshape(input, (*shape[:axis], 1, *shape[axis:]), name=name)


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """TF1's ``tf.squeeze``: size-1 axes removed (all, or those of ``axis``)."""
    axis = squeeze_dims if axis is None else axis
    shape = input.shape if isinstance(input, Node) else np.shape(input)
    if shape is None or None in shape:
        raise NotImplementedError("tf.squeeze needs the input's full shape in kernelgraph")
    axes = range(len(shape)) if axis is None else [
        a % len(shape) for a in ([axis] if isinstance(axis, int) else axis)]
    for a in axes:
        if axis is not None and shape[a] != 1:
            raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got "
                             f"{shape[a]}")
    keep = [d for i, d in enumerate(shape) if not (i in axes and d == 1)]
    return reshape(input, tuple(keep), name=name)


def logical_and(x, y, name=None):
    """TF1's ``tf.logical_and`` of bool tensors."""
    return ops.mul(ops.cast(x, dtype=bool_), ops.cast(y, dtype=bool_), name=name)


def logical_or(x, y, name=None):
    """TF1's ``tf.logical_or`` of bool tensors."""
    return ops.add(ops.cast(x, dtype=bool_), ops.cast(y, dtype=bool_), name=name)


def logical_not(x, name=None):
    """TF1's ``tf.logical_not`` of a bool tensor."""
    return ops.equal(ops.cast(x, dtype=bool_), False, name=name)


def floordiv(x, y, name=None):
    """TF1's ``tf.floordiv`` / ``//``: floor of x / y, in x's dtype."""
    out = ops.OPS["floor"](ops.div(x, y))
    dt = x.dtype if isinstance(x, Node) else None
    return ops.cast(out, dtype=dt, name=name) if dt is not None and dt.kind in "iu" else out


def mod(x, y, name=None):
    """TF1's ``tf.mod`` / ``floormod``: x - floor(x / y) * y (the sign of y)."""
    return ops.sub(x, ops.mul(floordiv(x, y), y), name=name)


floormod = mod


def Print(input_, data=None, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """TF1's ``tf.Print``: ``input_`` itself (TF1 logs ``data`` to stderr as it runs;
    kernelgraph does not log)."""
    return ops.identity(input_, name=name)


__all__ = [
    "Print", "add_n", "arg_max", "arg_min", "argmax", "argmin", "count_nonzero", "expand_dims",
    "eye", "fill", "floordiv", "floormod", "lin_space", "linspace", "logical_and",
    "logical_not", "logical_or", "mod", "reduce_all", "reduce_any", "reduce_logsumexp",
    "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "squeeze",
]
