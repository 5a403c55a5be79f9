"""``torch.optim.LBFGS``: limited-memory BFGS, PyTorch's algorithm step by step (its two-loop
recursion over ``history_size`` pairs, its first step ``min(1, 1 / |g|_1) * lr``, its stopping
tests, and with ``line_search_fn='strong_wolfe'`` its cubic-interpolation line search).

Each ``step(closure)`` runs up to ``max_iter`` iterations, calling ``closure()`` (which zeroes
the gradients, computes the loss, calls ``backward()`` and returns the loss) to re-evaluate.
The vectors (flattened gradients, directions, history) are NumPy arrays of the parameters'
dtype and the scalars are NumPy scalars of it, as PyTorch's are 0-d tensors of it; so the
parameters follow PyTorch's to the last bit or so (PyTorch's dot products sum in BLAS's
order; its ``add(alpha=)`` is a fused multiply-add, and so is this one's).

>>> import kernelgraph as kg
>>> x = kg.tensor([1.5, -0.5], requires_grad=True)
>>> opt = LBFGS([x], line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad()
...     loss = ((x - kg.tensor([1.0, 2.0])) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> [round(v, 4) for v in x.tolist()]
[1.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from .. import devices
from ..eager.creation import tensor
from ..eager.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _axpy(x: np.ndarray, alpha, y: np.ndarray) -> np.ndarray:
    """``x + alpha * y`` rounded once, as PyTorch's ``x.add(y, alpha=alpha)`` (a fused
    multiply-add): the float32 product is exact in float64."""
    wide = x.astype(np.float64) + np.float64(x.dtype.type(alpha)) * y.astype(np.float64)
    return wide.astype(x.dtype)


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    # the minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), within bounds
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (PyTorch's port of
    minFunc's): bracket, then zoom by cubic interpolation. Returns (f, g, t, evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # safeguard: a point too close to the bracket's ends makes too little progress
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """``LBFGS(params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
    tolerance_change=1e-9, history_size=100, line_search_fn=None)``; ``step(closure)`` needs
    the closure. One parameter group only, as in PyTorch."""

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size,
                                  "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._plist = self.param_groups[0]["params"]
        dtypes = {np.dtype(p.dtype) for p in self._plist}
        if len(dtypes) != 1 or next(iter(dtypes)).kind != "f":
            raise TypeError(f"LBFGS needs floating-point parameters of one dtype, got "
                            f"{sorted(str(d) for d in dtypes)}")
        self._dtype = next(iter(dtypes)).type

    def add_param_group(self, param_group: dict) -> None:
        if getattr(self, "_plist", None) is not None:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def minimize(self, *args, **kwargs):
        raise NotImplementedError("LBFGS runs in eager mode only: each step re-evaluates the "
                                  "loss through a closure, which a static graph cannot call "
                                  "(use a first-order optimizer's minimize())")

    def state_dict(self) -> dict:
        """PyTorch's layout; the state (iteration counts, the direction, the history lists)
        is kept as it is, copied: NumPy arrays and numbers, as PyTorch keeps its tensors and
        numbers."""
        groups = [{**self._group_hyper(g), "params": list(range(len(g["params"])))}
                  for g in self.param_groups]
        state = self.state.get(self._plist[0])
        copied = {0: {k: _copy(v) for k, v in state.items()}} if state else {}
        return {"state": copied, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` returned."""
        (saved,) = state_dict["param_groups"]
        if len(saved["params"]) != len(self._plist):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        self.param_groups[0].update({k: v for k, v in saved.items() if k != "params"})
        for k, s in state_dict["state"].items():
            self.state[self._plist[int(k)]] = {n: _copy(v) for n, v in s.items()}

    def _gather_flat_grad(self) -> np.ndarray:
        views = [np.zeros(p.numel(), self._dtype) if p.grad is None
                 else devices.to_numpy(p.grad._array).reshape(-1) for p in self._plist]
        return np.concatenate(views).astype(self._dtype, copy=True)

    def _add_grad(self, step_size, update: np.ndarray) -> None:
        offset = 0
        for p in self._plist:
            n = p.numel()
            value = _axpy(devices.to_numpy(p._array), step_size,
                          update[offset:offset + n].reshape(p.shape))
            p.copy_(tensor(value))
            offset += n

    def _clone_param(self) -> list:
        return [p.detach().clone() for p in self._plist]

    def _set_param(self, params_data) -> None:
        for p, pdata in zip(self._plist, params_data, strict=True):
            p.copy_(pdata)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):  # noqa: C901 - PyTorch's one loop, kept whole to compare
        """Up to ``max_iter`` L-BFGS iterations; returns the loss ``closure()`` gave first."""
        if closure is None:
            raise RuntimeError("LBFGS.step() needs a closure that re-evaluates the loss")
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        f32 = self._dtype
        state = self.state[self._plist[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")  # noqa: N806 - PyTorch's name
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter, opt_cond = 0, False
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1  # noqa: N806
            else:
                y = flat_grad - prev_flat_grad
                s = d * f32(t)
                ys = y.dot(s)
                if ys > 1e-10:  # update the memory only while the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(f32(1.0) / ys)
                    H_diag = ys / y.dot(y)  # noqa: N806
                num_old = len(old_dirs)
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad  # the two-loop recursion: d = -H g
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = _axpy(q, -al[i], old_dirs[i])
                d = r = q * f32(H_diag)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r[:] = _axpy(r, al[i] - be_i, old_stps[i])
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, f32(1.0) / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * f32(t)).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
