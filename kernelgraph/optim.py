"""``kg.optim``: ``SGD`` and ``Adam`` with PyTorch's update formulas, in both modes.

An optimiser's update rule is written once with the public ops (``_update``), like every
op's gradient rule. Eager mode (PyTorch): ``loss.backward(); opt.step()`` runs that rule on
the parameters' ``.grad`` and writes the results into the parameter tensors in place.
Static mode (TF1): ``train = opt.minimize(loss)`` adds the same rule to the loss's graph
(gradients from ``kg.gradients``) and returns one ``kg.group`` of variable updates; the
optimiser's own state (momentum buffers, Adam's moments and step count) lives in
non-trainable ``kg.Variable`` s that ``kg.global_variables_initializer()`` initialises, so
make the initializer after ``minimize``. The same initial weights then give the same losses
in both modes.

>>> import kernelgraph as kg
>>> import numpy as np
>>> w = kg.tensor([1.0, 2.0], requires_grad=True)
>>> opt = kg.optim.SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()                      # gradient 2w
...     opt.step()
>>> [round(x, 4) for x in w.tolist()]                 # 1 -> 0.8 -> 0.8 - 0.1*(0.9*2 + 1.6)
[0.46, 0.92]
>>> with kg.Graph().as_default():
...     v = kg.Variable(np.array([1.0, 2.0], np.float32))
...     train = kg.optim.SGD([v], lr=0.1, momentum=0.9).minimize(kg.sum(v * v))
...     init = kg.global_variables_initializer()
...     with kg.Session() as sess:
...         _ = sess.run(init); _ = sess.run(train); _ = sess.run(train)
...         [round(x, 4) for x in sess.run(v).tolist()]
[0.46, 0.92]
"""

from __future__ import annotations

import numpy as np

from . import dtypes as D
from . import ops as O
from .eager import Tensor, enable_grad, no_grad, tensor
from .errors import shown
from .graph import Node
from .nn.init import copy_into
from .nn.module import variable_of
from .static.control_flow import root_graph
from .static.gradients import gradients
from .static.variables import Variable, group

__all__ = ["SGD", "Adam", "Optimizer"]


def _is_graph_node(x) -> bool:
    return isinstance(x, Node) and type(x).__name__ != "EagerNode"


def _number(what: str, value, low: float = 0.0, high: float | None = None,
            open_high: bool = False):
    """A hyperparameter: a number in range, or (static mode) a graph node such as a fed
    learning rate."""
    if _is_graph_node(value):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{what} must be a number, got {type(value).__name__}")
    value = float(value)
    if value < low or (high is not None and (value >= high if open_high else value > high)):
        bound = "" if high is None else f" and {'<' if open_high else '<='} {high}"
        raise ValueError(f"Invalid {what}: {value} (expected >= {low}{bound})")
    return value


class GraphUpdates:
    """The static half of an optimiser: slot variables per trained variable and the train
    op. Subclasses define ``_slot_specs(var)`` and ``_update(p, g, state, hyper)``, which
    returns ``(delta, new_state)``; the update is ``p - delta``, applied in a graph with
    ``assign_sub`` so the compiler can fuse it into the kernel computing ``delta``."""

    def _slot_specs(self, p) -> dict:
        """name -> (shape, dtype, initial fill) of each per-parameter state value."""
        return {}

    def _update(self, p, g, state: dict, hyper: dict) -> tuple:
        raise NotImplementedError

    def _graph_slots(self, var: Variable) -> dict:
        slots = self.__dict__.setdefault("_slots", {})
        hit = slots.get(id(var))
        if hit is None:
            made = {}
            graph = var.graph
            with graph.as_default():
                for name, (shape, dtype, fill) in self._slot_specs(var).items():
                    made[name] = Variable(np.full(shape, fill, dtype), trainable=False,
                                          name=f"{var.name}/{name}")
            slots[id(var)] = hit = (var, made)  # var kept: its id is not reused meanwhile
        return hit[1]

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot variable ``name`` of ``var`` (TF1's ``Optimizer.get_slot``), or None.

        >>> import kernelgraph as kg
        >>> with kg.Graph().as_default():
        ...     w = kg.Variable(1.0, name="w")
        ...     opt = kg.optim.SGD([w], lr=0.1, momentum=0.9)
        ...     _ = opt.minimize(w * w)
        ...     opt.get_slot(w, "momentum_buffer").name
        'train/w/momentum_buffer'
        """
        hit = self.__dict__.get("_slots", {}).get(id(var))
        return None if hit is None else hit[1].get(name)

    def _train_op(self, grads_and_vars, hyper: dict, global_step=None, name: str | None = None,
                  scope: str = "train") -> Node:
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError(f"{type(self).__name__}: no gradients for any variable; does the "
                             "loss depend on the variables being trained?")
        graph = pairs[0][1].graph
        updates = []
        with graph.as_default(), graph.name_scope(scope):
            for g, var in pairs:
                if not isinstance(var, Variable):
                    raise TypeError(f"{type(self).__name__}: can only update kg.Variable "
                                    f"nodes, got {shown(var)}")
                if g.dtype != var.dtype:
                    g = O.cast(g, dtype=var.dtype)
                state = self._graph_slots(var)
                delta, new_state = self._update(var, g, state, hyper)
                if delta.dtype != var.dtype:  # a fed float64 learning rate on float32 weights
                    delta = O.cast(delta, dtype=var.dtype)
                # Slots take the values computed from their old values; the variable's
                # update reads those computed values, never a slot re-read after its assign.
                updates.extend(state[k].assign(v) for k, v in new_state.items())
                updates.append(var.assign_sub(delta))
            if global_step is not None:
                updates.append(global_step.assign_add(np.ones((), global_step.dtype)))
            return group(*updates, name=name or "train")


class Optimizer(GraphUpdates):
    """Base class: ``params`` (a module's ``parameters()``, leaf tensors, or ``kg.Variable``
    s for static mode only) and one ``param_groups[0]`` dict of hyperparameters, read at
    every ``step()`` (so ``opt.param_groups[0]['lr'] = ...`` changes the learning rate).

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD(kg.nn.Linear(2, 1).parameters(), lr=0.1)
    >>> len(opt.param_groups[0]["params"]), opt.param_groups[0]["lr"]
    (2, 0.1)
    """

    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor | Node):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors, but got {type(params).__name__}")
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        for k, p in enumerate(params):
            if isinstance(p, Tensor):
                if not p.is_leaf or not p.requires_grad:
                    raise ValueError(f"{type(self).__name__}: parameter {k} must be a leaf "
                                     "tensor that requires grad")
            elif not isinstance(p, Variable):
                raise TypeError(f"{type(self).__name__}: parameter {k} is a "
                                f"{type(p).__name__}; expected a kg.Tensor (a module's "
                                "parameter) or a kg.Variable")
        self.defaults = dict(defaults)
        self.param_groups = [{"params": params, **defaults}]
        self.state: dict[int, dict] = {}  # parameter index -> its eager state tensors

    @property
    def _params(self) -> list:
        return self.param_groups[0]["params"]

    def _hyper(self) -> dict:
        return {k: v for k, v in self.param_groups[0].items() if k != "params"}

    # -- eager ---------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients (before the next ``backward()``).

        >>> import kernelgraph as kg
        >>> w = kg.tensor([1.0], requires_grad=True); (2 * w).sum().backward()
        >>> opt = kg.optim.SGD([w], lr=1.0); opt.zero_grad(); print(w.grad)
        None
        """
        for p in self._params:
            if isinstance(p, Tensor) and p.grad is not None:
                p.grad = None if set_to_none else tensor(np.zeros(p.shape, p.dtype),
                                                         device=p.device)

    def step(self, closure=None):
        """One update of every parameter that has a ``.grad`` (in place, not recorded by
        autograd). ``closure`` (optional) re-evaluates the loss first and its result is
        returned, as in PyTorch.

        >>> import kernelgraph as kg
        >>> w = kg.tensor([1.0], requires_grad=True); (3 * w).sum().backward()
        >>> kg.optim.SGD([w], lr=0.5).step(); w.tolist()
        [-0.5]
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        hyper = self._hyper()
        with no_grad():
            for k, p in enumerate(self._params):
                if not isinstance(p, Tensor):
                    raise TypeError(f"{type(self).__name__}.step() updates eager tensors; "
                                    f"parameter {k} is a kg.Variable: in a graph use "
                                    "minimize(loss) and run its train op")
                if p.grad is None:
                    continue
                state = self.state.get(k)
                if state is None:
                    state = self.state[k] = {
                        name: tensor(np.full(shape, fill, dtype), device=p.device)
                        for name, (shape, dtype, fill) in self._slot_specs(p).items()}
                g = p.grad.detach()
                if g.dtype != p.dtype:
                    g = O.cast(g, dtype=p.dtype)
                delta, new_state = self._update(p.detach(), g, state, hyper)
                state.update(new_state)
                copy_into(p, O.sub(p.detach(), delta))
        return loss

    # -- static --------------------------------------------------------------------------------
    def minimize(self, loss, var_list=None, global_step=None, name: str | None = None) -> Node:
        """The train op for a graph ``loss``: one ``kg.group`` that updates every variable
        (``var_list``, else this optimiser's parameters: a module's parameter tensors are
        mapped to that module's variables in the loss's graph). Make the variables
        initializer after this call, so that it also initialises the optimiser's slots.
        ``global_step`` (an int Variable), if given, is incremented by each run.

        >>> import kernelgraph as kg
        >>> model = kg.nn.Linear(2, 1)
        >>> with kg.Graph().as_default():
        ...     x = kg.placeholder(kg.float32, shape=[None, 2])
        ...     train = kg.optim.Adam(model.parameters()).minimize(kg.mean(model(x)))
        ...     [v.name for v in kg.global_variables()][2:4]
        ['train/linear/weight/step', 'train/linear/weight/exp_avg']
        """
        if not _is_graph_node(loss):
            raise TypeError(f"{type(self).__name__}.minimize(loss) builds a train op in the "
                            f"loss's graph, but the loss is a {type(loss).__name__}; in eager "
                            "mode call loss.backward() and then opt.step()")
        graph = root_graph(loss.graph)
        variables = self._variables_in(graph, var_list)
        with graph.as_default():
            grads = gradients(loss, variables)
        return self._train_op(zip(grads, variables), self._hyper(), global_step, name)

    def _variables_in(self, graph, var_list) -> list:
        found = []
        for k, p in enumerate(self._params if var_list is None else list(var_list)):
            if isinstance(p, Variable):
                if root_graph(p.graph) is not graph:
                    raise ValueError(f"{type(self).__name__}.minimize: variable '{p.name}' is "
                                     "in another graph than the loss")
                found.append(p)
            elif isinstance(p, Tensor):
                var = variable_of(p, graph)
                if var is None:
                    raise ValueError(
                        f"{type(self).__name__}.minimize: parameter {k} (shape {p.shape}) has "
                        "no kg.Variable in the loss's graph; call its module on this graph's "
                        "nodes before minimize(), or pass var_list")
                found.append(var)
            else:
                raise TypeError(f"{type(self).__name__}.minimize: var_list item {k} is a "
                                f"{type(p).__name__}; expected a kg.Variable")
        return found


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, as ``torch.optim.SGD`` (no
    dampening)::

        g = grad + weight_decay * p
        buf = momentum * buf + g                     (buf starts at zero: the first buf is g)
        g = g + momentum * buf if nesterov else buf
        p = p - lr * g

    >>> import kernelgraph as kg
    >>> w = kg.tensor([1.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.SGD([w], lr=0.1, weight_decay=0.5).step(); w.tolist()   # 1 - 0.1 * 2.5
    [0.75]
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        lr = _number("learning rate", lr)
        momentum = _number("momentum value", momentum)
        weight_decay = _number("weight_decay value", weight_decay)
        if nesterov and (_is_graph_node(momentum) or momentum <= 0):
            raise ValueError("Nesterov momentum requires a momentum > 0 (a number)")
        super().__init__(params, {"lr": lr, "momentum": momentum,
                                  "weight_decay": weight_decay, "nesterov": bool(nesterov)})

    def _slot_specs(self, p) -> dict:
        if not _is_graph_node(self.defaults["momentum"]) and self.defaults["momentum"] == 0:
            return {}
        return {"momentum_buffer": (tuple(p.shape), p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        if _is_graph_node(hyper["weight_decay"]) or hyper["weight_decay"] != 0:
            g = g + hyper["weight_decay"] * p
        new_state = {}
        if "momentum_buffer" in state:
            # PyTorch starts buf at g; momentum * 0 + g is exactly g, so a zero start agrees.
            buf = hyper["momentum"] * state["momentum_buffer"] + g
            new_state["momentum_buffer"] = buf
            g = g + hyper["momentum"] * buf if hyper["nesterov"] else buf
        return hyper["lr"] * g, new_state


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (``amsgrad=False``)::

        g = grad + weight_decay * p
        t = t + 1
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    (the bias corrections in float64, as PyTorch computes them in Python).

    >>> import kernelgraph as kg
    >>> w = kg.tensor([1.0, -1.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.Adam([w], lr=0.1).step(); [round(x, 4) for x in w.tolist()]  # lr * sign(g)
    [0.9, -0.9]
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0):
        lr = _number("learning rate", lr)
        if not isinstance(betas, tuple | list) or len(betas) != 2:
            raise TypeError(f"betas must be a pair of numbers, got {shown(betas)}")
        betas = (_number("beta parameter at index 0", betas[0], 0.0, 1.0, True),
                 _number("beta parameter at index 1", betas[1], 0.0, 1.0, True))
        if any(_is_graph_node(b) for b in betas):
            raise TypeError("Adam: betas must be numbers")
        eps = _number("epsilon value", eps)
        weight_decay = _number("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay})

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        return {"step": ((), D.float64, 0.0), "exp_avg": (shape, p.dtype, 0.0),
                "exp_avg_sq": (shape, p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        beta1, beta2 = hyper["betas"]
        if _is_graph_node(hyper["weight_decay"]) or hyper["weight_decay"] != 0:
            g = g + hyper["weight_decay"] * p
        t = state["step"] + 1.0
        m = beta1 * state["exp_avg"] + (1 - beta1) * g
        v = beta2 * state["exp_avg_sq"] + (1 - beta2) * (g * g)
        step_size = O.cast(hyper["lr"] / (1.0 - O.pow(beta1, t)), dtype=p.dtype)
        correction2_sqrt = O.cast(O.sqrt(1.0 - O.pow(beta2, t)), dtype=p.dtype)
        denom = O.sqrt(v) / correction2_sqrt + hyper["eps"]
        return step_size * (m / denom), {"step": t, "exp_avg": m, "exp_avg_sq": v}
