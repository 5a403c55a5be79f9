"""``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``: wrap modules so that
their activations are recomputed in ``backward()`` instead of kept
(:func:`kernelgraph.utils.checkpoint.checkpoint` on each call).

``checkpoint_wrapper(module)`` returns a :class:`CheckpointWrapper` holding ``module`` as
its child ``_checkpoint_wrapped_module``; as in PyTorch, ``named_parameters()`` of a model
holding wrappers shows that child's name (the wrapper's own does not), but ``state_dict()``
and ``load_state_dict()`` never do (a checkpoint of the
wrapped model loads into the unwrapped one and back), and attributes the wrapper lacks are
looked up on the wrapped module. ``apply_activation_checkpointing(model, check_fn=...)``
replaces, in place, every sub-module that ``check_fn`` accepts by its wrapper.

Both ``CheckpointImpl`` values give the same gradients here (see
:mod:`kernelgraph.utils.checkpoint`); ``offload_to_cpu`` (CPU offload of saved activations)
is not supported.

>>> import kernelgraph as kg
>>> net = kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.ReLU(), kg.nn.Linear(4, 2))
>>> apply_activation_checkpointing(net, check_fn=lambda m: isinstance(m, kg.nn.Linear))
>>> [type(m).__name__ for m in net.children()]
['CheckpointWrapper', 'ReLU', 'CheckpointWrapper']
>>> list(net.state_dict())
['0.weight', '0.bias', '2.weight', '2.bias']
"""

from __future__ import annotations

import enum
import functools

from ....nn.module import Module
from ....utils.checkpoint import checkpoint

__all__ = ["CheckpointImpl", "CheckpointWrapper", "apply_activation_checkpointing",
           "checkpoint_wrapper"]

_CHECKPOINT_WRAPPED_MODULE = "_checkpoint_wrapped_module"


class CheckpointImpl(enum.Enum):
    """PyTorch's two checkpoint implementations (the same values)."""
    REENTRANT = enum.auto()
    NO_REENTRANT = enum.auto()


class CheckpointWrapper(Module):
    """A module that runs ``mod`` through :func:`~kernelgraph.utils.checkpoint.checkpoint`."""

    def __init__(self, mod: Module, checkpoint_impl: CheckpointImpl = CheckpointImpl.NO_REENTRANT,
                 checkpoint_fn=None, **checkpoint_fn_kwargs):
        super().__init__()
        if not isinstance(mod, Module):
            raise TypeError(f"checkpoint_wrapper expects an nn.Module, got {type(mod).__name__}")
        if not isinstance(checkpoint_impl, CheckpointImpl):
            raise TypeError(f"checkpoint_impl must be a CheckpointImpl, got {checkpoint_impl!r}")
        self._checkpoint_wrapped_module = mod
        self.checkpoint_impl = checkpoint_impl
        if checkpoint_fn is None:
            checkpoint_fn = functools.partial(
                checkpoint, use_reentrant=checkpoint_impl is CheckpointImpl.REENTRANT,
                **checkpoint_fn_kwargs)
        elif checkpoint_fn_kwargs:
            checkpoint_fn = functools.partial(checkpoint_fn, **checkpoint_fn_kwargs)
        self.checkpoint_fn = checkpoint_fn

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            # The wrapped module's attributes (a Linear's in_features), as in PyTorch.
            return getattr(self._modules[_CHECKPOINT_WRAPPED_MODULE], name)

    def named_parameters(self, *args, **kwargs):
        # As PyTorch's wrapper: its own listing hides the child's name (a model holding the
        # wrapper lists it, since it calls named_modules).
        for name, p in super().named_parameters(*args, **kwargs):
            yield name.replace(_CHECKPOINT_WRAPPED_MODULE + ".", ""), p

    def __getitem__(self, key):
        return self._checkpoint_wrapped_module[key]

    def forward(self, *args, **kwargs):
        return self.checkpoint_fn(self._checkpoint_wrapped_module, *args, **kwargs)


def checkpoint_wrapper(module: Module,
                       checkpoint_impl: CheckpointImpl = CheckpointImpl.NO_REENTRANT,
                       checkpoint_fn=None, offload_to_cpu: bool = False, **checkpoint_fn_kwargs
                       ) -> CheckpointWrapper:
    """``module`` wrapped so that each call is checkpointed (see the module's docstring).

    >>> import kernelgraph as kg
    >>> w = checkpoint_wrapper(kg.nn.Linear(3, 2))
    >>> [n for n, _ in w.named_parameters()], list(w.state_dict())
    (['weight', 'bias'], ['weight', 'bias'])
    """
    if offload_to_cpu:
        raise ValueError("kernelgraph's checkpoint_wrapper does not offload activations to the "
                         "CPU: pass offload_to_cpu=False")
    return CheckpointWrapper(module, checkpoint_impl, checkpoint_fn, **checkpoint_fn_kwargs)


def apply_activation_checkpointing(model: Module, checkpoint_wrapper_fn=checkpoint_wrapper,
                                   check_fn=lambda _: True, auto_wrap_policy=None) -> None:
    """Replace, in place, each sub-module of ``model`` that ``check_fn`` accepts by
    ``checkpoint_wrapper_fn(sub_module)`` (``model`` itself is never replaced, and nothing
    inside a replaced module is looked at again). ``auto_wrap_policy`` (an FSDP wrap policy)
    is not supported: select modules with ``check_fn``."""
    if auto_wrap_policy is not None:
        raise ValueError("kernelgraph's apply_activation_checkpointing takes check_fn only, "
                         "not an FSDP auto_wrap_policy")
    if not isinstance(model, Module):
        raise TypeError(f"apply_activation_checkpointing expects an nn.Module, got "
                        f"{type(model).__name__}")

    def visit(parent: Module) -> None:
        for name, child in list(parent._modules.items()):
            if child is None:
                continue
            if isinstance(child, CheckpointWrapper):
                continue
            if check_fn(child):
                setattr(parent, name, checkpoint_wrapper_fn(child))
            else:
                visit(child)

    visit(model)
