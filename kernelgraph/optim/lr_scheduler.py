"""Learning-rate schedulers (``torch.optim.lr_scheduler``): ``StepLR``, ``ExponentialLR``,
``MultiStepLR``, ``LambdaLR``, ``MultiplicativeLR``, ``CosineAnnealingLR``, with PyTorch's
chained formulas (so the learning rates agree to the last bit).

A scheduler writes ``optimizer.param_groups[i]['lr']`` at each ``step()``, which the next
eager ``optimizer.step()`` reads. In static mode a train op reads the rate it was built with
(feed a placeholder learning rate to schedule a graph).

>>> import kernelgraph as kg
>>> from kernelgraph.optim.lr_scheduler import StepLR
>>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=1.0)
>>> sched = StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for epoch in range(5):
...     opt.step()
...     lrs.append(sched.get_last_lr()[0])
...     sched.step()
>>> lrs
[1.0, 1.0, 0.5, 0.5, 0.25]
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter

from .optimizer import Optimizer

__all__ = ["CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR", "MultiStepLR",
           "MultiplicativeLR", "ReduceLROnPlateau", "StepLR"]


class LRScheduler:
    """Base class: remembers each group's ``initial_lr`` (``base_lrs``), counts epochs in
    ``last_epoch`` and, at each :meth:`step`, writes :meth:`get_lr` into the groups."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming an optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list:
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last :meth:`step` set, one per parameter group.

        >>> import kernelgraph as kg
        >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=0.1)
        >>> kg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5).get_last_lr()
        [0.1]
        """
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Next epoch: ``last_epoch += 1`` and the groups' ``lr`` updated (call it after
        ``optimizer.step()``, as in PyTorch)."""
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = int(epoch)
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Everything but the optimizer (PyTorch's ``state_dict``)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply the learning rates by ``gamma`` every ``step_size`` epochs.

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=1.0)
    >>> s = kg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1); s.step()
    >>> s.get_last_lr()
    [0.1]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1):
        self.step_size = int(step_size)
        if self.step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rates by ``gamma`` at each epoch in ``milestones``.

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=1.0)
    >>> s = kg.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> [(s.step(), s.get_last_lr()[0])[1] for _ in range(4)]
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1,
                 last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch not in self.milestones:
            return self._current()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current()]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rates by ``gamma`` every epoch.

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=1.0)
    >>> s = kg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5); s.step(); s.step()
    >>> s.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self._is_initial:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


def _lambdas(optimizer: Optimizer, lr_lambda, what: str) -> list:
    if isinstance(lr_lambda, list | tuple):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                             f"{len(lr_lambda)}")
        return list(lr_lambda)
    if not callable(lr_lambda):
        raise TypeError(f"{what}: lr_lambda must be a function or a list of functions")
    return [lr_lambda] * len(optimizer.param_groups)


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)`` (one function, or one per group).

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=2.0)
    >>> s = kg.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1)); s.step()
    >>> s.get_last_lr()
    [1.0]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.lr_lambdas = _lambdas(optimizer, lr_lambda, "LambdaLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(LRScheduler):
    """``lr = lr * lr_lambda(epoch)`` every epoch after the first.

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=1.0)
    >>> s = kg.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5); s.step()
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.lr_lambdas = _lambdas(optimizer, lr_lambda, "MultiplicativeLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        if self.last_epoch > 0:
            return [lr * f(self.last_epoch) for f, lr in zip(self.lr_lambdas, self._current())]
        return self._current()


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial rates down to ``eta_min`` over ``T_max`` epochs
    (PyTorch's recursive form).

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=1.0)
    >>> s = kg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2); s.step()
    >>> round(s.get_last_lr()[0], 6)
    0.5
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        e, t, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and e > 0:
            return [lo + (base - lo) * (1 + math.cos(e * math.pi / t)) / 2
                    for base in self.base_lrs]
        if (e - 1 - t) % (2 * t) == 0:
            return [lr + (base - lo) * (1 - math.cos(math.pi / t)) / 2
                    for base, lr in zip(self.base_lrs, self._current())]
        return [(1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t))
                * (lr - lo) + lo for lr in self._current()]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rates by ``factor`` when ``step(metric)`` has not improved for more than
    ``patience`` epochs (``torch.optim.lr_scheduler.ReduceLROnPlateau``).

    >>> import kernelgraph as kg
    >>> opt = kg.optim.SGD([kg.zeros(1).requires_grad_()], lr=1.0)
    >>> s = kg.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [3.0, 2.0, 2.0, 2.0, 2.0]:
    ...     s.step(loss)
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0, eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.optimizer, self.factor = optimizer, factor
        groups = len(optimizer.param_groups)
        if isinstance(min_lr, list | tuple):
            if len(min_lr) != groups:
                raise ValueError(f"expected {groups} min_lrs, got {len(min_lr)}")
            self.min_lrs = list(min_lr)
        else:
            self.min_lrs = [min_lr] * groups
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.last_epoch = 0
        self._last_lr = self._current()
        self.best, self.num_bad_epochs, self.cooldown_counter = self.mode_worse, 0, 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if self.threshold_mode == "rel" \
                else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if self.threshold_mode == "rel" \
            else a > best + self.threshold

    def step(self, metrics, epoch: int | None = None) -> None:  # noqa: D417
        """Record this epoch's ``metrics`` (a loss: a number or a one-element tensor)."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for i, group in enumerate(self.optimizer.param_groups):
                old = float(group["lr"])
                new = max(old * self.factor, self.min_lrs[i])
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._current()
