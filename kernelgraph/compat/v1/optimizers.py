"""``tf.train``: TF1's ``Optimizer`` (slots named as TF1 names them, the train op, the
``global_step`` counted after the updates), ``GradientDescentOptimizer``,
``MomentumOptimizer`` and ``AdamOptimizer`` with TF1's update rules, and the graph's
``global_step``. The other optimizers are in :mod:`.adaptive` (RMSProp, Adagrad, Adadelta)
and :mod:`.proximal` (Ftrl, the proximal ones, AdagradDA)."""

from __future__ import annotations

import contextlib

import numpy as np

from ... import ops
from ...dtypes import float64
from ...graph import Graph, Node, get_default_graph
from ...optim import GraphUpdates as _GraphUpdates
from ...optim.optimizer import _beside
from ...static.gradients import gradients
from ...static.variables import Variable, group
from .graph_collections import trainable_variables


@contextlib.contextmanager
def _top_scope(graph: Graph):
    """Outside every name scope: TF1 names a slot after its variable ('w/Adam'), wherever
    ``minimize`` was called."""
    saved, graph._scope = graph._scope, []
    try:
        yield
    finally:
        graph._scope = saved


class Optimizer(_GraphUpdates):
    """TF1's ``tf.train.Optimizer``: ``minimize(loss)`` = ``apply_gradients(
    compute_gradients(loss))``, a train op updating the trainable variables of the loss's
    graph. The update rules are TF1's (see each subclass); the machinery (slot variables,
    one ``group`` of assigns) is :mod:`kernelgraph.optim`'s."""

    # TF1's slots in the order TF1 makes them: the first is named 'w/Adam', the next
    # 'w/Adam_1' ...; a slot kernelgraph keeps beyond TF's (Adam's step count) is 'w/Adam/step'.
    _slot_names: tuple = ()

    def __init__(self, use_locking: bool = False, name: str = "Optimizer"):  # locking: no-op
        self._name = name

    def _graph_slots(self, var: Variable) -> dict:
        slots = self.__dict__.setdefault("_slots", {})
        hit = slots.get(id(var))
        if hit is None:
            specs = self._slot_specs(var)
            order = [n for n in self._slot_names if n in specs]
            order += [n for n in specs if n not in order]
            made = {}
            # outside any control_dependencies block, as TF1's init_scope: a train op made
            # under UPDATE_OPS must not make the slots' initializers need the batch
            with var.graph.as_default(), var.graph.control_dependencies(None), \
                    _top_scope(var.graph), _beside(var):
                for name in order:
                    shape, dtype, fill = specs[name]
                    label = self._name if name in self._slot_names else f"{self._name}/{name}"
                    made[name] = Variable(np.full(shape, fill, dtype), trainable=False,
                                          name=f"{var.name}/{label}")
            slots[id(var)] = hit = (var, made)  # var kept: its id is not reused meanwhile
        return hit[1]

    def _hyper(self) -> dict:
        return {}

    def compute_gradients(self, loss: Node, var_list: list | None = None) -> list:
        """``[(gradient, variable)]`` for ``var_list`` (default: the trainable variables of
        the loss's graph); the gradient is None where the loss does not depend on it."""
        if not isinstance(loss, Node) or not loss.symbolic:
            raise TypeError(f"{type(self).__name__}.compute_gradients needs a graph tensor "
                            f"loss, got {type(loss).__name__}")
        graph = loss.graph
        if var_list is None:
            with graph.as_default():  # TF1's: trainable local variables are trained too
                var_list = trainable_variables()
        var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        with graph.as_default():
            grads = gradients(loss, var_list)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step: Variable | None = None,
                        name: str | None = None) -> Node:
        """The train op applying ``[(gradient, variable)]``; increments ``global_step``."""
        pairs = list(grads_and_vars)
        if all(g is None for g, _ in pairs):
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[v.name for _, v in pairs]}")
        for _, var in pairs:  # made outside the optimizer's name scope, named as TF1 names them
            if isinstance(var, Variable):
                self._graph_slots(var)
        train = self._train_op(pairs, self._hyper(), None, "update", scope=name or self._name)
        graph = train.graph
        scope = train.name.rpartition("/")[0]  # 'RMSProp', or 'RMSProp_1' for a second one
        with graph.as_default():
            if global_step is not None:
                # as TF1: the step counts after every update ran (AdagradDA reads the old count)
                with graph.control_dependencies([train]):
                    train = global_step.assign_add(np.ones((), global_step.dtype),
                                                   name=f"{scope}/global_step")
            done = group(train)  # an Operation, as TF1's
        # TF1 names the train op as its name scope ('RMSProp', 'train' for name='train'),
        # which the scope itself holds in the graph's names: the op takes it as it is.
        done.name = scope
        return done

    def minimize(self, loss: Node, global_step: Variable | None = None,
                 var_list: list | None = None, name: str | None = None) -> Node:
        """One train op: compute the gradients of ``loss`` and apply them.

        >>> import kernelgraph.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(3.0)
        ...     step = tf.train.get_or_create_global_step()
        ...     train = tf.train.GradientDescentOptimizer(0.25).minimize(
        ...         tf.square(w), global_step=step)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         _ = sess.run(train)
        ...         float(sess.run(w)), int(sess.run(step))     # 3 - 0.25 * 6
        (1.5, 1)
        """
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step, name)

    def get_slot_names(self) -> list:
        """The names ``get_slot`` accepts, sorted as TF's (``['m', 'v']`` for Adam)."""
        return sorted(self._slot_names)

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot variable ``name`` of ``var`` (``'w/Adam:0'`` for Adam's ``'m'``), or None
        (before ``minimize``, for a variable it does not train, or a name it has not)."""
        return super().get_slot(var, name) if name in self._slot_names else None


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * grad``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0)
    ...     train = tf.train.GradientDescentOptimizer(0.1).minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer()); _ = sess.run(train)
    ...         round(float(sess.run(w)), 6)                # 1 - 0.1 * 2
    0.8
    """

    def __init__(self, learning_rate: float, use_locking: bool = False,
                 name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._lr = learning_rate

    def _update(self, p, g, state, hyper):
        return self._lr * g, {}


class MomentumOptimizer(Optimizer):
    """``accum = momentum * accum + grad; var -= learning_rate * accum`` (with
    ``use_nesterov``: ``var -= learning_rate * (grad + momentum * accum)``).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0)
    ...     opt = tf.train.MomentumOptimizer(0.1, momentum=0.5)
    ...     train = opt.minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         _ = sess.run(train); _ = sess.run(train)     # accum 2, then 0.5*2 + 1.6
    ...         round(float(sess.run(w)), 6), opt.get_slot(w, "momentum").name
    (0.54, 'Variable/Momentum:0')
    """

    _slot_names = ("momentum",)

    def __init__(self, learning_rate: float, momentum: float, use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False):
        super().__init__(use_locking, name)
        self._lr, self._momentum, self._nesterov = learning_rate, momentum, use_nesterov

    def _slot_specs(self, p) -> dict:
        return {"momentum": (tuple(p.shape), p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        accum = self._momentum * state["momentum"] + g
        step = g + self._momentum * accum if self._nesterov else accum
        return self._lr * step, {"momentum": accum}


class AdamOptimizer(Optimizer):
    """TF1's Adam, with epsilon added to sqrt(v) *before* the bias correction folds into
    the learning rate (unlike PyTorch's, see :class:`kernelgraph.optim.Adam`)::

        t = t + 1
        lr_t = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        var -= lr_t * m / (sqrt(v) + epsilon)

    TF keeps ``beta1_power``/``beta2_power`` variables; here each variable counts its steps.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0)
    ...     train = tf.train.AdamOptimizer(0.1).minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer()); _ = sess.run(train)
    ...         round(float(sess.run(w)), 6)                # the first step is lr * sign(g)
    0.9
    """

    _slot_names = ("m", "v")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-08, use_locking: bool = False, name: str = "Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._eps = learning_rate, beta1, beta2, epsilon

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        return {"step": ((), float64, 0.0), "m": (shape, p.dtype, 0.0),
                "v": (shape, p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        b1, b2 = self._beta1, self._beta2
        t = state["step"] + 1.0
        lr_t = ops.cast(self._lr * ops.sqrt(1.0 - ops.pow(b2, t)) / (1.0 - ops.pow(b1, t)),
                        dtype=p.dtype)
        m = b1 * state["m"] + (1 - b1) * g
        v = b2 * state["v"] + (1 - b2) * (g * g)
        return lr_t * (m / (ops.sqrt(v) + self._eps)), {"step": t, "m": m, "v": v}


def get_global_step(graph: Graph | None = None) -> Variable | None:
    """The graph's ``global_step`` variable, or None.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.train.get_global_step())
    None
    """
    graph = graph or get_default_graph()
    found = [v for v in graph.variables if v.name == "global_step"]
    return found[0] if found else None


def create_global_step(graph: Graph | None = None) -> Variable:
    """A new int64 ``global_step`` variable (0, not trainable).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     tf.train.create_global_step().name
    'global_step:0'
    """
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default():
        return Variable(np.array(0, np.int64), trainable=False, name="global_step")


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    """The graph's ``global_step`` variable, made if there is none.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     tf.train.get_or_create_global_step() is tf.train.get_or_create_global_step()
    True
    """
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)
