"""The optimiser machinery shared by both modes: hyperparameter checks, per-parameter state
(eager tensors, or slot ``kg.Variable`` s in a graph), parameter groups, and the one
``_update`` rule per optimiser that :class:`Optimizer.step` (eager) and
:meth:`Optimizer.minimize` (static) both run.

>>> import kernelgraph as kg
>>> net = kg.nn.Linear(2, 1)
>>> opt = kg.optim.SGD([{"params": [net.weight]}, {"params": [net.bias], "lr": 0.5}], lr=0.1)
>>> [g["lr"] for g in opt.param_groups]
[0.1, 0.5]
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import ops as O
from ..devices import Device
from ..eager import Tensor, enable_grad, no_grad, tensor
from ..errors import shown
from ..graph import Node
from ..nn.init import copy_into
from ..nn.module import variable_of, zero_grads
from ..static.control_flow import root_graph
from ..static.gradients import gradients
from ..static.variables import Variable, group

__all__ = ["GraphUpdates", "Optimizer"]


def is_graph_node(x) -> bool:
    """True for a static graph node (a fed learning rate ...), False for eager tensors."""
    return isinstance(x, Node) and x.symbolic


def number(what: str, value, low: float = 0.0, high: float | None = None,
           open_high: bool = False):
    """A hyperparameter: a number in range, or (static mode) a graph node such as a fed
    learning rate. Errors read as PyTorch's ("Invalid learning rate: -0.1").

    >>> number("learning rate", 0.5)
    0.5
    """
    if is_graph_node(value):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{what} must be a number, got {type(value).__name__}")
    value = float(value)
    if value < low or (high is not None and (value >= high if open_high else value > high)):
        bound = "" if high is None else f" and {'<' if open_high else '<='} {high}"
        raise ValueError(f"Invalid {what}: {value} (expected >= {low}{bound})")
    return value


def nonzero(value) -> bool:
    """A hyperparameter that takes part in the update: a graph node, or a nonzero number."""
    return is_graph_node(value) or value != 0


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
            # a slot's initial value depends on nothing: TF1 makes slots outside any
            # control_dependencies block (a train op built under UPDATE_OPS)
            with graph.as_default(), graph.control_dependencies(None), _beside(var):
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

    def _train_op(self, grads_and_vars, hyper, global_step=None, name: str | None = None,
                  scope: str = "train") -> Node:
        """``hyper``: one dict for every variable, or a list of dicts, one per pair."""
        pairs = list(grads_and_vars)
        hypers = hyper if isinstance(hyper, list) else [hyper] * len(pairs)
        triples = [(g, v, h) for (g, v), h in zip(pairs, hypers) if g is not None]
        if not triples:
            raise ValueError(f"{type(self).__name__}: no gradients for any variable; does the "
                             "loss depend on the variables being trained?")
        graph = triples[0][1].graph
        updates = []
        with graph.as_default(), graph.name_scope(scope):
            for g, var, h in triples:
                if not isinstance(var, Variable):
                    raise TypeError(f"{type(self).__name__}: can only update kg.Variable "
                                    f"nodes, got {shown(var)}")
                if g.dtype != var.dtype:
                    g = O.cast(g, dtype=var.dtype)
                state = self._graph_slots(var)
                with _beside(var):
                    delta, new_state = self._update(var, g, state, h)
                    if delta.dtype != var.dtype:  # a fed float64 learning rate, float32 weights
                        delta = O.cast(delta, dtype=var.dtype)
                    # Slots take the values computed from their old values; the variable's
                    # update reads those computed values, never a slot re-read after its
                    # assign.
                    updates.extend(state[k].assign(v) for k, v in new_state.items())
                    updates.append(var.assign_sub(delta))
            if global_step is not None:
                updates.append(global_step.assign_add(np.ones((), global_step.dtype)))
            return group(*updates, name=name or "train")


def _beside(var):
    """A device scope on ``var``'s device: its slots and its update are placed with it (TF1
    colocates them so), so a variable on a GPU is trained on that GPU, with no copies of its
    state to and from the host every step."""
    device = getattr(var, "device", None)
    return device if isinstance(device, Device) else contextlib.nullcontext()


def _check_param(owner: str, k: int, p) -> None:
    if isinstance(p, Tensor):
        if not p.is_leaf:  # one that does not require grad is kept and skipped, as PyTorch
            raise ValueError(f"{owner}: parameter {k}: can't optimize a non-leaf Tensor")
    elif not isinstance(p, Variable):
        raise TypeError(f"{owner}: parameter {k} is a {type(p).__name__}; expected a kg.Tensor "
                        "(a module's parameter) or a kg.Variable")


def _elsewhere(state: dict, p) -> bool:
    """Whether a parameter's state tensors live on another device than ``p`` (one array
    class check per parameter and step: a CPU array is an ndarray, a GPU one is not)."""
    host = type(p._array) is np.ndarray
    return any(isinstance(v, Tensor) and (type(v._array) is np.ndarray) is not host
               for v in state.values())


class _State(dict):
    """``optimizer.state``: parameter tensor -> its state dict, as PyTorch keys it; an int
    ``k`` also finds the k-th parameter's state (kernelgraph's older spelling)."""

    def __init__(self, owner):
        super().__init__()
        self._owner = owner

    def _key(self, key):
        if isinstance(key, int) and not isinstance(key, bool):
            params = self._owner._params
            return params[key] if 0 <= key < len(params) else None
        return key

    def __getitem__(self, key):
        return super().__getitem__(self._key(key))

    def __contains__(self, key):
        return super().__contains__(self._key(key))

    def __missing__(self, key):
        # a defaultdict(dict), as PyTorch's: a custom optimiser's step() fills state[p]
        if isinstance(key, int) and not isinstance(key, bool):
            raise KeyError(key)
        value = self[key] = {}
        return value


class Optimizer(GraphUpdates):
    """Base class: ``params`` (a module's ``parameters()``, leaf tensors, dicts of
    parameter groups ``{'params': [...], 'lr': ...}``, or ``kg.Variable`` s for static mode
    only) and ``param_groups``, read at every ``step()`` (so
    ``opt.param_groups[0]['lr'] = ...`` changes the learning rate, as a scheduler does).

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD(kg.nn.Linear(2, 1).parameters(), lr=0.1)
    >>> len(opt.param_groups[0]["params"]), opt.param_groups[0]["lr"]
    (2, 0.1)
    """

    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor | Node):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        self.state: dict = _State(self)  # parameter tensor -> its eager state tensors
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group ``{'params': [...], <hyperparameter>: value ...}``; hyperparameters
        left out take the optimiser's defaults (PyTorch's ``add_param_group``).

        >>> import kernelgraph as kg
        >>> w, b = kg.zeros(2).requires_grad_(), kg.zeros(1).requires_grad_()
        >>> opt = kg.optim.SGD([w], lr=0.1); opt.add_param_group({"params": b, "lr": 1.0})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 1.0]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError("a parameter group needs the key 'params'")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor | Node) else list(params)
        if isinstance(param_group["params"], set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        for k, p in enumerate(params):
            _check_param(type(self).__name__, k, p)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        unknown = [k for k in param_group if k != "params" and k not in self.defaults]
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown hyperparameter(s) {unknown} in a "
                            f"parameter group; expected some of {sorted(self.defaults)}")
        self.param_groups.append({"params": params, **self.defaults,
                                  **{k: v for k, v in param_group.items() if k != "params"}})

    @property
    def _params(self) -> list:
        return [p for g in self.param_groups for p in g["params"]]

    @staticmethod
    def _group_hyper(group: dict) -> dict:
        return {k: v for k, v in group.items() if k != "params"}

    def _hyper(self) -> dict:
        return self._group_hyper(self.param_groups[0])

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {g[k]}" for k in sorted(g) if k != "params")
        return "\n".join(lines) + "\n)"

    # -- eager ---------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients (before the next ``backward()``).

        >>> import kernelgraph as kg
        >>> w = kg.tensor([1.0], requires_grad=True); (2 * w).sum().backward()
        >>> opt = kg.optim.SGD([w], lr=1.0); opt.zero_grad(); print(w.grad)
        None
        """
        zero_grads(self._params, set_to_none)

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
        with no_grad():
            k = 0
            for group_ in self.param_groups:
                hyper = self._group_hyper(group_)
                for p in group_["params"]:
                    self._step_one(k, p, hyper)
                    k += 1
        return loss

    def _step_one(self, k: int, p, hyper: dict) -> None:
        if not isinstance(p, Tensor):
            raise TypeError(f"{type(self).__name__}.step() updates eager tensors; parameter "
                            f"{k} is a kg.Variable: in a graph use minimize(loss) and run its "
                            "train op")
        if p.grad is None:
            return
        state = self.state.get(p)
        if state is None:
            state = self.state[p] = {
                name: tensor(np.full(shape, fill, dtype), device=p.device)
                for name, (shape, dtype, fill) in self._slot_specs(p).items()}
        elif state and _elsewhere(state, p):  # the model moved (Module.to) since: follow it
            state = self.state[p] = {name: v.to(p.device) if isinstance(v, Tensor) else v
                                     for name, v in state.items()}
        g = p.grad.detach()
        if g.dtype != p.dtype:
            g = O.cast(g, dtype=p.dtype)
        delta, new_state = self._update(p.detach(), g, state, hyper)
        state.update(new_state)
        new = O.sub(p.detach(), delta)
        if type(p._array) is np.ndarray or new.dtype != p.dtype:
            copy_into(p, new)
        else:  # on a GPU: the new array replaces the old (as copy_into would) without the
            p._array = new._array  # round trip through the host that copy_into makes

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
        if not is_graph_node(loss):
            raise TypeError(f"{type(self).__name__}.minimize(loss) builds a train op in the "
                            f"loss's graph, but the loss is a {type(loss).__name__}; in eager "
                            "mode call loss.backward() and then opt.step()")
        graph = root_graph(loss.graph)
        if var_list is None:
            items = [(p, self._group_hyper(g)) for g in self.param_groups for p in g["params"]]
        else:
            items = [(p, self._hyper_of(p)) for p in var_list]
        variables = self._variables_in(graph, [p for p, _ in items])
        with graph.as_default():
            grads = gradients(loss, variables)
        return self._train_op(zip(grads, variables), [h for _, h in items], global_step, name)

    def _hyper_of(self, p) -> dict:
        for g in self.param_groups:
            if any(q is p for q in g["params"]):
                return self._group_hyper(g)
        return self._hyper()

    def _variables_in(self, graph, params) -> list:
        found = []
        for k, p in enumerate(params):
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

    # -- saving ----------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: {name: array}}, 'param_groups': [...]}`` with parameters
        named by their index, as PyTorch's ``Optimizer.state_dict``.

        >>> import kernelgraph as kg
        >>> sd = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=0.1).state_dict()
        >>> sd["param_groups"][0]["lr"], sd["param_groups"][0]["params"]
        (0.1, [0])
        """
        index = {id(p): k for k, p in enumerate(self._params)}
        groups = [{**self._group_hyper(g), "params": [index[id(p)] for p in g["params"]]}
                  for g in self.param_groups]
        state = {index[id(p)]: {n: np.array(v.cpu().numpy(), copy=True) for n, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` returned (hyperparameters and state)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        params = self._params
        for saved, own in zip(groups, self.param_groups):
            own.update({k: v for k, v in saved.items() if k != "params"})
        self.state = _State(self)
        for k, s in state_dict["state"].items():
            p = params[int(k)]
            self.state[p] = {n: tensor(np.array(v), device=p.device) for n, v in s.items()}
