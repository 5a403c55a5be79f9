"""The optimisers, each one ``_update`` rule with PyTorch's formula (its single-tensor CPU
path, operation by operation, so the numbers agree to float32 rounding): ``SGD``, ``Adam``,
``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``.

>>> import kernelgraph as kg
>>> w = kg.tensor([1.0, -2.0], requires_grad=True)
>>> (w * w).sum().backward()
>>> kg.optim.RMSprop([w], lr=0.01).step()
>>> [round(x, 4) for x in w.tolist()]                 # 0.01 * g / sqrt(0.01 g^2) = 0.1
[0.9, -1.9]
"""

from __future__ import annotations

from .. import dtypes as D
from .. import ops as O
from ..errors import shown
from .optimizer import Optimizer, is_graph_node, nonzero, number

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "RMSprop"]


def _decayed(g, p, hyper):
    """PyTorch's ``maximize`` and L2 ``weight_decay``: ``-g`` first, then ``g + wd * p``."""
    if hyper.get("maximize"):
        g = -g
    if nonzero(hyper["weight_decay"]):
        g = g + hyper["weight_decay"] * p
    return g


def _scalar(value, dtype):
    """A Python number stays one (an op casts it to the tensor's dtype, as PyTorch's scalar
    arguments are); a graph node (a fed rate) is cast to ``dtype``."""
    return O.cast(value, dtype=dtype) if is_graph_node(value) else value


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, as ``torch.optim.SGD``::

        g = grad + weight_decay * p                  (-grad with maximize=True)
        buf = g                   at the first step, then
        buf = momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
        p = p - lr * g

    >>> import kernelgraph as kg
    >>> w = kg.tensor([1.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.SGD([w], lr=0.1, weight_decay=0.5).step(); w.tolist()   # 1 - 0.1 * 2.5
    [0.75]
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None):
        lr = number("learning rate", lr)
        momentum = number("momentum value", momentum)
        dampening = number("dampening value", dampening)
        weight_decay = number("weight_decay value", weight_decay)
        if nesterov and (is_graph_node(momentum) or momentum <= 0 or nonzero(dampening)):
            raise ValueError("Nesterov momentum requires a momentum > 0 (a number) and zero "
                             "dampening")
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": bool(nesterov),
                                  "maximize": bool(maximize)})

    def _slot_specs(self, p) -> dict:
        groups = getattr(self, "param_groups", None) or [self.defaults]
        specs = {}
        if any(nonzero(g["momentum"]) for g in groups):
            specs["momentum_buffer"] = (tuple(p.shape), p.dtype, 0.0)
        if any(nonzero(g["dampening"]) for g in groups):
            # 0 before the first step, 1 after: PyTorch's first buffer is g itself, undamped.
            specs["started"] = ((), p.dtype, 0.0)
        return specs

    def _update(self, p, g, state, hyper):
        g = _decayed(g, p, hyper)
        new_state = {}
        if nonzero(hyper["momentum"]):
            momentum = hyper["momentum"]
            if "started" in state:
                scale = 1.0 - hyper["dampening"] * state["started"]
                new_state["started"] = O.ones_like(state["started"])
                buf = momentum * state["momentum_buffer"] + scale * g
            else:
                # PyTorch starts buf at g; momentum * 0 + g is exactly g, so a zero start agrees
                buf = momentum * state["momentum_buffer"] + g
            new_state["momentum_buffer"] = buf
            g = g + momentum * buf if hyper["nesterov"] else buf
        return _scalar(hyper["lr"], p.dtype) * g, new_state


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam``::

        g = grad + weight_decay * p
        t = t + 1
        m = m + (1 - beta1) * (g - m)                 (torch's lerp)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                         (amsgrad=True: v_max replaces v below)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    (the bias corrections in float64, as PyTorch computes them in Python).

    >>> import kernelgraph as kg
    >>> w = kg.tensor([1.0, -1.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.Adam([w], lr=0.1).step(); [round(x, 4) for x in w.tolist()]  # lr * sign(g)
    [0.9, -0.9]
    """

    _decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None):
        lr = number("learning rate", lr)
        if not isinstance(betas, tuple | list) or len(betas) != 2:
            raise TypeError(f"betas must be a pair of numbers, got {shown(betas)}")
        betas = (number("beta parameter at index 0", betas[0], 0.0, 1.0, True),
                 number("beta parameter at index 1", betas[1], 0.0, 1.0, True))
        if any(is_graph_node(b) for b in betas):
            raise TypeError(f"{type(self).__name__}: betas must be numbers")
        eps = number("epsilon value", eps)
        weight_decay = number("weight_decay value", weight_decay)
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": bool(amsgrad),
                                  "maximize": bool(maximize)})

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        specs = {"step": ((), D.float64, 0.0), "exp_avg": (shape, p.dtype, 0.0),
                 "exp_avg_sq": (shape, p.dtype, 0.0)}
        groups = getattr(self, "param_groups", None) or [self.defaults]
        if any(g["amsgrad"] for g in groups):
            specs["max_exp_avg_sq"] = (shape, p.dtype, 0.0)
        return specs

    def _update(self, p, g, state, hyper):
        beta1, beta2 = hyper["betas"]
        lr = hyper["lr"]
        if self._decoupled:  # AdamW: p * (1 - lr * wd) first, then Adam without decay
            g = -g if hyper.get("maximize") else g
            decay = p * _scalar(lr * hyper["weight_decay"], p.dtype)
        else:
            g = _decayed(g, p, hyper)
            decay = None
        t = state["step"] + 1.0
        m = state["exp_avg"] + (1 - beta1) * (g - state["exp_avg"])
        v = beta2 * state["exp_avg_sq"] + (1 - beta2) * g * g
        new_state = {"step": t, "exp_avg": m, "exp_avg_sq": v}
        if hyper.get("amsgrad"):
            v = new_state["max_exp_avg_sq"] = O.maximum(state["max_exp_avg_sq"], v)
        step_size = O.cast(lr / (1.0 - O.pow(beta1, t)), dtype=p.dtype)
        correction2_sqrt = O.cast(O.sqrt(1.0 - O.pow(beta2, t)), dtype=p.dtype)
        denom = O.sqrt(v) / correction2_sqrt + hyper["eps"]
        delta = step_size * (m / denom)
        return (delta if decay is None else decay + delta), new_state


class AdamW(Adam):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW`` (default
    ``weight_decay=1e-2``): ``p = p * (1 - lr * weight_decay)``, then Adam's step.

    >>> import kernelgraph as kg
    >>> w = kg.tensor([1.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.AdamW([w], lr=0.1).step(); round(w.item(), 4)        # 1 * 0.999 - 0.1
    0.899
    """

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 **kwargs):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, **kwargs)


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop`` (defaults ``lr=1e-2, alpha=0.99, eps=1e-8``)::

        g = grad + weight_decay * p
        s = alpha * s + (1 - alpha) * g * g
        avg = sqrt(s) + eps                  (centered: sqrt(s - a * a) + eps, where
                                              a = a + (1 - alpha) * (g - a))
        buf = momentum * buf + g / avg;  p = p - lr * buf      (momentum > 0)
        p = p - lr * g / avg                                     (otherwise)

    >>> import kernelgraph as kg
    >>> w = kg.tensor([3.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.RMSprop([w], lr=0.01, alpha=0.0).step(); round(w.item(), 4)
    2.99
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False):
        super().__init__(params, {
            "lr": number("learning rate", lr), "alpha": number("alpha value", alpha),
            "eps": number("epsilon value", eps),
            "weight_decay": number("weight_decay value", weight_decay),
            "momentum": number("momentum value", momentum), "centered": bool(centered),
            "maximize": bool(maximize)})

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        groups = getattr(self, "param_groups", None) or [self.defaults]
        specs = {"step": ((), D.float64, 0.0), "square_avg": (shape, p.dtype, 0.0)}
        if any(nonzero(g["momentum"]) for g in groups):
            specs["momentum_buffer"] = (shape, p.dtype, 0.0)
        if any(g["centered"] for g in groups):
            specs["grad_avg"] = (shape, p.dtype, 0.0)
        return specs

    def _update(self, p, g, state, hyper):
        alpha = hyper["alpha"]
        g = _decayed(g, p, hyper)
        s = alpha * state["square_avg"] + (1 - alpha) * g * g
        new_state = {"step": state["step"] + 1.0, "square_avg": s}
        if hyper["centered"]:
            a = state["grad_avg"] + (1 - alpha) * (g - state["grad_avg"])
            new_state["grad_avg"] = a
            avg = O.sqrt(s + -1.0 * a * a) + hyper["eps"]
        else:
            avg = O.sqrt(s) + hyper["eps"]
        lr = _scalar(hyper["lr"], p.dtype)
        if nonzero(hyper["momentum"]):
            buf = hyper["momentum"] * state["momentum_buffer"] + g / avg
            new_state["momentum_buffer"] = buf
            return lr * buf, new_state
        return lr * (g / avg), new_state


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad`` (defaults ``lr=1e-2, eps=1e-10``)::

        t = t + 1
        g = grad + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                          (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    >>> import kernelgraph as kg
    >>> w = kg.tensor([3.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.Adagrad([w], lr=0.5).step(); round(w.item(), 4)      # 3 - 0.5 * 6 / 6
    2.5
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None):
        super().__init__(params, {
            "lr": number("learning rate", lr), "lr_decay": number("lr_decay value", lr_decay),
            "weight_decay": number("weight_decay value", weight_decay),
            "initial_accumulator_value": number("initial_accumulator_value",
                                                initial_accumulator_value),
            "eps": number("epsilon value", eps), "maximize": bool(maximize)})

    def _slot_specs(self, p) -> dict:
        groups = getattr(self, "param_groups", None) or [self.defaults]
        init = groups[0]["initial_accumulator_value"]
        for g in groups:  # the group of p, when p is one of the eager parameters
            if any(q is p for q in g.get("params", ())):
                init = g["initial_accumulator_value"]
        return {"step": ((), D.float64, 0.0), "sum": (tuple(p.shape), p.dtype, init)}

    def _update(self, p, g, state, hyper):
        t = state["step"] + 1.0
        g = _decayed(g, p, hyper)
        if nonzero(hyper["lr_decay"]):
            clr = O.cast(hyper["lr"] / (1.0 + (t - 1.0) * hyper["lr_decay"]), dtype=p.dtype)
        else:
            clr = _scalar(hyper["lr"], p.dtype)
        s = state["sum"] + g * g
        std = O.sqrt(s) + hyper["eps"]
        return clr * (g / std), {"step": t, "sum": s}


class Adadelta(Optimizer):
    """Adadelta, as ``torch.optim.Adadelta`` (defaults ``lr=1.0, rho=0.9, eps=1e-6``)::

        g = grad + weight_decay * p
        s = rho * s + (1 - rho) * g * g
        delta = sqrt(a + eps) / sqrt(s + eps) * g
        a = rho * a + (1 - rho) * delta * delta
        p = p - lr * delta

    >>> import kernelgraph as kg
    >>> w = kg.tensor([1.0], requires_grad=True); (w * w).sum().backward()
    >>> kg.optim.Adadelta([w]).step(); round(w.item(), 6)
    0.996838
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False):
        super().__init__(params, {
            "lr": number("learning rate", lr), "rho": number("rho value", rho, 0.0, 1.0),
            "eps": number("epsilon value", eps),
            "weight_decay": number("weight_decay value", weight_decay),
            "maximize": bool(maximize)})

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        return {"step": ((), D.float64, 0.0), "square_avg": (shape, p.dtype, 0.0),
                "acc_delta": (shape, p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        rho, eps = hyper["rho"], hyper["eps"]
        g = _decayed(g, p, hyper)
        s = rho * state["square_avg"] + (1 - rho) * g * g
        std = O.sqrt(s + eps)
        delta = O.sqrt(state["acc_delta"] + eps) / std * g
        a = rho * state["acc_delta"] + (1 - rho) * delta * delta
        new_state = {"step": state["step"] + 1.0, "square_avg": s, "acc_delta": a}
        return _scalar(hyper["lr"], p.dtype) * delta, new_state
