"""``tf.train``'s adaptive optimizers: ``RMSPropOptimizer``, ``AdagradOptimizer`` and
``AdadeltaOptimizer``, with the update formulas of TF1's kernels (``ApplyRMSProp``,
``ApplyCenteredRMSProp``, ``ApplyAdagrad``, ``ApplyAdadelta`` in ``training_ops.cc``) and
TF1's slot names (``get_slot(w, 'rms')`` is the variable ``'w/RMSProp:0'``)."""

from __future__ import annotations

from ... import ops
from .optimizers import Optimizer


class RMSPropOptimizer(Optimizer):
    """TF1's RMSProp. Its ``rms`` slot starts at **one** (PyTorch's at zero), and the
    momentum buffer holds the scaled step, so ``momentum=0`` is plain RMSProp::

        rms = rms + (g * g - rms) * (1 - decay)
        denom = rms + epsilon                    (centered: rms - mg**2 + epsilon,
                                                  with mg = mg + (g - mg) * (1 - decay))
        mom = momentum * mom + learning_rate * g / sqrt(denom)
        var -= mom

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     opt = tf.train.RMSPropOptimizer(0.1)
    ...     train = opt.minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer()); _ = sess.run(train)
    ...         round(float(sess.run(w)), 5), opt.get_slot_names(), opt.get_slot(w, "rms").name
    (0.82459, ['momentum', 'rms'], 'w/RMSProp:0')
    """

    _slot_names = ("rms", "momentum")

    def __init__(self, learning_rate, decay: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-10, use_locking: bool = False, centered: bool = False,
                 name: str = "RMSProp"):
        super().__init__(use_locking, name)
        self._lr, self._decay, self._momentum = learning_rate, decay, momentum
        self._eps, self._centered = epsilon, centered
        if centered:
            self._slot_names = ("rms", "mg", "momentum")

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        specs = {"rms": (shape, p.dtype, 1.0), "momentum": (shape, p.dtype, 0.0)}
        if self._centered:
            specs["mg"] = (shape, p.dtype, 0.0)
        return specs

    def _update(self, p, g, state, hyper):
        rho = self._decay
        rms = state["rms"] + (g * g - state["rms"]) * (1.0 - rho)
        new = {"rms": rms}
        if self._centered:
            mg = state["mg"] + (g - state["mg"]) * (1.0 - rho)
            denom = rms - mg * mg + self._eps
            new["mg"] = mg
        else:
            denom = rms + self._eps
        mom = self._momentum * state["momentum"] + self._lr * g / ops.sqrt(denom)
        new["momentum"] = mom
        return mom, new


class AdagradOptimizer(Optimizer):
    """TF1's Adagrad: ``accum += g * g; var -= learning_rate * g / sqrt(accum)``, the
    accumulator starting at ``initial_accumulator_value`` (0.1).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     opt = tf.train.AdagradOptimizer(0.5, initial_accumulator_value=5.0)
    ...     train = opt.minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer()); _ = sess.run(train)
    ...         round(float(sess.run(w)), 6), opt.get_slot(w, "accumulator").name  # 1 - .5*2/3
    (0.666667, 'w/Adagrad:0')
    """

    _slot_names = ("accumulator",)

    def __init__(self, learning_rate, initial_accumulator_value: float = 0.1,
                 use_locking: bool = False, name: str = "Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._lr, self._initial = learning_rate, initial_accumulator_value

    def _slot_specs(self, p) -> dict:
        return {"accumulator": (tuple(p.shape), p.dtype, self._initial)}

    def _update(self, p, g, state, hyper):
        accum = state["accumulator"] + g * g
        return self._lr * g * ops.rsqrt(accum), {"accumulator": accum}


class AdadeltaOptimizer(Optimizer):
    """TF1's Adadelta (with a learning rate; 1.0 is the paper's)::

        accum = rho * accum + (1 - rho) * g * g
        update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g
        accum_update = rho * accum_update + (1 - rho) * update * update
        var -= learning_rate * update

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     opt = tf.train.AdadeltaOptimizer(1.0)
    ...     _ = opt.minimize(w * w)
    ...     opt.get_slot_names(), opt.get_slot(w, "accum_update").name
    (['accum', 'accum_update'], 'w/Adadelta_1:0')
    """

    _slot_names = ("accum", "accum_update")

    def __init__(self, learning_rate=0.001, rho: float = 0.95, epsilon: float = 1e-8,
                 use_locking: bool = False, name: str = "Adadelta"):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._eps = learning_rate, rho, epsilon

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        return {"accum": (shape, p.dtype, 0.0), "accum_update": (shape, p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        rho, eps = self._rho, self._eps
        accum = rho * state["accum"] + (1.0 - rho) * (g * g)
        update = ops.sqrt(state["accum_update"] + eps) * ops.rsqrt(accum + eps) * g
        accum_update = rho * state["accum_update"] + (1.0 - rho) * (update * update)
        return self._lr * update, {"accum": accum, "accum_update": accum_update}
