"""``torch.distributed.checkpoint.state_dict``: a model's and an optimizer's state dicts
keyed by parameter names (fully qualified names, FQNs), for :func:`save` and :func:`load`.

kernelgraph's tensors are never sharded, so every option gives the full state dict:

- :func:`get_model_state_dict` returns ``{fqn: tensor}``, each tensor sharing the
  parameter's or buffer's storage (PyTorch's ``module.state_dict()``), so ``dcp.load`` into
  it writes into the model; :func:`set_model_state_dict` loads one back (``strict`` by
  default) and returns ``(missing_keys, unexpected_keys)``.
- :func:`get_optimizer_state_dict` returns PyTorch's layout ``{"state": {fqn: {"step":
  tensor, "exp_avg": tensor, ...}}, "param_groups": [{hyperparameters..., "params":
  [fqn, ...]}]}``; :func:`set_optimizer_state_dict` loads it. kernelgraph's groups hold its
  own optimizers' hyperparameters (Adam: ``lr, betas, eps, weight_decay, amsgrad,
  maximize``), not PyTorch's implementation switches (``foreach``, ``fused``, ...).
- :func:`_init_optim_state` gives a fresh optimizer its state (one step with zero gradients
  at learning rate 0, as PyTorch does) so that ``dcp.load`` has tensors to fill.

Names in a model wrapped by ``checkpoint_wrapper`` leave out ``_checkpoint_wrapped_module``,
as in PyTorch.

>>> import kernelgraph as kg
>>> net = kg.nn.Linear(2, 1)
>>> opt = kg.optim.Adam(net.parameters())
>>> _init_optim_state(opt)
>>> sd = get_optimizer_state_dict(net, opt)
>>> list(sd["state"]), sd["param_groups"][0]["params"]
(['weight', 'bias'], ['weight', 'bias'])
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple

import numpy as np

from ...eager import Tensor
from ...eager.creation import zeros_like
from ...eager.tensors import tensor
from ...nn.module import Module

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "get_state_dict", "set_model_state_dict", "set_optimizer_state_dict",
           "set_state_dict"]

_WRAPPED = "_checkpoint_wrapped_module."
_IncompatibleKeys = namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])


@dataclasses.dataclass
class StateDictOptions:
    """PyTorch's options (the same fields and defaults). Tensors are never sharded here, so
    ``full_state_dict`` changes nothing; ``cpu_offload=True`` returns host copies;
    ``strict`` goes to ``load_state_dict``. The others are accepted at their defaults."""
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _options(options) -> StateDictOptions:
    if options is None:
        return StateDictOptions()
    if not isinstance(options, StateDictOptions):
        raise TypeError(f"options must be a StateDictOptions, got {type(options).__name__}")
    if options.ignore_frozen_params or options.flatten_optimizer_state_dict:
        raise ValueError("kernelgraph's state_dict helpers take ignore_frozen_params and "
                         "flatten_optimizer_state_dict at False only")
    return options


def _module(model) -> Module:
    if not isinstance(model, Module):
        raise TypeError(f"expected an nn.Module, got {type(model).__name__}")
    return model


def _optimizers(optimizers) -> list:
    opts = list(optimizers) if isinstance(optimizers, list | tuple) else [optimizers]
    for o in opts:
        if not hasattr(o, "param_groups") or not hasattr(o, "state_dict"):
            raise TypeError(f"expected an optimizer or a list of optimizers, got "
                            f"{type(o).__name__}")
    return opts


def _fqns(model: Module) -> dict:
    """id(parameter) -> its name, without the checkpoint wrapper's child name."""
    return {id(p): name.replace(_WRAPPED, "") for name, p in model.named_parameters()}


def get_model_state_dict(model: Module, *, submodules=None, options=None) -> dict:
    """``{fqn: tensor}`` of ``model``'s parameters and persistent buffers (see the module's
    docstring)."""
    opts = _options(options)
    if submodules is not None:
        raise ValueError("kernelgraph's get_model_state_dict takes submodules=None only")
    out = {}
    for name, t in _module(model)._state_items():
        t = t.detach()
        out[name] = tensor(t.cpu().numpy().copy()) if opts.cpu_offload else t
    return out


def set_model_state_dict(model: Module, model_state_dict: dict, *, options=None):
    """Load ``model_state_dict`` into ``model``; returns ``(missing_keys, unexpected_keys)``
    (both empty unless ``StateDictOptions(strict=False)``)."""
    opts = _options(options)
    own = [name for name, _ in _module(model)._state_items()]
    model.load_state_dict(dict(model_state_dict), strict=opts.strict)
    return _IncompatibleKeys([k for k in own if k not in model_state_dict],
                             [k for k in model_state_dict if k not in own])


def get_optimizer_state_dict(model: Module, optimizers, *, submodules=None,
                             options=None) -> dict:
    """``{"state": {fqn: {...}}, "param_groups": [...]}`` of ``optimizers`` (one or a list),
    parameters named as in ``model`` (see the module's docstring)."""
    opts = _options(options)
    if submodules is not None:
        raise ValueError("kernelgraph's get_optimizer_state_dict takes submodules=None only")
    names = _fqns(_module(model))
    state: dict = {}
    groups: list = []
    for opt in _optimizers(optimizers):
        params = opt._params
        missing = [i for i, p in enumerate(params) if id(p) not in names]
        if missing:
            raise ValueError(f"the optimizer holds {len(missing)} parameter(s) that are not "
                             f"the model's (indices {missing})")
        sd = opt.state_dict()
        for index, s in sd["state"].items():
            state[names[id(params[int(index)])]] = {
                k: tensor(np.array(v, copy=True)) for k, v in s.items()}
        for g in sd["param_groups"]:
            groups.append({**g, "params": [names[id(params[i])] for i in g["params"]]})
    del opts  # full_state_dict and cpu_offload: the values above are already full host copies
    return {"state": state, "param_groups": groups}


def set_optimizer_state_dict(model: Module, optimizers, optim_state_dict: dict, *,
                             options=None) -> None:
    """Load what :func:`get_optimizer_state_dict` returned into ``optimizers``: each
    optimizer's groups are the saved groups in order, each parameter's state found by its
    name."""
    _options(options)
    names = _fqns(_module(model))
    if not isinstance(optim_state_dict, dict) or set(optim_state_dict) != {"state",
                                                                         "param_groups"}:
        raise ValueError("optim_state_dict must be {'state': ..., 'param_groups': ...}, as "
                         "get_optimizer_state_dict returns")
    saved_groups = list(optim_state_dict["param_groups"])
    for opt in _optimizers(optimizers):
        params = opt._params
        index = {names[id(p)]: i for i, p in enumerate(params)}
        mine, saved_groups = saved_groups[:len(opt.param_groups)], \
            saved_groups[len(opt.param_groups):]
        if len(mine) != len(opt.param_groups):
            raise ValueError(f"optim_state_dict has fewer parameter groups than the "
                             f"optimizers ({len(opt.param_groups)} more expected)")
        groups = []
        for g in mine:
            unknown = [n for n in g["params"] if n not in index]
            if unknown:
                raise ValueError(f"optim_state_dict names parameters {unknown} that this "
                                 "optimizer does not hold")
            groups.append({**g, "params": [index[n] for n in g["params"]]})
        state = {index[n]: {k: v.numpy() if isinstance(v, Tensor) else np.asarray(v)
                            for k, v in s.items()}
                 for n, s in optim_state_dict["state"].items() if n in index}
        opt.load_state_dict({"state": state, "param_groups": groups})


def get_state_dict(model: Module, optimizers, *, submodules=None, options=None) -> tuple:
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))


def set_state_dict(model: Module, optimizers, *, model_state_dict: dict,
                   optim_state_dict: dict, options=None):
    """:func:`set_model_state_dict` and :func:`set_optimizer_state_dict` together."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys


def _init_optim_state(optim) -> None:
    """Give ``optim`` its state if it has none: one step with zero gradients (for the
    parameters that have none) at learning rate 0, the gradients cleared after, as PyTorch
    does so that a checkpoint can be loaded into the state."""
    if optim.state:
        return
    for g in optim.param_groups:
        for p in g["params"]:
            if p.requires_grad and p.grad is None:
                p.grad = zeros_like(p)
    lrs = [g["lr"] for g in optim.param_groups]
    for g in optim.param_groups:
        g["lr"] = 0.0
    try:
        optim.step()
    finally:
        for g, lr in zip(optim.param_groups, lrs, strict=True):
            g["lr"] = lr
    optim.zero_grad(set_to_none=True)
