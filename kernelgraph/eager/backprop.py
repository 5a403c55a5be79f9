"""Backward through the recorded eager graph: ``t.backward()``, ``kg.autograd.backward``
and ``kg.autograd.grad``. :class:`_EagerMode` shows eager tensors to the one reverse mode,
:func:`kernelgraph.autodiff.propagate`; the tensors' hooks run here."""

from __future__ import annotations

import operator
import threading

import numpy as np

from .. import autodiff, devices, trace
from .. import dtypes as D
from .. import ops as O
from ..ops.casting import scalar_type_name
from . import tensors, versions
from .dispatch import _value
from .grad_mode import _local
from .printing import Size, grad_fn_name
from .tensors import Tensor, _type_name, _wrap, source

ndarray = np.ndarray


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


class _EagerMode(autodiff.Mode):
    """Eager tensors as autodiff sees them: a rule computes on arrays (on tensors under
    ``create_graph``, so that it records the backward graph), and gradients gather under
    nodes and leaf tensors."""

    def __init__(self, create_graph: bool, check: bool = False):
        self.create_graph = create_graph
        self.check = check  # values may have been written since (see _InPlaceMode)
        self._sums = {}  # id(leaf) -> the array this backward sums the leaf's gradient in

    def value(self, node):
        return _as_input(node) if self.create_graph else node.value

    def inputs(self, node):
        needs, values, keys = [], [], []
        for x in node.inputs:
            if type(x) is Tensor:
                values.append(x if self.create_graph else x._array)
                needs.append(x.requires_grad)
                keys.append(None if not x.requires_grad else x if x._node is None else x._node)
            else:
                values.append(x)
                needs.append(False)
                keys.append(None)
        return needs, values, keys

    def same_shape(self, g, x):
        return g.shape == x.shape

    def on_gradient(self, node, g):
        if node.hooks or node.retained is not None:
            g = _node_hooks(node, g, self.create_graph)
        return g

    def accumulate(self, key, total, g):
        # A weight used many times (a tree network's layer at every node) gets a gradient per
        # use: after the first sum, which makes a new array, they are added into that array
        # in place (the same IEEE additions as the add op's, one allocation and dispatch
        # fewer per use). Only an array made here is written: a rule's result may be shared
        # (one bias gradient handed to two inputs).
        # (propagate hands over g in the leaf's shape and dtype.)
        if type(key) is Tensor and not self.create_graph:
            if self._sums.get(id(key)) is total and type(g) is ndarray:
                return np.add(total, g, out=total)
            total = O.add(total, g)
            if type(total) is ndarray:
                self._sums[id(key)] = total
            return total
        return O.add(total, g)

    def finish(self, grads: dict) -> None:
        """After the walk: add what a mode kept aside to ``grads`` (see eager/sinks.py)."""


class _InPlaceMode(_EagerMode):
    """The walk once in-place ops ran: a node sees each input tensor as it was when the node
    was recorded (an in-place op since may have given it a new node: :func:`.tensors.source`),
    and (``check``) refuses to run a rule that reads a value written since."""

    def inputs(self, node):
        needs, values, keys = super().inputs(node)
        for i, x in enumerate(node.inputs):
            if type(x) is Tensor:
                made_by, needs[i] = source(x, node.seq)
                keys[i] = None if not needs[i] else x if made_by is None else made_by
        if self.check:
            check_saved(node, needs)
        return needs, values, keys


# Modes that speed up the walk through particular ops register here from their own modules
# (eager/sinks.py: an RNN's weight gradients summed in one product): ``(rules, Mode,
# in-place Mode)``, taken for a walk that holds a node whose op's gradient rule is in
# ``rules``. The general walk runs none of their code.
MODES: list = []
_RULE = operator.attrgetter("op.grad")


def register_mode(rules, mode, inplace_mode) -> None:
    """Walk with ``mode`` (``inplace_mode`` after in-place ops) whenever a node's gradient
    rule is one of ``rules`` (and no backward graph is recorded)."""
    MODES.append((rules, mode, inplace_mode))


def _mode(order, create_graph: bool) -> _EagerMode:
    """The Mode of a walk over ``order``: :class:`_EagerMode`, :class:`_InPlaceMode` once
    in-place ops ran, or one of :data:`MODES`."""
    written = bool(order) and versions.last_write >= order[-1].seq
    inplace = written or tensors.rebased
    mode = _InPlaceMode if inplace else _EagerMode
    for rules, special, special_inplace in MODES:
        if not create_graph and not rules.isdisjoint(map(_RULE, order)):
            mode = special_inplace if inplace else special
    return mode(create_graph, written)


def _as_input(node) -> Tensor:
    # The output as a tensor of the graph being differentiated, so that a rule that
    # reads it (tanh's 1 - y**2) is differentiated through it too, as PyTorch's saved
    # result is: d2/dx2 tanh(x) is -2 y (1 - y**2), not 0.
    out = _wrap(node.value)
    out._node = node
    out.requires_grad = True
    return out


def _node_hooks(node, g, create_graph):
    """A non-leaf's hooks run on its gradient, then ``retain_grad`` keeps it."""
    if node.hooks:
        g = _run_hooks(node.hooks, g, create_graph)
    if node.retained is not None:
        owner = node.retained()
        if owner is not None:
            with _ACCUMULATING:
                owner._grad = _as_grad(g, owner.grad, create_graph)
    return g


def _run_hooks(hooks, g, create_graph):
    for hook in hooks:
        replaced = hook(g if create_graph else _wrap(g))
        if replaced is not None:
            _check_hook_result(hook, replaced, g._array if create_graph else g)
            g = replaced if create_graph else replaced._array
    return g


def _kind(data) -> str:
    """'float32' for a host array, 'cuda:0 float32' for a device one (a hook's message)."""
    where = devices.device_of(data)
    return data.dtype.name if where.type == "cpu" else f"{where} {data.dtype.name}"


def _check_hook_result(hook, replaced, g) -> None:
    """A hook may replace a gradient only by a tensor of its dtype, device and shape (as in
    PyTorch, whose words these are; 'Tensor' where PyTorch still says 'Variable')."""
    if not isinstance(replaced, Tensor):
        raise TypeError(f"expected Tensor, but hook returned '{_type_name(replaced)}'")
    new = replaced._array
    name = getattr(hook, "__name__", "<unknown>")
    if new.dtype != g.dtype or devices.device_of(new) != devices.device_of(g):
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_kind(g)} got "
                           f"{_kind(new)})")
    if new.shape != g.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _as_grad(g, previous, create_graph, given=None):
    """The new ``.grad``: ``g`` itself the first time (:func:`_first_grad`), else
    :func:`_added_grad`."""
    if previous is None:
        return _first_grad(g, create_graph, given)
    return _added_grad(g, previous, create_graph)


def _first_grad(g, create_graph, given):
    if create_graph:
        return g
    # A gradient array may be shared (add's rule hands the same array to both inputs; a
    # view's is a view), and .grad is added into in place later: such a one is copied.
    if type(g) is ndarray and (g.base is not None or not g.flags.writeable):
        g = g.copy()
    elif given is not None:
        if id(g) in given:
            g = g.copy() if type(g) is ndarray else O.cast(g, dtype=D.as_dtype(g.dtype))
        given[id(g)] = g
    return _wrap(g)


def _added_grad(g, previous, create_graph):
    """As PyTorch's AccumulateGrad: the sum written into the old gradient tensor (so
    ``g = w.grad`` taken earlier sees it), except under ``create_graph`` or where the old
    one requires grad, when the sum is a new tensor that records how it was made."""
    if create_graph or previous.requires_grad:
        return previous + g
    old = previous._array
    total = O.add(old, g)
    if type(old) is ndarray and old.flags.writeable and total.dtype == old.dtype:
        np.copyto(old, total)
    elif devices.is_cuda_array(old) and total.dtype == old.dtype:
        old.copy_to_device(total)
    else:
        previous._array = total
    return previous


# Held while a gradient is added into ``.grad``: two threads' backward into one leaf then
# each add to the other's sum instead of both reading the old one.
_ACCUMULATING = threading.Lock()
_SEQ = operator.attrgetter("seq")


def _reachable(roots):
    """The recorded nodes ``roots`` depend on, latest first (creation order is a topological
    order); a node that an earlier backward freed is refused."""
    rebased = tensors.rebased  # (then a node sees its inputs' old nodes: see source)
    order, seen, stack = [], set(), [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.freed:
            raise RuntimeError(_FREED)
        order.append(node)
        for x in node.inputs:
            if type(x) is Tensor:
                made_by = source(x, node.seq)[0] if rebased else x._node
                if made_by is not None:
                    stack.append(made_by)
    order.sort(key=_SEQ, reverse=True)
    return order


def _towards(order, inputs):
    """``autograd.grad``'s walk, as PyTorch's engine runs it: the nodes of ``order`` (latest
    first) on a path to one of ``inputs`` (nothing beyond them runs: no rule, no hook), the
    ids of the input nodes, whose gradients are kept (an input may also lead to an earlier
    one: ``t = 2 * x``, inputs ``[x, t]``), and those of them that lead to no other input."""
    targets = {id(x._node if x._node is not None else x) for x in inputs}
    leads, ends = set(), set()
    def leads_on(x, seq):
        made_by, requires_grad = source(x, seq)
        return requires_grad and (id(x) in targets if made_by is None else id(made_by) in leads)

    for node in reversed(order):  # earliest first: a node's inputs are decided before it
        onward = any(type(x) is Tensor and leads_on(x, node.seq) for x in node.inputs)
        if onward or id(node) in targets:
            leads.add(id(node))
            if not onward:
                ends.add(id(node))
    keep = frozenset(i for i in targets if i in leads)
    return [n for n in order if id(n) in leads], keep, frozenset(ends)


def _seeds(tensors, grad_tensors, create_graph) -> dict:
    """Where ``autograd.backward`` and ``autograd.grad`` start: ``{id(key): (key,
    gradient)}`` of every output (see :func:`_seed`)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor | ndarray | float | int):
        grad_tensors = [grad_tensors]
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    grads = {}
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        key, g = _seed(t, g, i, create_graph)
        prev = grads.get(id(key))
        grads[id(key)] = (key, g if prev is None else prev[1] + g)
    return grads


def _seed(t, g, i, create_graph) -> tuple:
    """``(key, gradient)`` that backward starts from at output ``t`` (number ``i``): ones
    for a scalar, else the gradient ``g`` given for it."""
    if not t.requires_grad:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                           "a grad_fn")
    if g is None and t._array.size != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    g = O.ones_like(t._array) if g is None else _given(t, g, i)
    return (t if t._node is None else t._node), (_wrap(g) if create_graph else g)


def _given(t, g, i):
    """The gradient ``g`` given for output ``t`` (number ``i``), as an array of its dtype."""
    g = _value(g)
    if devices.is_cuda_array(g):
        g = O.cast(g, dtype=t.dtype)
    else:
        g = devices.transfer(np.asarray(g, dtype=t.dtype), t.device)
    if g.shape != t.shape:
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                           f"{Size(g.shape)} and output[{i}] has a shape of {t.shape}.")
    return g


def _differentiate(grads, retain_graph, create_graph, inputs=None) -> dict:
    """Propagate from ``grads`` (see :func:`_seeds`) and return autodiff's gradient dict,
    writing no ``.grad``. With ``inputs`` (``autograd.grad``'s), only the nodes on a path to
    one of them are walked, and each input's total gradient stays in the dict."""
    order = _reachable([key for key, _ in grads.values() if type(key) is not Tensor])
    keep = ends = frozenset()
    if inputs is not None:
        order, keep, ends = _towards(order, inputs)
    mode = _mode(order, create_graph)
    autodiff.propagate(order, grads, mode, keep, ends)
    mode.finish(grads)
    if not (create_graph if retain_graph is None else retain_graph):  # (PyTorch's default)
        for node in order:
            node.freed = True
    return grads


def tensor_backward(self, gradient=None, retain_graph: bool | None = None,
                    create_graph: bool = False, inputs=None) -> None:
    """``t.backward()``: accumulate d(t)/d(leaf) into ``leaf.grad`` for every leaf that
    requires grad (PyTorch's signature: ``y.backward(gradient=v)`` for a non-scalar ``y``)."""
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported by kernelgraph: use "
                                  "kg.autograd.grad(outputs, inputs) for chosen inputs")
    key, g = _seed(self, gradient, 0, create_graph)
    _backward({id(key): (key, g)}, retain_graph, create_graph)


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """``kg.autograd.backward``: accumulate gradients of ``tensors`` into the leaves.

    ``retain_graph`` defaults to ``create_graph``; without it the graph is freed afterwards.
    """
    _backward(_seeds(tensors, grad_tensors, create_graph), retain_graph, create_graph)


def _backward(grads, retain_graph, create_graph) -> None:
    """Propagate from ``grads`` and add each leaf's gradient into its ``.grad``."""
    was, _local.grad_enabled = _local.grad_enabled, bool(create_graph)  # (as PyTorch)
    try:
        grads = _differentiate(grads, retain_graph, create_graph)
        given: dict = {}  # id -> the arrays made .grad in this call (kept: ids stay theirs)
        for leaf, g in grads.values():
            if type(leaf) is Tensor:
                hooks = getattr(leaf, "_hooks", None)
                if hooks:
                    g = _run_hooks(hooks, g, create_graph)
                if trace.active:
                    trace.emit("gradient", node=leaf, grad=g)
                with _ACCUMULATING:
                    previous = getattr(leaf, "_grad", None)
                    leaf._grad = _first_grad(g, create_graph, given) if previous is None \
                        else _added_grad(g, previous, create_graph)
    finally:
        _local.grad_enabled = was


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """``kg.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs`` (a tuple, one per
    input), computed without touching any ``.grad``. Each is the total derivative, also
    where one input is computed from another (``t = 2 * x; z = 3 * t``:
    ``grad(z, [x, t])`` is ``(6, 3)``, as in PyTorch); only the part of the graph that
    leads to an input is walked (hooks beyond the inputs do not run)."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not all(x.requires_grad for x in inputs):  # checked before anything runs (PyTorch)
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    was, _local.grad_enabled = _local.grad_enabled, bool(create_graph)
    try:
        grads = _differentiate(_seeds(outputs, grad_outputs, create_graph), retain_graph,
                               create_graph, inputs)
    finally:
        _local.grad_enabled = was
    result = []
    for k, x in enumerate(inputs):
        entry = grads.get(id(x._node if x._node is not None else x))
        if entry is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not "
                                   "have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
            result.append(None)
        else:
            g = entry[1]
            if not create_graph and type(g) is ndarray and not g.flags.writeable:
                g = g.copy()
            result.append(g if create_graph else _wrap(g))
    return tuple(result)


# -- saved values changed in place -----------------------------------------------------------
_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
         "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def check_saved(node, needs) -> None:
    """Refuse to run ``node``'s gradient rule when a value it reads (its card's ``saves``)
    was changed in place after the node was recorded, with PyTorch's words."""
    inputs = node.inputs
    for item in node.op.reads(len(inputs)):
        if type(item) is tuple:
            item, j = item
            if j >= len(needs) or not needs[j]:
                continue
        if item == "out":
            array, made_by = node.value, node
        elif item < len(inputs) and type(inputs[item]) is Tensor:
            x = inputs[item]
            array, made_by = x._array, x._node
        else:
            continue
        hit = versions.written_after(array, node.seq, own=item == "out")
        if hit is not None:
            raise RuntimeError(modified_message(array, made_by, *hit))


def modified_message(array, made_by, now: int, then: int) -> str:
    """PyTorch's "modified by an inplace operation" error for a value of ``array``'s type and
    shape, made by node ``made_by`` (None: a leaf), at version ``now`` instead of ``then``."""
    kind = scalar_type_name(array.dtype)
    where = "" if devices.device_of(array).type == "cpu" else "cuda."
    shape = ", ".join(str(d) for d in array.shape)
    which = ""
    if made_by is not None:
        name = grad_fn_name(made_by)
        for tail in ("Backward0", "Backward1", "Backward2", "Backward"):
            if name.endswith(tail):
                name = name[:-len(tail)]
                break
        which = f", which is output 0 of {name},"
    return (f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{where}{kind}Tensor [{shape}]]{which} is at version "
            f"{now}; expected version {then} instead. {_HINT}")
