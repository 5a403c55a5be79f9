"""TF1's tensors and their static semantics over kernelgraph's graph nodes: ``tf.constant``
with TF1's fill / reshape / pad rules and its dtypes (a Python int is int32, text is
``tf.string``), ``tf.TensorShape``, ``tf.shape`` / ``size`` / ``rank``, ``tf.range``,
``tf.unstack``, ``tf.convert_to_tensor``, ``tf.stop_gradient``, ``tf.gradients`` and
``tf.hessians``, and the dtypes TF1 tutorials name (``tf.uint8``, ``tf.string`` ...).

>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     c = tf.constant([1, 2, 3], shape=[3, 1])
...     with tf.Session() as sess:
...         sess.run(c).tolist(), sess.run(tf.shape(c)).tolist()
([[1], [2], [3]], [3, 1])
"""

from __future__ import annotations

import builtins
import types

import numpy as np

from ... import dtypes as D
from ... import ops
from ...eager import Tensor as EagerTensor
from ...graph import Node, get_default_graph, user_location
from ...ops import registry, shape_functions
from ...ops.control import dim_size
from ...static.build import build, constant_node
from ...static.gradients import gradients as _kg_gradients
from ...static.gradients import stop_gradient as _stop_gradient_op
from ...static.variables import Variable as _KgVariable
from ...static.variables import group
from .dtype import DType
from .graph_collections import (
    GraphKeys,
    add_to_collection,
    add_to_collections,
    get_collection,
    get_collection_ref,
    in_collections,
    local_variables,
    local_variables_initializer,
    trainable_variables,
)
from .tensor_shape import Dimension, TensorShape, as_shape, unknown_shape

string = D.string
int8, int16, uint8, float16, half = D.int8, D.int16, D.uint8, D.float16, D.float16
float32, float64, int32, int64, double = D.float32, D.float64, D.int32, D.int64, D.float64
_INT32 = np.iinfo(np.int32)


# -- constants ---------------------------------------------------------------------------------
def _python_data(value) -> bool:
    return not isinstance(value, np.ndarray | np.generic | Node | EagerTensor)


def _is_text(value) -> bool:
    while isinstance(value, list | tuple) and value:
        value = value[0]
    return isinstance(value, str | bytes | np.str_ | np.bytes_) or (
        isinstance(value, np.ndarray) and value.dtype.kind in "SUO" and value.size > 0
        and isinstance(value.flat[0], str | bytes))


def _tf_array(value, dtype, what):
    """``value`` as TF1 converts it: a Python int is int32 (int64 when it does not fit),
    a Python float float32, text ``tf.string``; an int dtype refuses a fractional float."""
    if dtype is not None:
        dtype = D.as_dtype(dtype)
    if dtype is D.string or (dtype is None and _is_text(value)):
        return D.to_bytes(value, what)
    if _python_data(value):
        if dtype is not None and dtype.kind in "iu":
            bad = _first_float(value)
            if bad is not None:  # TF1 refuses any Python float for an int dtype
                raise TypeError(f"Expected {dtype.name}, but got {bad!r} of type 'float'.")
        if dtype is None:
            arr = D.convert(value, what=what)
            if arr.dtype is D.int64 and (arr.size == 0 or (
                    arr.min() >= _INT32.min and arr.max() <= _INT32.max)):
                return arr.astype(D.int32)  # TF1's default int
            return arr
    return D.convert(value, dtype, what=what)


def _first_float(value):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            return v
        if isinstance(v, list | tuple):
            stack.extend(reversed(v))
    return None


def _shaped(arr: np.ndarray, shape, verify_shape: bool) -> np.ndarray:
    shape = tuple(int(d) for d in as_shape(shape).as_list())
    if verify_shape and arr.shape != shape:
        raise TypeError(f"Expected Tensor's shape: {shape}, but got {arr.shape}.")
    size = int(np.prod(shape))
    if arr.size == size:
        return arr.reshape(shape)
    if arr.size == 1:  # a scalar (or one element) fills the shape
        return np.full(shape, arr.reshape(()), dtype=arr.dtype)
    if arr.size > size:
        raise ValueError(f"Too many elements provided. Takes at most {size}, but got "
                         f"{arr.size}.")
    flat = arr.reshape(-1)
    if flat.size == 0:  # TF1: no values at all are zeros
        return np.zeros(shape, dtype=arr.dtype)
    # TF1's graph mode: fewer values than the shape holds repeat the last one.
    out = np.concatenate([flat, np.repeat(flat[-1:], size - flat.size)])
    return out.reshape(shape)


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False) -> Node:
    """TF1's ``tf.constant``: a value fixed in the graph.

    With ``shape``, a single value fills it, a list of the right count is reshaped to it,
    fewer values repeat the last one, and too many are refused, as in TF1. A Python int is
    int32 (as TF1's), text a ``tf.string`` tensor of bytes.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sess.run(tf.constant(7, shape=[2, 2])).tolist(), sess.run(tf.constant("Hi"))
    ([[7, 7], [7, 7]], b'Hi')
    """
    if isinstance(value, Node):
        raise TypeError(f"tf.constant needs a value, got the tensor '{value.name}'")
    arr = _tf_array(value, dtype, "tf.constant")
    if shape is not None:
        arr = _shaped(arr, shape, verify_shape)
    return constant_node(arr, dtype=arr.dtype, name=name or "Const",
                         location=user_location(2))


class Variable(_KgVariable):
    """TF1's ``tf.Variable`` (arguments in TF1's order): a kernelgraph Variable whose
    initial value converts as ``tf.constant`` converts it (a Python int is int32); a
    callable initial value is called."""

    __slots__ = ()

    def __new__(cls, initial_value=None, trainable=True, collections=None,
                validate_shape=True, caching_device=None, name=None, variable_def=None,
                dtype=None, expected_shape=None, import_scope=None, constraint=None,
                use_resource=None, synchronization=None, aggregation=None, shape=None):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if callable(initial_value) and not isinstance(initial_value, Node):
            initial_value = initial_value()
        if not isinstance(initial_value, Node):
            initial_value = _tf_array(initial_value, dtype, "tf.Variable")
        var = super().__new__(cls, initial_value, name=name, trainable=bool(trainable),
                              dtype=dtype)
        return in_collections(var, collections)


registry.FRONTENDS[Variable] = build  # ops on it add graph nodes, as on any Variable


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None,
                      dtype_hint=None) -> Node:
    """TF1's ``tf.convert_to_tensor``: a tensor as it is (its dtype must be ``dtype``), a
    Variable as the tensor of its value, anything else a constant."""
    if isinstance(value, Node) and value.is_operation:
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor")
    if isinstance(value, Node):
        if dtype is not None and D.as_dtype(dtype) is not value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {D.as_dtype(dtype).name} for "
                             f"Tensor with dtype {value.dtype.name}: {value!r}")
        return value
    hint = preferred_dtype or dtype_hint
    if dtype is None and hint is not None:
        try:
            return constant(value, dtype=hint, name=name or "Const")
        except (TypeError, ValueError):
            pass  # TF1: a preferred dtype that does not fit is dropped
    return constant(value, dtype=dtype, name=name or "Const")


def _narrow_dtype(args):
    """The storage dtype (int8, int16, uint8) all tensor operands share, else None."""
    dts = {a.dtype for a in args if isinstance(a, Node)}
    if len(dts) == 1:
        (dt,) = dts
        return dt if dt in D.STORAGE else None
    return None


def tf_op(op, default: str | None = None):
    """``op`` as a TF1 function: it adds a graph node also when given only Python values
    (``tf.add(1.0, 2.0)`` is a tensor in TF1, where kernelgraph's op would compute at once),
    named as TF1 names it by default (``tf.matmul`` makes 'MatMul', ``tf.add`` 'Add'), so
    that printed tensors read as TF1 prints them."""
    card = isinstance(op, ops.Op)

    def call(*args, name=None, **kwargs):
        if args and not any(isinstance(a, Node | EagerTensor)
                            for a in (*args, *kwargs.values())):
            args = (constant(args[0]), *args[1:])  # Python or NumPy values: a TF1 constant
        if card:
            narrow = _narrow_dtype(args)
            if narrow is not None:  # int16 + int16 is int16 in TF1 (wrapping as TF1 does)
                out = op(*args, **kwargs)
                if out.dtype is D.WIDE[narrow] and narrow.kind in "iu":
                    return ops.cast(out, dtype=narrow, name=name or default)
                return out if name is None else ops.identity(out, name=name)
            return op(*args, name=name or default, **kwargs)
        out = op(*args, **kwargs)
        return out if name is None else ops.identity(out, name=name)

    kg_name = getattr(op, "name", None) or getattr(op, "__name__", default)
    call.__name__ = call.__qualname__ = kg_name
    named = f", named {default!r} by default" if default else ""
    call.__doc__ = f"TF1's spelling of kernelgraph's {kg_name!r} (a graph node{named})."
    return call


# -- shapes ----------------------------------------------------------------------------------
def _node(x) -> Node:
    return x if isinstance(x, Node) else convert_to_tensor(x)


def _known_shape(x: Node, what: str) -> tuple:
    if x.shape is None:
        raise ValueError(f"{what}: the rank of '{x.name}' is not known while the graph is "
                         "built (kernelgraph needs it)")
    return x.shape


def shape(input, name=None, out_type=int32) -> Node:  # noqa: A002 - TF's argument name
    """TF1's ``tf.shape``: the shape as a 1-D int32 tensor, computed at run time for the
    sizes the graph does not know (a placeholder's None)."""
    x = _node(input)
    dims = _known_shape(x, "tf.shape")
    out_type = D.as_dtype(out_type)
    if None not in dims:
        return constant_node(np.array(dims, dtype=out_type), name=name or "Shape",
                             location=user_location(2))
    parts = [dim_size(x, axis=i) if d is None else constant_node(np.array(d, D.int64))
             for i, d in enumerate(dims)]
    return ops.cast(ops.stack(parts, axis=0), dtype=out_type, name=name or "Shape")


def size(input, name=None, out_type=int32) -> Node:  # noqa: A002
    """TF1's ``tf.size``: the number of elements, an int32 scalar."""
    x = _node(input)
    dims = _known_shape(x, "tf.size")
    if None not in dims:
        return constant_node(np.array(int(np.prod(dims)), D.as_dtype(out_type)),
                             name=name or "Size", location=user_location(2))
    return ops.cast(ops.OPS["prod"](shape(x, out_type=int64)), dtype=D.as_dtype(out_type),
                    name=name or "Size")


def rank(input, name=None) -> Node:  # noqa: A002
    """TF1's ``tf.rank``: the number of dimensions, an int32 scalar."""
    dims = _known_shape(_node(input), "tf.rank")
    return constant_node(np.array(len(dims), D.int32), name=name or "Rank",
                         location=user_location(2))


def range(start, limit=None, delta=1, dtype=None, name="range") -> Node:  # noqa: A001
    """TF1's ``tf.range(start, limit, delta, dtype)``: int32 when every argument is an int,
    else float32 (or ``dtype``); ``tf.range(n)`` counts from 0."""
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    if any(isinstance(a, Node) for a in args):
        raise NotImplementedError("tf.range with tensor arguments is not implemented in "
                                  "kernelgraph: pass Python numbers")
    if delta == 0:
        raise ValueError("Requires delta != 0: 0")
    if dtype is None:
        dtype = int32 if all(isinstance(a, int | np.integer) for a in args) else float32
        if dtype is int32 and any(not _INT32.min <= int(a) <= _INT32.max for a in args):
            dtype = int64
    dtype = D.as_dtype(dtype)
    values = np.arange(start, limit, delta, dtype=np.float64 if dtype.kind == "f" else None)
    return constant_node(values.astype(dtype), name=name or "range",
                         location=user_location(2))


def unstack(value, num=None, axis=0, name="unstack") -> list:
    """TF1's ``tf.unstack``: the slices of ``value`` along ``axis``, a list of tensors."""
    x = _node(value)
    dims = _known_shape(x, "tf.unstack")
    if not -len(dims) <= axis < len(dims):
        raise ValueError(f"axis = {axis} not in [{-len(dims)}, {len(dims)})")
    axis %= len(dims)
    n = dims[axis] if num is None else num
    if n is None:
        raise ValueError(f"Cannot infer argument `num` from shape {TensorShape(dims)}")
    lead = (builtins.slice(None),) * axis
    return [x[(*lead, i)] for i in builtins.range(n)]


def stop_gradient(input, name=None) -> Node:  # noqa: A002
    """TF1's ``tf.stop_gradient``: ``input`` itself, through which no gradient flows."""
    return _stop_gradient_op(_node(input), name=name)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients="none") -> list:
    """TF1's ``tf.gradients`` (see :func:`kernelgraph.gradients`). As in TF1 an integer or
    boolean x gets None: no gradient flows into an integer tensor (``'zero'`` still gives
    its zeros)."""
    grads = _kg_gradients(ys, xs, grad_ys=grad_ys, name=name or "gradients",
                          stop_gradients=stop_gradients,
                          unconnected_gradients=unconnected_gradients)
    if getattr(unconnected_gradients, "value", unconnected_gradients) == "zero":
        return grads
    xs = list(xs) if isinstance(xs, list | tuple) else [xs]
    return [None if g is not None and not np.issubdtype(np.dtype(x.dtype), np.inexact)
            else g for x, g in zip(xs, grads)]


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False,
             gate_gradients=False, aggregation_method=None) -> list:
    """TF1's ``tf.hessians``: for each x, the second derivatives of sum(ys), of shape
    ``x.shape + x.shape`` (x's shape must be known)."""
    xs = list(xs) if isinstance(xs, list | tuple) else [xs]
    out = []
    for x in xs:
        dims = _known_shape(x, "tf.hessians")
        if None in dims:
            raise ValueError(f"tf.hessians needs the full shape of '{x.name}', got "
                             f"{TensorShape(dims)}")
        (g,) = _kg_gradients(ys, [x], name=name)
        if g is None:
            out.append(None)
            continue
        n = int(np.prod(dims))
        flat = ops.reshape(g, shape=(n,))
        rows = []
        for i in builtins.range(n):
            (row,) = _kg_gradients(flat[i], [x], name=name, unconnected_gradients="zero")
            rows.append(ops.reshape(row, shape=(n,)))
        out.append(ops.reshape(ops.stack(rows, axis=0), shape=dims + dims))
    return out


def placeholder_with_default(input, shape, name=None) -> Node:  # noqa: A002
    """TF1's ``tf.placeholder_with_default``: a constant that a feed may replace (any node
    may be fed in kernelgraph, as in TF1)."""
    x = _node(input)
    return ops.identity(x, name=name or "PlaceholderWithDefault")


def no_op(name=None) -> Node:
    """TF1's ``tf.no_op``: an Operation that does nothing (fetching it gives None)."""
    return group(name=name or "NoOp")


# -- sessions' configuration, control dependencies, odds and ends ----------------------------
class _Options:
    """A TF1 configuration message (``tf.ConfigProto(log_device_placement=True)``): its
    fields are kept and read back, and change nothing in kernelgraph."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({inner})"


class GPUOptions(_Options):
    """TF1's ``tf.GPUOptions`` (``allow_growth``, ``per_process_gpu_memory_fraction``)."""


class ConfigProto(_Options):
    """TF1's ``tf.ConfigProto``: accepted by ``tf.Session(config=...)``, changes nothing."""

    def __init__(self, gpu_options=None, **fields):
        super().__init__(gpu_options=gpu_options or GPUOptions(), **fields)


class RunOptions(_Options):
    """TF1's ``tf.RunOptions`` (accepted by ``Session.run(options=...)``)."""

    FULL_TRACE, NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE = 3, 0, 1, 2


class RunMetadata(_Options):
    """TF1's ``tf.RunMetadata`` (accepted by ``Session.run(run_metadata=...)``)."""


class UnconnectedGradients:
    """TF1's ``tf.UnconnectedGradients``: what ``tf.gradients`` gives for an x no y
    depends on."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """TF1's ``tf.AggregationMethod``: kernelgraph sums gradients exactly with every one."""

    ADD_N = DEFAULT = 0
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def control_dependencies(control_inputs):
    """TF1's ``tf.control_dependencies``: nodes made in the block run after
    ``control_inputs`` (``with tf.control_dependencies([update]): y = tf.identity(x)``)."""
    return get_default_graph().control_dependencies(control_inputs)


def is_tensor(x) -> bool:
    """TF1's ``tf.is_tensor``."""
    return isinstance(x, Node)


def tables_initializer(name="init_all_tables") -> Node:
    """An Operation that does nothing: kernelgraph has no lookup tables."""
    return group(name=name)


def to_float(x, name="ToFloat") -> Node:
    """TF1's ``tf.to_float``: a cast to float32."""
    return ops.cast(_node(x), dtype=float32, name=name)


def to_int32(x, name="ToInt32") -> Node:
    """TF1's ``tf.to_int32``: a cast to int32."""
    return ops.cast(_node(x), dtype=int32, name=name)


def to_int64(x, name="ToInt64") -> Node:
    """TF1's ``tf.to_int64``: a cast to int64."""
    return ops.cast(_node(x), dtype=int64, name=name)


def to_double(x, name="ToDouble") -> Node:
    """TF1's ``tf.to_double``: a cast to float64."""
    return ops.cast(_node(x), dtype=float64, name=name)


def squared_difference(x, y, name=None) -> Node:
    """TF1's ``tf.squared_difference``: (x - y) ** 2."""
    d = ops.sub(_node(x), y)
    return ops.mul(d, d, name=name or "SquaredDifference")


def slice(input_, begin, size, name=None) -> Node:  # noqa: A001 - TF's name
    """TF1's ``tf.slice(input_, begin, size)`` (Python ints; a size of -1 runs to the end)."""
    x = _node(input_)
    index = tuple(builtins.slice(int(b), None if int(n) == -1 else int(b) + int(n))
                  for b, n in zip(begin, size))
    return x[index]


def matrix_transpose(a, name="matrix_transpose", conjugate=False) -> Node:
    """TF1's ``tf.matrix_transpose``: the last two axes swapped."""
    x = _node(a)
    rank_ = len(_known_shape(x, "tf.matrix_transpose"))
    perm = [*builtins.range(rank_ - 2), rank_ - 1, rank_ - 2]
    return ops.transpose(x, perm=perm, name=name)


def tile(input, multiples, name=None) -> Node:  # noqa: A002
    """TF1's ``tf.tile(input, multiples)`` (Python ints)."""
    reps = [int(m) for m in multiples]
    return shape_functions.repeat(_node(input), *reps)


def matvec(a, b, transpose_a=False, name=None) -> Node:
    """TF1's ``tf.linalg.matvec``: the matrix ``a`` (m, n) times the vector ``b`` (n,)."""
    a, b = _node(a), _node(b)
    if transpose_a:
        a = matrix_transpose(a)
    rows = _known_shape(a, "tf.linalg.matvec")[:-1]
    if len(rows) != 1 or len(_known_shape(b, "tf.linalg.matvec")) != 1:
        raise NotImplementedError("tf.linalg.matvec: kernelgraph takes a matrix and a vector")
    column = ops.matmul(a, ops.reshape(b, shape=(-1, 1)))
    return ops.reshape(column, shape=(-1,), name=name or "MatVec")


linalg = types.SimpleNamespace(
    matmul=tf_op(ops.matmul, "MatMul"), matvec=matvec, matrix_transpose=matrix_transpose,
    transpose=matrix_transpose, eye=lambda *a, **k: _eye(*a, **k))


def _eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None):
    arr = np.eye(num_rows, num_columns)
    if batch_shape is not None:
        arr = np.broadcast_to(arr, (*batch_shape, *arr.shape))
    return constant_node(arr.astype(D.as_dtype(dtype)), name=name or "eye",
                         location=user_location(3))


dtypes = types.SimpleNamespace(
    float16=float16, half=float16, float32=float32, float64=float64, double=float64,
    int8=int8, int16=int16, int32=int32, int64=int64, uint8=uint8, bool=D.bool_,
    string=string, as_dtype=D.as_dtype, DType=DType)


# The unary math TF1 spells as PyTorch does (the ops of kernelgraph.ops.elementwise_math).
sin, cos, tan = tf_op(ops.sin, "Sin"), tf_op(ops.cos, "Cos"), tf_op(ops.tan, "Tan")
floor, ceil = tf_op(ops.floor, "Floor"), tf_op(ops.ceil, "Ceil")
round = tf_op(ops.round, "Round")  # noqa: A001 - TF's name
rsqrt, reciprocal = tf_op(ops.rsqrt, "Rsqrt"), tf_op(ops.reciprocal, "Reciprocal")
asin, acos, atan = tf_op(ops.asin, "Asin"), tf_op(ops.acos, "Acos"), tf_op(ops.atan, "Atan")
sinh, cosh = tf_op(ops.sinh, "Sinh"), tf_op(ops.cosh, "Cosh")
log1p, expm1 = tf_op(ops.log1p, "Log1p"), tf_op(ops.expm1, "Expm1")


__all__ = [
    "Dimension", "TensorShape", "as_shape", "constant", "convert_to_tensor", "double",
    "float16", "gradients", "half", "hessians", "int16", "int8", "no_op",
    "placeholder_with_default", "range", "rank", "shape", "size", "stop_gradient", "string",
    "uint8", "unknown_shape", "unstack",
    "Variable", "UnconnectedGradients", "GraphKeys", "add_to_collection", "add_to_collections",
    "get_collection",
    "get_collection_ref", "AggregationMethod", "ConfigProto", "GPUOptions", "RunMetadata",
    "RunOptions",
    "control_dependencies", "dtypes", "is_tensor", "linalg", "local_variables",
    "local_variables_initializer", "trainable_variables", "matrix_transpose", "slice",
    "squared_difference",
    "tables_initializer", "tile", "to_double", "to_float", "to_int32", "to_int64",
    "sin", "cos", "tan", "floor", "ceil", "round", "rsqrt", "reciprocal", "asin", "acos",
    "atan", "sinh", "cosh", "log1p", "expm1",
]
