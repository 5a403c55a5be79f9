"""``tf.train``'s regularising optimizers: ``FtrlOptimizer``,
``ProximalGradientDescentOptimizer``, ``ProximalAdagradOptimizer`` and ``AdagradDAOptimizer``,
with the formulas of TF1's kernels (``ApplyFtrl``/``ApplyFtrlV2``,
``ApplyProximalGradientDescent``, ``ApplyProximalAdagrad``, ``ApplyAdagradDA``).

These compute the variable's *new value* (an L1 term sets weights to exactly zero); the
shared machinery applies ``var - delta``, so the delta is ``var - new``."""

from __future__ import annotations

from ... import ops
from .optimizers import Optimizer


def _shrink(prox, step, l1: float, l2: float):
    """TF1's proximal step: soft-threshold ``prox`` by ``step * l1``, scale by the L2 term."""
    if l1 > 0:
        prox = ops.sign(prox) * ops.maximum(ops.abs(prox) - step * l1, 0.0)
    return prox / (1.0 + step * l2)


def _check_strength(what: str, value: float) -> float:
    if value < 0.0:
        raise ValueError(f"{what} {value} needs to be positive or zero")
    return value


class ProximalGradientDescentOptimizer(Optimizer):
    """``prox = var - lr * g``; ``var = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     train = tf.train.ProximalGradientDescentOptimizer(
    ...         0.1, l1_regularization_strength=1.0).minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer()); _ = sess.run(train)
    ...         round(float(sess.run(w)), 6)                # 1 - 0.2, less 0.1 * 1
    0.7
    """

    def __init__(self, learning_rate, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._l1 = _check_strength("l1_regularization_strength", l1_regularization_strength)
        self._l2 = _check_strength("l2_regularization_strength", l2_regularization_strength)

    def _update(self, p, g, state, hyper):
        return p - _shrink(p - self._lr * g, self._lr, self._l1, self._l2), {}


class ProximalAdagradOptimizer(Optimizer):
    """Adagrad's step size ``lr / sqrt(accum)`` in the proximal step of
    :class:`ProximalGradientDescentOptimizer`; slot ``'accumulator'``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     opt = tf.train.ProximalAdagradOptimizer(0.5, initial_accumulator_value=5.0)
    ...     _ = opt.minimize(w * w)
    ...     opt.get_slot(w, "accumulator").name
    'w/ProximalAdagrad:0'
    """

    _slot_names = ("accumulator",)

    def __init__(self, learning_rate, initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._lr, self._initial = learning_rate, initial_accumulator_value
        self._l1 = _check_strength("l1_regularization_strength", l1_regularization_strength)
        self._l2 = _check_strength("l2_regularization_strength", l2_regularization_strength)

    def _slot_specs(self, p) -> dict:
        return {"accumulator": (tuple(p.shape), p.dtype, self._initial)}

    def _update(self, p, g, state, hyper):
        accum = state["accumulator"] + g * g
        step = self._lr * ops.rsqrt(accum)
        return p - _shrink(p - step * g, step, self._l1, self._l2), {"accumulator": accum}


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (McMahan et al.), as TF1's kernels compute it (``p = -lr_power``)::

        g_s = g + 2 * l2_shrinkage * var
        new_accum = accum + g * g
        linear += g_s - (new_accum**p - accum**p) / learning_rate * var
        l2' = l2 + beta / (2 * learning_rate)
        var = (l1 * sign(linear) - linear) / (new_accum**p / learning_rate + 2 * l2')
              where |linear| > l1, else 0

    Slots ``'accum'`` (starting at ``initial_accumulator_value``) and ``'linear'``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     opt = tf.train.FtrlOptimizer(0.3)
    ...     _ = opt.minimize(w * w)
    ...     opt.get_slot_names(), opt.get_slot(w, "linear").name
    (['accum', 'linear'], 'w/Ftrl_1:0')
    """

    _slot_names = ("accum", "linear")

    def __init__(self, learning_rate, learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength: float = 0.0, beta=None):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs "
                             "to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be "
                             "negative or zero")
        super().__init__(use_locking, name)
        self._lr, self._power, self._initial = (learning_rate, learning_rate_power,
                                                initial_accumulator_value)
        self._l1 = _check_strength("l1_regularization_strength", l1_regularization_strength)
        self._l2 = _check_strength("l2_regularization_strength", l2_regularization_strength)
        self._shrinkage = _check_strength("l2_shrinkage_regularization_strength",
                                          l2_shrinkage_regularization_strength)
        self._beta = 0.0 if beta is None else beta

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        return {"accum": (shape, p.dtype, self._initial), "linear": (shape, p.dtype, 0.0)}

    def _power_of(self, accum):
        return ops.sqrt(accum) if self._power == -0.5 else ops.pow(accum, -self._power)

    def _update(self, p, g, state, hyper):
        lr, l1 = self._lr, self._l1
        l2 = self._l2 + self._beta / (2.0 * lr)
        shrunk = g + 2.0 * self._shrinkage * p if self._shrinkage > 0 else g
        accum = state["accum"]
        new_accum = accum + g * g
        new_power = self._power_of(new_accum)
        linear = state["linear"] + shrunk - (new_power - self._power_of(accum)) / lr * p
        x = l1 * ops.sign(linear) - linear
        y = new_power / lr + 2.0 * l2
        new = ops.where(ops.greater(ops.abs(linear), l1), x / y, ops.zeros_like(p))
        return p - new, {"accum": new_accum, "linear": linear}


class AdagradDAOptimizer(Optimizer):
    """Adagrad Dual Averaging: the new value from the sums of the gradients and of their
    squares, and the step count ``t = global_step + 1`` (the ``global_step`` given to the
    constructor, which ``minimize(..., global_step=...)`` must increment)::

        g_acc += g;  gg_acc += g * g
        var = -lr * shrink(g_acc) / (l2 * t * lr + sqrt(gg_acc))
        shrink(a) = sign(a) * max(|a| - l1 * t, 0) if l1 > 0 else a

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     step = tf.train.get_or_create_global_step()
    ...     opt = tf.train.AdagradDAOptimizer(0.2, step)
    ...     _ = opt.minimize(w * w, global_step=step)
    ...     opt.get_slot_names()
    ['gradient_accumulator', 'gradient_squared_accumulator']
    """

    _slot_names = ("gradient_accumulator", "gradient_squared_accumulator")

    def __init__(self, learning_rate, global_step,
                 initial_gradient_squared_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        super().__init__(use_locking, name)
        self._lr, self._global_step = learning_rate, global_step
        self._initial = initial_gradient_squared_accumulator_value
        self._l1 = _check_strength("l1_regularization_strength", l1_regularization_strength)
        self._l2 = _check_strength("l2_regularization_strength", l2_regularization_strength)

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        return {"gradient_accumulator": (shape, p.dtype, 0.0),
                "gradient_squared_accumulator": (shape, p.dtype, self._initial)}

    def _update(self, p, g, state, hyper):
        lr = self._lr
        t = ops.cast(self._global_step, dtype=p.dtype) + 1.0
        g_acc = state["gradient_accumulator"] + g
        gg_acc = state["gradient_squared_accumulator"] + g * g
        tmp = g_acc
        if self._l1 > 0:
            tmp = ops.sign(g_acc) * ops.maximum(ops.abs(g_acc) - self._l1 * t, 0.0)
        new = -lr * tmp / (self._l2 * t * lr + ops.sqrt(gg_acc))
        return p - new, {"gradient_accumulator": g_acc, "gradient_squared_accumulator": gg_acc}
