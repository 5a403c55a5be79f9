"""Every op card, checked: every registered op (``kg.ops.OPS``) x every device x eager,
static and plain arrays.

A card must be complete (:func:`test_card_is_complete`):

- its traits come from ``kg.ops.TRAITS``; a ``fusable`` op has a scalar body, a
  ``shape_only`` op names its ``shape_inputs``, and no op is both a ``view`` and ``fresh``;
- it has a NumPy ``reference`` unless its traits say there is nothing to compare with: a
  ``stateful`` op is run by the session (a feed, a variable's store), a ``control`` op runs
  traced sub-graphs, a ``random`` op draws numbers no formula gives;
- it has a CUDA kernel (``op.kernel(kg.device("cuda"))`` is a callable) unless it is
  ``host_only`` (control flow, which its callers place on the host) or ``stateful``.

Its numbers must be right (:func:`test_numbers`): :data:`SAMPLES` holds small inputs for
every op (float64 where it is differentiable, in safe domains: away from kinks, ties and
poles). On the CPU the eager result matches ``op.reference`` in value, shape and dtype, plain
arrays and a static graph give the eager bits, and for a differentiable op the eager
``backward()`` of ``sum(op(x) * w)`` gives ``kg.gradients``' bits and matches central finite
differences of the reference (``tests.test_ops.check_op``). On CUDA (numba's simulator
without a GPU, see ../conftest.py) the results and gradients stay on the device and agree
with the CPU's (``tests.test_ops.check_on_cuda``). The ops with ``stateful``, ``control`` or
``random`` take no sample; each has a behavioural check of its own instead (listed in
:data:`BEHAVIOURS`).

Its traits must hold (``test_*_trait``): a ``fusable`` op fuses with a fusable neighbour into
a :class:`kg.ops.FusedOp` that computes the optimize=False bits; a ``fresh`` op's array is
taken over in place by an elementwise consumer when nothing else reads it; a ``view`` op's
output shares memory with its input 0 on the CPU, and the memory planner keeps that input
alive while the view is (no value written into it early); a ``shape_only`` op gives the same
result whatever the values of its ``shape_inputs``.

A new op fails here until its card says all this: add the missing trait, reference, CUDA
kernel or sample that the failure names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.kernels import batch_norm as batch_norm_kernels
from kernelgraph.ops import OPS, TRAITS, FusedOp
from kernelgraph.ops.indexing import normalize_index
from tests import test_ops
from tests.test_ops import (
    F32,
    F64,
    FD_TOL,
    FLOATS,
    assert_same,
    check_on_cuda,
    check_op,
    finite_difference_grad,
    weights,
)
from tests.test_ops_tfmath import SAMPLING_OPS, check_sampling_ops
from tests.test_tensorboard import SUMMARY_OPS, check_summary_ops
from tests.test_tf_data import check_host_ops
from tests.test_tf_image import check_decode_image
from tests.test_tf_input import HOST_OPS as INPUT_HOST_OPS
from tests.test_tf_input import check_input_ops

NO_REFERENCE = ("stateful", "control", "random")  # traits that excuse a missing reference
NO_CUDA = ("host_only", "stateful")  # traits that excuse a missing CUDA kernel
CUDA = kg.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not CUDA, reason="no CUDA"))]


# -- samples ---------------------------------------------------------------------------------
@dataclass
class Sample:
    """Inputs of one call ``op(*args, **attrs)``. ``diff``: the inputs to differentiate
    (None: every float input the op does not read for its shape alone); ``no_grad``: why a
    differentiable op's gradient is not checked here."""

    args: tuple
    attrs: dict = field(default_factory=dict)
    diff: tuple | None = None
    no_grad: str = ""


def S(*args, diff=None, no_grad="", **attrs) -> Sample:
    return Sample(tuple(np.asarray(a) for a in args), attrs, diff, no_grad)


_rng = np.random.default_rng(20)


def u(*shape):
    """Values in (-1, 1), far from each other (no ties) with this seed."""
    return _rng.uniform(-1.0, 1.0, shape)


def away(*shape):
    """Values with |v| in (0.25, 1): away from the kinks of relu and abs and from 0."""
    return _rng.uniform(0.25, 1.0, shape) * _rng.choice([-1.0, 1.0], shape)


def pos(*shape):
    """Values in (0.5, 2): the domain of log, sqrt and pow's base."""
    return _rng.uniform(0.5, 2.0, shape)


DEVICE = object()  # stands for the device under test in a sample's attributes
_INDEX = normalize_index((slice(1, 3), slice(None, None, 2)))
_IDS = np.array([[0, 2], [3, 0]])
_POOL = {"kernel_size": 3, "stride": 2, "padding": 1}  # overlapping windows, with padding
_CONV = {"stride": 2, "padding": 1}
_SQUARE = u(2, 3, 3) + 2.0 * np.eye(3)  # well away from singular
_SPD = _SQUARE @ np.swapaxes(_SQUARE, -1, -2) + np.eye(3)
_SYM = np.array([[[2.0, 0.3, -0.5], [0.3, -1.0, 0.4], [-0.5, 0.4, 0.5]]])  # distinct eigenvalues
# fixed (not drawn, so the draws above and below stay as they were); distinct singular values
_TALL = np.array([[2.0, 0.3, -0.5], [0.1, -1.2, 0.4], [0.6, 0.2, 0.9], [-0.3, 0.5, 0.2]])
_WIDE = np.array([[1.5, -0.4, 0.2, 0.7], [0.3, 0.8, -0.6, 0.1]])

SAMPLES: dict[str, Sample] = {
    # elementwise: x (2, 3) against y (3,), so that gradients are summed back to y's shape
    "add": S(u(2, 3), u(3)), "sub": S(u(2, 3), u(3)), "mul": S(u(2, 3), u(3)),
    "div": S(u(2, 3), pos(3)), "pow": S(pos(2, 3), u(3)),
    "maximum": S(u(2, 3), u(3)), "minimum": S(u(2, 3), u(3)),
    "neg": S(u(2, 3)), "exp": S(u(2, 3)), "log": S(pos(2, 3)), "sqrt": S(pos(2, 3)),
    "tanh": S(u(2, 3)), "sigmoid": S(u(2, 3)), "softplus": S(3 * u(2, 3)),
    "relu": S(away(2, 3)), "abs": S(away(2, 3)), "sign": S(away(2, 3)),
    "tanh_grad": S(u(2, 3), u(2, 3)), "sigmoid_grad": S(pos(2, 3) / 2.5, u(3)),
    "relu_grad": S(away(2, 3), u(2, 3), diff=(1,)),  # piecewise constant in x
    "equal": S(np.array([[0.5, 1.0], [2.0, 0.5]]), np.array([0.5, 2.0])),
    "not_equal": S(np.array([[0.5, 1.0], [2.0, 0.5]]), np.array([0.5, 2.0])),
    "less": S(u(2, 3), u(3)), "less_equal": S(u(2, 3), u(3)),
    "greater": S(u(2, 3), u(3)), "greater_equal": S(u(2, 3), u(3)),
    "where": S(np.array([[True, False, True], [False, False, True]]), u(2, 3), u(3)),
    "cast": S(u(2, 3), dtype=kg.float32),
    "zeros_like": S(u(2, 3)), "ones_like": S(u(2, 3)), "identity": S(u(2, 3)),
    # reductions and the broadcasts that are their gradients
    "sum": S(u(3, 4), axis=1), "mean": S(u(3, 4), axis=0, keepdims=True),
    "max": S(u(3, 4), axis=1),
    "broadcast_reduced": S(u(3), u(3, 4), axis=1, mean=True),
    "sum_to_like": S(u(2, 3), u(1, 3)), "broadcast_like": S(u(3), u(2, 3)),
    # shapes
    "reshape": S(u(2, 3), shape=(3, 2)), "reshape_like": S(u(2, 3), u(6), diff=(0,)),
    "transpose": S(u(2, 3, 4), perm=(2, 0, 1)), "matrix_transpose": S(u(2, 3, 4)),
    "broadcast_to": S(u(3), shape=(2, 3)),
    "matmul": S(u(2, 2, 3), u(3, 4)),
    # convolution and pooling (NCHW)
    "conv2d": S(u(1, 2, 4, 4), u(3, 2, 2, 2), padding=1),
    "conv2d_backward_input": S(u(1, 3, 3, 3), u(3, 2, 2, 2), u(1, 2, 4, 4), diff=(0, 1),
                               **_CONV),
    "conv2d_backward_filter": S(u(1, 2, 4, 4), u(1, 3, 3, 3), u(3, 2, 2, 2), diff=(0, 1),
                                **_CONV),
    "max_pool2d": S(u(1, 2, 4, 4), **_POOL),
    "max_pool2d_backward": S(u(1, 2, 2, 2), u(1, 2, 4, 4), diff=(0,), **_POOL),
    "max_pool2d_select": S(u(1, 2, 4, 4), u(1, 2, 4, 4), diff=(0,), **_POOL),
    "avg_pool2d": S(u(1, 2, 4, 4), **_POOL),
    "avg_pool2d_backward": S(u(1, 2, 2, 2), u(1, 2, 4, 4), diff=(0,), **_POOL),
    "global_avg_pool2d": S(u(1, 2, 3, 3)),
    # image resizing (NHWC; tests/test_tf_image.py checks every sampling rule against TF)
    "resize": S(u(1, 3, 4, 2), size=(5, 3), half_pixel=True),
    "resize_backward": S(u(1, 5, 3, 2), u(1, 3, 4, 2), diff=(0,), size=(5, 3), half_pixel=True),
    # indexing and joining
    "getitem": S(u(3, 4), index=_INDEX),
    "getitem_grad": S(u(2, 2), u(3, 4), diff=(0,), index=_INDEX),
    "gather": S(u(4, 3), _IDS, axis=0),
    "gather_grad": S(u(2, 2, 3), _IDS, u(4, 3), diff=(0,), axis=0),
    "pad": S(u(2, 3), paddings=((1, 0), (0, 2)), value=0.5),
    "one_hot": S(np.array([0, 2, 1]), depth=3),
    "clip": S(away(2, 3), min=-0.5, max=0.5),
    "argmax": S(u(3, 4), axis=1),
    "concat": S(u(2, 3), u(1, 3), axis=0),
    "concat_slice": S(u(3, 3), u(2, 3), u(1, 3), diff=(0,), index=1, axis=0),
    "stack": S(u(2, 3), u(2, 3), axis=1),
    "split_piece": S(u(4, 3), sizes=(1, 3), index=1, axis=0),
    "split_grad": S(u(3, 3), u(4, 3), diff=(0,), sizes=(1, 3), index=1, axis=0),
    # nn
    "softmax": S(u(2, 3), axis=-1), "log_softmax": S(u(2, 3), axis=0),
    "softmax_cross_entropy": S(u(3, 4), np.array([0, 3, 1])),
    "softmax_cross_entropy_grad": S(
        u(3, 4), np.array([0, 3, 1]), u(3),
        no_grad="its gradient refuses: the second derivative of softmax_cross_entropy"),
    "rnn_tanh_cell": S(u(2, 3), u(2, 4), u(4, 3), u(4, 4), u(4), u(4)),
    "lstm_cell": S(u(2, 3), u(2, 2), u(2, 2), u(8, 3), u(8, 2), u(8), u(8)),
    "rnn_tanh_sequence": S(u(3, 2, 3), u(2, 4), u(4, 3), u(4, 4), u(4), u(4), np.array([3, 1])),
    "rnn_tanh_sequence_grad": S(u(4, 2, 4), u(4, 2, 4), u(4, 4), np.array([3, 1])),
    # devices and the host
    "to_device": S(u(2, 3), device=DEVICE),
    "dim_size": S(u(2, 3), axis=1),
    # PyTorch's and TF1's ops
    "setitem": S(u(3, 4), u(2), index=_INDEX),  # x[1:3, ::2] = value (broadcast along rows)
    "sin": S(u(2, 3)), "cos": S(u(2, 3)), "tan": S(u(2, 3)), "asin": S(0.9 * u(2, 3)),
    "acos": S(0.9 * u(2, 3)), "atan": S(2 * u(2, 3)), "sinh": S(u(2, 3)), "cosh": S(u(2, 3)),
    "erf": S(u(2, 3)), "reciprocal": S(away(2, 3)), "rsqrt": S(pos(2, 3)),
    "log2": S(pos(2, 3)), "log10": S(pos(2, 3)), "log1p": S(u(2, 3)), "expm1": S(u(2, 3)),
    "floor": S(3 * u(2, 3)), "ceil": S(3 * u(2, 3)), "trunc": S(3 * u(2, 3)),
    "round": S(3 * u(2, 3)), "atan2": S(u(2, 3), u(3)),
    "min": S(u(3, 4), axis=1), "prod": S(u(3, 4), axis=0, keepdims=True),
    "all": S(np.array([[1.0, 0.0, 2.0], [3.0, 1.0, -1.0]]), axis=1),
    "any": S(np.array([[0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]), axis=1),
    "argmin": S(u(3, 4), axis=1),
    "max_dim": S(u(3, 4), np.array([2, 0, 3]), axis=1, diff=(0,)),
    "min_dim": S(u(3, 4), np.array([[1, 0, 2, 2]]), axis=0, keepdims=True, diff=(0,)),
    "put_along_axis": S(u(3), np.array([2, 0, 3]), u(3, 4), axis=1, diff=(0,)),
    "cumsum": S(u(3, 4), axis=1),
    # PyTorch's index-along-a-dim cards (ops/torch_select.py); repeated indices accumulate
    "gather_dim": S(u(3, 4), np.array([[0, 3], [2, 2], [1, 0]]), axis=1, diff=(0,)),
    "topk_values": S(u(3, 4), np.array([[3], [0], [1]]), axis=1, diff=(0,)),
    "median_dim": S(u(3, 4), np.array([2, 0, 3]), axis=1, keepdims=False, diff=(0,)),
    "median_all": S(u(3, 4), np.array(5), diff=(0,)),
    "scatter_add_dim": S(u(2, 4), np.array([[1, 0, 2, 0], [0, 2, 1, 1]]), u(3, 4), axis=0,
                         diff=(0,)),
    "scatter_dim": S(u(3, 4), np.array([[1, 0, 2, 0], [0, 2, 1, 2]]), u(2, 4), axis=0,
                     diff=(0, 2)),
    "scatter_value": S(u(3, 4), np.array([[3], [0], [1]]), axis=1, value=0.5),
    "topk_indices": S(u(3, 5), k=2, axis=1, largest=True),
    "tril": S(u(2, 3, 4), diagonal=1), "triu": S(u(3, 4), diagonal=-1),
    "bitwise_and": S(np.array([[12, 10, -1], [7, 0, 5]]), np.array([10, 6, 5])),
    "bitwise_or": S(np.array([[12, 10, -1], [7, 0, 5]]), np.array([10, 6, 5])),
    "bitwise_xor": S(np.array([[True, False, True]]), np.array([True, True, False])),
    "floor_divide": S(3 * u(2, 3), away(3)), "remainder": S(3 * u(2, 3), away(3)),
    "clone": S(u(2, 3)),
    "stop_gradient": S(u(2, 3)),
    # TF1's matrix functions and selection (ops/matrix.py, ops/selection.py)
    "matrix_determinant": S(_SQUARE), "matrix_inverse": S(_SQUARE),
    "matrix_solve": S(_SQUARE, u(2, 3, 2)),
    "cholesky": S(_SPD),
    "eigh_values": S(_SYM), "eigh_vectors": S(_SYM),
    "svd_u": S(_TALL), "svd_v": S(_WIDE), "svd_s": S(np.stack([_TALL[:3], _TALL[1:]])),
    "top_k_indices": S(u(3, 5), k=3),
    "unique_positions": S(np.array([4.0, 1.0, 4.0, 7.0, 1.0])),
    "unique_inverse": S(np.array([4.0, 1.0, 4.0, 7.0, 1.0]), sorted=True),
    "edit_distance": S(np.array([[0, 0], [0, 1], [1, 0]]), np.array([1, 2, 5]), np.array([2, 2]),
                       np.array([[0, 0], [1, 0], [1, 1]]), np.array([1, 5, 6]), np.array([2, 2]),
                       normalize=True),
}
# Transposed convolution and the separable resampling maps (ops/conv_transpose.py,
# ops/interpolate.py), drawn from a generator of their own so the samples above stay as they
# were.
_r = np.random.default_rng(30)
_RESAMPLE = {  # op name -> attributes; each backward op takes (g, like) with the same ones
    "upsample_nearest2d": {"size": (5, 3), "scales": None},
    "upsample_bilinear2d": {"size": (5, 3), "align_corners": False, "scales": None},
    "reflection_pad2d": {"padding": (2, 1, 0, 2)},
    "replication_pad2d": {"padding": (1, 0, 2, 1)},
    "adaptive_avg_pool2d": {"output_size": (2, 3)},
}
_RESAMPLED = {"upsample_nearest2d": (5, 3), "upsample_bilinear2d": (5, 3),
              "reflection_pad2d": (5, 7), "replication_pad2d": (6, 5),
              "adaptive_avg_pool2d": (2, 3)}
SAMPLES["conv_transpose2d"] = S(_r.uniform(-1, 1, (1, 2, 3, 3)), _r.uniform(-1, 1, (2, 3, 2, 2)),
                                _r.uniform(-1, 1, (3,)), stride=2, padding=1, output_padding=1)
# grid_sample: points inside and outside the image, none on a pixel edge.
_GRID = np.array([[[[-1.1, -0.93], [-0.61, 0.27]], [[0.37, -0.45], [0.83, 1.07]]]])
SAMPLES["grid_sample"] = S(_r.uniform(-1, 1, (1, 2, 3, 4)), _GRID, mode="bilinear",
                           align_corners=False)
SAMPLES["grid_sample_backward_input"] = S(_r.uniform(-1, 1, (1, 2, 2, 2)),
                                          _r.uniform(-1, 1, (1, 2, 3, 4)), _GRID,
                                          mode="nearest", align_corners=True)
SAMPLES["grid_sample_backward_grid"] = S(_r.uniform(-1, 1, (1, 2, 2, 2)),
                                         _r.uniform(-1, 1, (1, 2, 3, 4)), _GRID,
                                         mode="bilinear", align_corners=True)
for _name, _attrs_ in _RESAMPLE.items():
    SAMPLES[_name] = S(_r.uniform(-1, 1, (1, 2, 3, 4)), **_attrs_)
    SAMPLES[_name + "_backward"] = S(_r.uniform(-1, 1, (1, 2, *_RESAMPLED[_name])),
                                     _r.uniform(-1, 1, (1, 2, 3, 4)), diff=(0,), **_attrs_)
# batch_norm: its statistics must be those of its x (its rule is the total derivative through
# them; the reference recomputes them), so they are not differentiated here.
_bn = np.random.default_rng(31)  # its own draws: the samples above keep theirs
_BN_X, _BN_G = _bn.uniform(-1, 2, (3, 2, 4)), _bn.uniform(-1, 1, (3, 2, 4))
_BN_W, _BN_B = _bn.uniform(0.5, 2, 2), _bn.uniform(-1, 1, 2)
_BN_S = batch_norm_kernels.reference_stats(_BN_X, 1e-5)
SAMPLES["batch_norm_stats"] = S(_BN_X, eps=1e-5)
SAMPLES["batch_norm"] = S(_BN_X, _BN_S, _BN_W, _BN_B, eps=1e-5, training=True, diff=(0, 2, 3))
_BN_REFUSED = "second derivatives through batch_norm are composite ops (eager) or refused"
SAMPLES["batch_norm_grad_sums"] = S(_BN_G, _BN_X, _BN_S, no_grad=_BN_REFUSED)
SAMPLES["batch_norm_grad_input"] = S(_BN_G, _BN_X, _BN_S, _BN_W,
                                     batch_norm_kernels.reference_grad_sums(_BN_G, _BN_X, _BN_S),
                                     training=True, no_grad=_BN_REFUSED)


def _ops_with(*traits) -> list[str]:
    return [name for name, op in OPS.items() if op.traits & set(traits)]


def _attrs(sample: Sample, device: str) -> dict:
    return {k: (kg.device(device).name if v is DEVICE else v) for k, v in sample.attrs.items()}


# -- the card --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(OPS))
def test_card_is_complete(name):
    op = OPS[name]
    unknown = sorted(op.traits - TRAITS.keys())
    assert not unknown, f"op {name!r}: unknown traits {unknown}; the traits are {list(TRAITS)}"
    if "fusable" in op.traits:
        assert callable(op.scalar), f"op {name!r} is fusable: give its card scalar=<body>"
    if "shape_only" in op.traits:
        assert op.shape_inputs, f"op {name!r} is shape_only: name its shape_inputs=(...)"
    assert not {"view", "fresh"} <= op.traits, (
        f"op {name!r} cannot be both a view and fresh: the planner would write into the "
        "array it shares with its input")
    if not op.traits & set(NO_REFERENCE):
        assert callable(op.reference), (
            f"op {name!r} has no NumPy reference: add reference=<function> to its define(...) "
            "(kernelgraph/kernels/reference*.py), or a trait saying why it cannot have one "
            f"({', '.join(NO_REFERENCE)})")
    if not op.traits & set(NO_CUDA):
        kernel = op.cuda
        if CUDA:
            try:
                kernel = op.kernel(kg.device("cuda"))
            except NotImplementedError:
                kernel = None
        assert callable(kernel), (
            f"op {name!r} has no CUDA kernel: add cuda=lambda k: <forward over "
            f"kernelgraph.kernels.cuda> to its define(...), or a trait saying why it runs "
            f"without one ({', '.join(NO_CUDA)})")


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_is_exercised(name):
    op = OPS[name]
    if op.traits & set(NO_REFERENCE):
        assert name in BEHAVIOURS, (f"op {name!r} ({', '.join(sorted(op.traits))}) has no "
                                    "behavioural check: add one to tests/test_op_cards.py "
                                    "and its name to BEHAVIOURS")
    else:
        assert name in SAMPLES or name in CUSTOM, (
            f"add a sample for op {name!r} to SAMPLES in tests/test_op_cards.py")


def test_the_tables_name_registered_ops():
    for table in (SAMPLES, CUSTOM, BEHAVIOURS):
        assert not set(table) - set(OPS), f"not ops: {sorted(set(table) - set(OPS))}"


# -- numbers ---------------------------------------------------------------------------------
_CPU: dict[str, tuple] = {}  # op name -> (args, diff, output, gradients), for the CUDA checks


def _diff(op, sample: Sample, args, out_dtype) -> tuple:
    if op.grad is None or sample.no_grad or out_dtype not in FLOATS:
        return ()
    diff = sample.diff
    if diff is None:
        diff = [i for i in range(len(args)) if i not in op.shape_inputs]
    return tuple(i for i in diff if args[i].dtype in FLOATS)


def _on_cpu(name: str, monkeypatch) -> tuple:
    """check_op's CPU checks of op ``name`` on its sample (once per op), and its results."""
    if name not in _CPU:
        op, sample = OPS[name], SAMPLES[name]
        args, attrs = list(sample.args), _attrs(sample, "cpu")
        expected = np.asarray(op.reference(*args, **attrs))
        diff = _diff(op, sample, args, expected.dtype)
        assert diff or op.grad is None or sample.no_grad, (
            f"{name} is differentiable: give it a float sample (or no_grad= saying why its "
            "gradient is not checked here)")
        monkeypatch.setattr(test_ops, "CUDA", False)  # this module runs CUDA checks itself
        out, grads = check_op(lambda *t: op(*t, **attrs), lambda *a: op.reference(*a, **attrs),
                              args, diff=diff, out_dtype=expected.dtype)
        if sample.no_grad:
            with pytest.raises(NotImplementedError):
                t = [kg.tensor(a, requires_grad=a.dtype in FLOATS) for a in args]
                op(*t, **attrs).sum().backward()
        _CPU[name] = (args, diff, out, grads)
    return _CPU[name]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_numbers(name, device, monkeypatch):
    args, diff, out, grads = _on_cpu(name, monkeypatch)
    if device == "cpu":
        return
    op, attrs = OPS[name], _attrs(SAMPLES[name], device)
    if "host_only" in op.traits:
        _host_only_on_cuda(op, args, attrs, out)
        return
    check_on_cuda(lambda *t: op(*t, **attrs), args, diff, out, grads,
                  weights(out.shape, out.dtype))


def _host_only_on_cuda(op, args, attrs, cpu_out):
    """A host op reading values that live on the GPU: its callers place it on the host
    (``with kg.device("cpu")``) and the graph copies its inputs there."""
    dev = kg.device("cuda")
    with kg.Graph().as_default() as g:
        with dev:
            phs = [kg.placeholder(a.dtype, shape=a.shape) for a in args]
        with kg.device("cpu"):
            node = op(*phs, **attrs)
    assert node.device.type == "cpu" and phs[0].device == dev
    with kg.Session(g) as sess:
        assert_same(sess.run(node, dict(zip(phs, args))), cpu_out, f"{op.name} on the host")


# -- ops checked by what they do -------------------------------------------------------------
def _const(device):
    op, value = OPS["const"], u(2, 3)
    assert op.reference is not None, "const has no reference (see test_card_is_complete)"
    want = op.reference(value=value)
    assert_same(op.forward(value=value), want, "const's forward")
    if device == "cpu" or op.cuda is not None:
        with kg.device(device):
            t = op(value=value)
        assert t.device == kg.device(device)
        assert_same(t.cpu().numpy(), want, "eager const")
    with kg.Graph().as_default() as g, kg.device(device):
        node = kg.constant(value)
    assert node.op is op and node.device == kg.device(device)
    with kg.Session(g) as sess:
        assert_same(sess.run(node), want, "static const")


def _output(device):
    """``output`` picks one item of a cond node's tuple value: its reference on the tuple the
    session computes gives the items the session fetches, and gradients flow through it."""
    x0, w = u(3), weights((3,), F64)
    with kg.Graph().as_default() as g, kg.device(device):
        x, p = kg.placeholder(kg.float64, shape=[3]), kg.placeholder(kg.bool_, shape=[])
        items = kg.cond(p, lambda: [x * 2.0, x + 1.0], lambda: [x * 3.0, x - 1.0])
        tuple_node = items[0].inputs[0]
        grad = kg.gradients(kg.sum(items[0] * kg.constant(w)), [x])[0]
    assert all(i.op is OPS["output"] for i in items)
    with kg.Session(g) as sess:
        for pred, want in ((True, [x0 * 2, x0 + 1]), (False, [x0 * 3, x0 - 1])):
            feed = {x: x0, p: pred}
            results, *values, dx = sess.run([tuple_node, *items, grad], feed)
            for k, (v, node) in enumerate(zip(values, items)):
                assert_same(OPS["output"].reference(results, **node.attrs), v, f"output {k}")
                np.testing.assert_allclose(v, want[k], rtol=1e-15)
            np.testing.assert_allclose(dx, w * (2 if pred else 3), rtol=1e-15)


CUSTOM = {"const": _const, "output": _output}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CUSTOM))
def test_custom(name, device):
    CUSTOM[name](device)


def _cond_and_while(device):
    """cond runs the branch its predicate picks; while_loop runs its body while its
    condition holds; their gradients (while_grad for the loop) match finite differences."""
    x0 = pos(3)
    with kg.Graph().as_default() as g, kg.device(device):
        x, p = kg.placeholder(kg.float64, shape=[3]), kg.placeholder(kg.bool_, shape=[])
        y = kg.cond(p, lambda: x * x, lambda: kg.exp(x))
        _, cube = kg.while_loop(lambda i, c: i < 3, lambda i, c: (i + 1, c * x),
                                [kg.constant(0), kg.ones_like(x)])
        grads = kg.gradients(kg.sum(y) + kg.sum(cube), [x])
    ops = {n.op.name for n in g.nodes}
    assert {"cond", "while_loop", "while_grad"} <= ops, ops
    with kg.Session(g) as sess:
        for pred in (True, False):
            got_y, got_cube, dx = sess.run([y, cube, grads[0]], {x: x0, p: pred})
            np.testing.assert_allclose(got_y, x0 * x0 if pred else np.exp(x0), rtol=1e-14)
            np.testing.assert_allclose(got_cube, x0 ** 3, rtol=1e-14)
            numeric = finite_difference_grad(
                lambda a, pred=pred: np.sum(a * a if pred else np.exp(a)) + np.sum(a ** 3),
                [x0], 0)
            np.testing.assert_allclose(dx, numeric, **FD_TOL)


def _variables(device):
    """placeholder, variable, assign, assign_add, assign_sub and no_op (the initializer),
    run by the session."""
    start, v = u(3), u(3)
    with kg.Graph().as_default() as g, kg.device(device):
        x = kg.placeholder(kg.float64, shape=[3])
        w = kg.Variable(start)
        init = kg.global_variables_initializer()
        add, sub, put = w.assign_add(x), w.assign_sub(x * 2.0), w.assign(x)
    used = {n.op.name for n in (x, w, init, add, sub, put)}
    assert used == {"placeholder", "variable", "no_op", "assign", "assign_add", "assign_sub"}
    with kg.Session(g) as sess:
        sess.run(init)
        assert_same(sess.run(w), start, "initial value")
        np.testing.assert_allclose(sess.run(add, {x: v}), start + v, rtol=1e-15)
        np.testing.assert_allclose(sess.run(sub, {x: v}), start - v, rtol=1e-15)
        assert_same(sess.run(put, {x: v}), v, "assign")
        assert_same(sess.run(w), v, "the variable after assign")


def _random(device):
    """Draws of the right shape, dtype, device and range; a static node's first draw is
    the eager one with the same seeds (kg.ops.random's streams)."""
    dev = kg.device(device)
    kg.random.seed(0)
    eager = [kg.random.normal((3, 4), seed=7, dtype=kg.float64, device=dev),
             kg.random.uniform((3, 4), low=2.0, high=3.0, seed=8, device=dev),
             kg.dropout(kg.ones((3, 4), device=dev), p=0.5, seed=9)]
    kg.random.seed(0)
    with kg.Graph().as_default() as g, dev:
        ones = kg.constant(np.ones((3, 4), np.float32))
        static = [kg.random.random_normal((3, 4), seed=7, dtype=kg.float64),
                  kg.random.random_uniform((3, 4), low=2.0, high=3.0, seed=8),
                  kg.dropout(ones, p=0.5, seed=9)]
    assert [n.op.name for n in static[:2]] + [static[2].inputs[1].op.name] == [
        "random_normal", "random_uniform", "dropout_mask"]
    with kg.Session(g) as sess:
        values = sess.run(static)
    for t, v, dt in zip(eager, values, (F64, F32, F32)):
        assert t.device == dev and t.shape == (3, 4) and t.dtype == dt, (t.device, t.dtype)
        assert_same(t.cpu().numpy(), v, "eager vs static draw")
    uniform, dropped = values[1], values[2]
    assert np.all((2.0 <= uniform) & (uniform < 3.0))
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 0 < np.count_nonzero(dropped) < 12


def _to_device_round_trip(device):
    """A value copied to ``device`` and back has the same bits, and its gradient comes back
    to the CPU leaf."""
    x0, w = u(2, 3), weights((2, 3), F64)
    x = kg.tensor(x0, requires_grad=True)
    there = kg.ops.to_device(x, device=kg.device(device).name)
    assert there.device == kg.device(device)
    back = kg.ops.to_device(there * 2.0, device="cpu")
    assert_same(back.detach().numpy(), x0 * 2.0, "round trip")
    (back * kg.tensor(w)).sum().backward()
    assert x.grad.device == kg.device("cpu")
    assert_same(x.grad.numpy(), w * 2.0, "gradient of the round trip")


BEHAVIOURS = {
    "cond": _cond_and_while, "while_loop": _cond_and_while, "while_grad": _cond_and_while,
    "placeholder": _variables, "variable": _variables, "assign": _variables,
    "assign_add": _variables, "assign_sub": _variables, "no_op": _variables,
    "random_normal": _random, "random_uniform": _random, "dropout_mask": _random,
    "to_device": _to_device_round_trip,
    "iterator_get_next": check_host_ops, "iterator_init": check_host_ops,
    "random_uniform_like": check_host_ops,
    **dict.fromkeys(SUMMARY_OPS, check_summary_ops),
    **dict.fromkeys(INPUT_HOST_OPS, check_input_ops),
    **dict.fromkeys(SAMPLING_OPS, check_sampling_ops),
    "decode_image": check_decode_image,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("check", sorted(set(BEHAVIOURS.values()), key=lambda f: f.__name__),
                         ids=lambda f: f.__name__.strip("_"))
def test_behaviour(check, device):
    check(device)


# -- traits ----------------------------------------------------------------------------------
def _graph(name, device, first=None):
    """A graph computing op ``name`` on placeholders of its sample (input 0 replaced by
    ``first(placeholder)`` if given): (graph, placeholders, the op's node, feed)."""
    op, sample = OPS[name], SAMPLES[name]
    with kg.Graph().as_default() as g, kg.device(device):
        phs = [kg.placeholder(a.dtype, shape=a.shape) for a in sample.args]
        ins = [first(phs[0]), *phs[1:]] if first is not None else phs
        node = op(*ins, **_attrs(sample, device))
    return g, phs, node, dict(zip(phs, sample.args))


def _unoptimized(g, fetches, feed):
    with kg.Session(g, optimize=False) as sess:
        return sess.run(fetches, feed)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", _ops_with("fusable"))
def test_fusable_trait(name, device):
    g, phs, node, feed = _graph(name, device)
    with g.as_default(), kg.device(device):
        after = kg.where(node, 1.5, -1.5) if node.dtype == np.bool_ else kg.mul(node, 1.5)
    with kg.Session(g) as sess:
        fused = [n for n in sess.explain(after, feed).after if isinstance(n.op, FusedOp)]
        got = sess.run(after, feed)
    assert any(node.name in n.op.members for n in fused), (
        f"op {name!r} is fusable but its node did not fuse with its consumer: "
        f"{[n.op.members for n in fused]}")
    assert_same(got, _unoptimized(g, after, feed), "fused vs optimize=False")


@pytest.mark.parametrize("name", _ops_with("fresh"))
def test_fresh_trait(name):
    g, phs, node, feed = _graph(name, "cpu")
    with g.as_default():
        after = kg.equal(node, True) if node.dtype == np.bool_ else kg.neg(node)
    with kg.Session(g, skip_passes=("fuse", "simplify")) as sess:
        written = sess.explain(after, feed).memory.in_place_names
        got = sess.run(after, feed)
    assert f"{after.name} -> {node.name}" in written, (
        f"op {name!r} is fresh, but its consumer did not take over its array: {written}")
    assert_same(got, _unoptimized(g, after, feed), "in place vs optimize=False")


@pytest.mark.parametrize("name", [n for n in _ops_with("view") if n in SAMPLES])
def test_view_trait(name):
    op, sample = OPS[name], SAMPLES[name]
    args, attrs = list(sample.args), _attrs(sample, "cpu")
    assert np.shares_memory(op(*args, **attrs), args[0]), f"{name}: not a view of input 0"
    # The planner must keep the viewed array alive while the view is: if ``x2`` below
    # were written into ``e`` (whose last direct reader it is), ``v`` would change under it
    # before ``after`` reads it.
    g, phs, v, feed = _graph(name, "cpu", first=kg.exp)
    e = v.inputs[0]
    with g.as_default():
        x2 = kg.neg(e)
        after = kg.add(v, kg.sum(x2))
    with kg.Session(g, skip_passes=("fuse", "simplify")) as sess:
        explained = sess.explain(after, feed)
        got = sess.run(after, feed)
    order = [n.name for n in explained.after]
    assert order.index(v.name) < order.index(x2.name), order  # v is made before e dies
    written = [w for w in explained.memory.in_place_names
               if w.endswith(f"-> {v.name}") or w.endswith(f"-> {e.name}")]
    assert not written, f"{name}: the planner wrote into a view or the array it views: {written}"
    assert_same(got, _unoptimized(g, after, feed), "views vs optimize=False")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", _ops_with("shape_only"))
def test_shape_only_trait(name, device):
    op, sample = OPS[name], SAMPLES[name]
    args, attrs = list(sample.args), _attrs(sample, device)
    other = [a * 3.0 + 1.0 if i in op.shape_inputs else a for i, a in enumerate(args)]
    dev = kg.device(device)
    first, second = (op(*[kg.tensor(a, device=dev) for a in xs], **attrs) for xs in (args, other))
    assert_same(first.cpu().numpy(), second.cpu().numpy(), f"{name} with other shape inputs")
