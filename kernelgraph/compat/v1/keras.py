"""The corner of ``tf.keras`` that TF1 tutorials use inside graph code: layers called on graph
tensors (``tf.keras.layers.Dense(10, activation="relu")(x)``, ``SimpleRNNCell``),
``tf.keras.Sequential``
with ``add``, calling it on a tensor, and ``compile`` / ``fit`` / ``predict`` /
``evaluate`` on NumPy arrays, and ``tf.keras.callbacks.Callback``; and
``tf.feature_column.numeric_column`` with ``tf.feature_column.input_layer``.

The layers are :mod:`.layers` (``tf.layers``) underneath, with Keras's defaults: string
activations and initializers, ``MaxPooling2D``'s pool size 2 and strides equal to it, and
variables named as TF1's legacy Keras names them in a graph (``dense/kernel:0``).

``fit`` follows legacy Keras's graph-mode loop (TF 1.x, ``TF_USE_LEGACY_KERAS=1``): batches
of ``batch_size`` (32) in order, shuffled each epoch with NumPy's global generator
(``np.random.shuffle``, as Keras does: ``np.random.seed`` repeats it), one optimizer step per
batch, and an epoch's loss is the mean of the batch losses weighted by batch size. Its
session is the model's own, on the graph the model was built in; its variables are
initialised at the first ``fit`` / ``predict`` / ``evaluate``. ``verbose`` prints one line
per epoch, not Keras's progress bar. Optimizers: ``"sgd"`` (learning rate 0.01),
``"adam"`` (Keras's epsilon 1e-7), ``tf.keras.optimizers.SGD`` / ``Adam``, or any
``tf.train`` optimizer; losses: ``"mse"``, ``"mae"``, ``"binary_crossentropy"``,
``"categorical_crossentropy"``, ``"sparse_categorical_crossentropy"`` (on probabilities,
clipped to [1e-7, 1 - 1e-7] as Keras's backend does); metric ``"accuracy"``.
"""

from __future__ import annotations

import types

import numpy as np

from ... import dtypes as D
from ... import errors, ops
from ...graph import Node, get_default_graph
from ...static.session import Session
from ...static.variables import (
    global_variables,
    global_variables_initializer,
    placeholder,
    variables_initializer,
)
from . import initializers as I
from . import layers as L
from .modes import clear_session
from .nn import _zero_state, bias_add
from .nn import nn as _nn
from .optimizers import AdamOptimizer, GradientDescentOptimizer, MomentumOptimizer, Optimizer
from .spellings import zeros
from .variable_scope import get_variable, unique_scope_name, variable_scope

_ACTIVATIONS = {"relu": ops.relu, "sigmoid": ops.sigmoid, "tanh": ops.tanh,
                "softmax": _nn.softmax, "linear": None, "elu": _nn.elu,
                "softplus": ops.softplus}
_INITIALIZERS = {"glorot_uniform": I.glorot_uniform_initializer,
                 "glorot_normal": I.glorot_normal_initializer, "zeros": I.zeros_initializer,
                 "ones": I.ones_initializer, "he_normal": I.he_normal,
                 "he_uniform": I.he_uniform, "random_normal": I.random_normal_initializer,
                 "random_uniform": I.random_uniform_initializer}


def _activation(a):
    if a is None or callable(a):
        return a
    if a not in _ACTIVATIONS:
        raise ValueError(f"Unknown activation function: {errors.shown(a)} (kernelgraph's "
                         f"tf.keras knows {', '.join(_ACTIVATIONS)})")
    return _ACTIVATIONS[a]


def _initializer(init, default):
    init = default if init is None else init
    if isinstance(init, str):
        if init not in _INITIALIZERS:
            raise ValueError(f"Unknown initializer: {errors.shown(init)} (kernelgraph's "
                             f"tf.keras knows {', '.join(_INITIALIZERS)})")
        return _INITIALIZERS[init]()
    return init


class Layer:
    """A Keras layer: called on a graph tensor, it makes its variables at the first call (in
    a variable scope of its unique name) and shares them with later calls."""

    _default = "layer"

    def __init__(self, name=None, input_shape=None, input_dim=None, **kwargs):
        if input_dim is not None:
            input_shape = (input_dim,)
        self.input_shape = None if input_shape is None else tuple(input_shape)
        self.name = name or unique_scope_name(self._default)
        self._built = False

    def __call__(self, inputs):
        inputs = inputs if isinstance(inputs, Node) else ops.identity(np.asarray(inputs))
        out = self.call(inputs, reuse=True if self._built else None)
        self._built = True
        return out

    def call(self, inputs, reuse=None):
        raise NotImplementedError


class Dense(Layer):
    """``tf.keras.layers.Dense(units, activation=None, ...)``."""

    _default = "dense"

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.units, self.activation = int(units), _activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializer(kernel_initializer, "glorot_uniform")
        self.bias_initializer = _initializer(bias_initializer, "zeros")

    def call(self, inputs, reuse=None):
        return L.dense(inputs, self.units, self.activation, self.use_bias,
                       self.kernel_initializer, self.bias_initializer, name=self.name,
                       reuse=reuse)


class Conv2D(Layer):
    """``tf.keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding="valid", ...)``."""

    _default = "conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 **kwargs):
        super().__init__(**kwargs)
        self.args = dict(filters=filters, kernel_size=kernel_size, strides=strides,
                         padding=padding, data_format=data_format or "channels_last",
                         dilation_rate=dilation_rate, activation=_activation(activation),
                         use_bias=use_bias,
                         kernel_initializer=_initializer(kernel_initializer, "glorot_uniform"),
                         bias_initializer=_initializer(bias_initializer, "zeros"))

    def call(self, inputs, reuse=None):
        return L.conv2d(inputs, name=self.name, reuse=reuse, **self.args)


class MaxPooling2D(Layer):
    """``tf.keras.layers.MaxPooling2D(pool_size=(2, 2), strides=None, padding="valid")``:
    strides default to the pool size."""

    _default = "max_pooling2d"

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid",
                 data_format="channels_last", **kwargs):
        super().__init__(**kwargs)
        self.args = dict(pool_size=pool_size, strides=pool_size if strides is None else strides,
                         padding=padding, data_format=data_format or "channels_last")

    def call(self, inputs, reuse=None):
        return L.max_pooling2d(inputs, **self.args)


class Flatten(Layer):
    """``tf.keras.layers.Flatten()``: (batch, everything else)."""

    _default = "flatten"

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format or "channels_last"

    def call(self, inputs, reuse=None):
        return L.flatten(inputs, data_format=self.data_format)


class Dropout(Layer):
    """``tf.keras.layers.Dropout(rate)``: the identity when called on a tensor (Keras's
    inference behaviour in a graph without a learning phase); ``compile`` refuses a model
    that holds one, since this ``fit`` has no learning phase to drop units in."""

    _default = "dropout"

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate

    def call(self, inputs, reuse=None):
        return inputs


class _Orthogonal(I._Random):
    """Keras's ``Orthogonal`` initializer: the Q of a QR of normal draws, its signs fixed by
    R's diagonal (drawn from kernelgraph's generator, not TF's numbers)."""

    def __init__(self, gain=1.0, seed=None, dtype=None):
        super().__init__(seed, dtype)
        self.gain = gain

    def value(self, shape, dtype=None):
        rows, cols = int(np.prod(shape[:-1])), int(shape[-1])
        a = self._rng().standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        q = q.T if rows < cols else q
        return (self.gain * q).reshape(shape).astype(I._dtype(dtype, self.dtype))


class SimpleRNNCell(Layer):
    """``tf.keras.layers.SimpleRNNCell(units)``: ``h' = activation(x @ kernel + bias + h @
    recurrent_kernel)``, with Keras's three variables (``simple_rnn_cell/kernel``,
    ``recurrent_kernel`` orthogonal, ``bias``). Called as Keras calls it, ``cell(x, [h])``
    gives ``(h', [h'])`` (a bare state gives a bare state), so ``tf.nn.static_rnn`` can run
    it too. Dropout is not implemented."""

    _default = "simple_rnn_cell"

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if dropout or recurrent_dropout:
            raise NotImplementedError("kernelgraph's SimpleRNNCell has no dropout")
        self.units, self.activation = int(units), _activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializer(kernel_initializer, "glorot_uniform")
        self.recurrent_initializer = (_Orthogonal() if recurrent_initializer == "orthogonal"
                                      else _initializer(recurrent_initializer, None))
        self.bias_initializer = _initializer(bias_initializer, "zeros")

    state_size = output_size = property(lambda self: self.units)

    def __call__(self, inputs, states):
        inputs = inputs if isinstance(inputs, Node) else ops.identity(np.asarray(inputs))
        nested = isinstance(states, list | tuple)
        h = states[0] if nested else states
        size = None if inputs.shape is None else inputs.shape[-1]
        if size is None:
            raise ValueError("SimpleRNNCell: the last dimension of the inputs must be known")
        with variable_scope(self.name, reuse=True if self._built else None):
            kernel = get_variable("kernel", (int(size), self.units), dtype=inputs.dtype,
                                  initializer=self.kernel_initializer)
            recurrent = get_variable("recurrent_kernel", (self.units, self.units),
                                     dtype=inputs.dtype, initializer=self.recurrent_initializer)
            out = ops.matmul(inputs, kernel)
            if self.use_bias:
                out = bias_add(out, get_variable("bias", (self.units,), dtype=inputs.dtype,
                                                 initializer=self.bias_initializer))
            out = ops.add(out, ops.matmul(h, recurrent))
            if self.activation is not None:
                out = self.activation(out)
        self._built = True
        return out, ([out] if nested else out)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zeros (batch, units): the batch of ``inputs`` (its run-time batch), or
        ``batch_size``."""
        if inputs is not None:
            return _zero_state(inputs, self.units, D.as_dtype(dtype or inputs.dtype))
        return zeros([batch_size, self.units], dtype=dtype or D.float32)

    def zero_state(self, batch_size, dtype):
        """TF1's cell method: zeros (batch_size, units)."""
        return zeros([batch_size, self.units], dtype=dtype)


class Callback:
    """``tf.keras.callbacks.Callback``: subclass it and override the hooks ``fit`` calls
    (``on_train_begin`` / ``end``, ``on_epoch_begin`` / ``end``, ``on_batch_begin`` /
    ``end``, ``on_train_batch_begin`` / ``end``); ``self.model`` is the model being fitted,
    ``self.params`` its ``epochs``, ``steps`` and ``verbose``."""

    def __init__(self):
        self.model, self.params = None, {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_batch_begin(self, batch, logs=None): ...
    def on_batch_end(self, batch, logs=None): ...
    def on_train_batch_begin(self, batch, logs=None): ...
    def on_train_batch_end(self, batch, logs=None): ...


class History(Callback):
    """What ``fit`` returns: ``history.history["loss"]`` holds each epoch's loss."""

    def __init__(self):
        super().__init__()
        self.epoch, self.history = [], {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


def _optimizer(opt):
    if isinstance(opt, Optimizer):
        return opt
    if opt == "sgd":
        return GradientDescentOptimizer(0.01)
    if opt == "adam":
        return AdamOptimizer(0.001, epsilon=1e-7)
    if opt == "rmsprop":
        raise NotImplementedError("kernelgraph's tf.keras has no 'rmsprop' (Keras's RMSprop "
                                  "differs from tf.train.RMSPropOptimizer): pass a tf.train "
                                  "optimizer")
    raise ValueError(f"Unknown optimizer: {errors.shown(opt)} ('sgd', 'adam' or an optimizer "
                     "object)")


def SGD(learning_rate=0.01, momentum=0.0, nesterov=False, lr=None, **kwargs):  # noqa: N802
    """``tf.keras.optimizers.SGD``: gradient descent, with momentum if given (Keras's rule
    is TF1's MomentumOptimizer's)."""
    lr = learning_rate if lr is None else lr
    if momentum:
        return MomentumOptimizer(lr, momentum, use_nesterov=nesterov)
    return GradientDescentOptimizer(lr)


def Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, lr=None,  # noqa: N802
         **kwargs):
    """``tf.keras.optimizers.Adam`` (TF1's AdamOptimizer with Keras's epsilon)."""
    return AdamOptimizer(learning_rate if lr is None else lr, beta_1, beta_2, epsilon)


_EPS = 1e-7


def _clipped(p):
    return ops.clip(p, min=_EPS, max=1.0 - _EPS)


def _loss(name, y, p):
    """Keras's per-sample loss (the mean over the last axis, or the crossentropy)."""
    if name in ("mse", "mean_squared_error"):
        d = ops.sub(p, y)
        return ops.mean(ops.mul(d, d), axis=-1)
    if name in ("mae", "mean_absolute_error"):
        return ops.mean(ops.abs(ops.sub(p, y)), axis=-1)
    if name == "binary_crossentropy":
        q = _clipped(p)
        one = ops.sub(1.0, y)
        return ops.mean(ops.neg(ops.add(ops.mul(y, ops.log(q)),
                                        ops.mul(one, ops.log(ops.sub(1.0, q))))), axis=-1)
    if name == "categorical_crossentropy":
        q = ops.div(p, ops.sum(p, axis=-1, keepdims=True))
        return ops.neg(ops.sum(ops.mul(y, ops.log(_clipped(q))), axis=-1))
    if name == "sparse_categorical_crossentropy":
        depth = p.shape[-1]
        hot = ops.one_hot(ops.cast(ops.reshape(y, shape=(-1,)), dtype=D.int64), depth=depth,
                          dtype=p.dtype)
        return ops.neg(ops.sum(ops.mul(hot, ops.log(_clipped(p))), axis=-1))
    raise ValueError(f"Unknown loss function: {errors.shown(name)}")


class Sequential:
    """``tf.keras.Sequential([layers])``: layers applied in order; callable on a graph
    tensor, and trainable on NumPy arrays with ``compile`` and ``fit`` (see the module)."""

    def __init__(self, layers=None, name=None):
        self.layers, self.name = [], name or unique_scope_name("sequential")
        self.graph = get_default_graph()
        self.inputs = self.outputs = None
        self._session = self._compiled = None
        for layer in layers or ():
            self.add(layer)

    def add(self, layer):
        """Append a layer; the first one's ``input_shape`` makes the model's input."""
        self.layers.append(layer)
        if len(self.layers) == 1 and getattr(layer, "input_shape", None) is not None:
            with self.graph.as_default():
                self.inputs = placeholder(D.float32, shape=(None, *layer.input_shape),
                                          name=f"{layer.name}_input")
        if self.inputs is not None:
            with self.graph.as_default():
                self.outputs = self(self.inputs)

    def __call__(self, inputs):
        out = inputs
        for layer in self.layers:
            out = layer(out)
        return out

    def compile(self, optimizer="sgd", loss=None, metrics=None, **kwargs):
        """Choose the optimizer, the loss (a name) and the metrics (``"accuracy"``); the
        training graph is made now, or, without an ``input_shape``, at the first ``fit`` /
        ``evaluate`` (from the data's shape, as Keras builds a model late)."""
        if not isinstance(loss, str):
            raise ValueError(f"compile: loss must be a loss's name, got {errors.shown(loss)}")
        if any(isinstance(layer, Dropout) for layer in self.layers):
            # Keras drops units while fitting (its learning phase); this fit has no phase
            raise NotImplementedError("kernelgraph's tf.keras fits no model with Dropout "
                                      "layers: use tf.layers.dropout with a training "
                                      "placeholder in your own loop")
        for m in metrics or ():
            if m not in ("accuracy", "acc"):
                raise ValueError(f"kernelgraph's tf.keras knows the metric 'accuracy', got "
                                 f"{errors.shown(m)}")
        self._compiled = types.SimpleNamespace(optimizer=_optimizer(optimizer), loss=loss,
                                               metrics=list(metrics or ()), step=None)
        if self.outputs is not None:
            self._training_graph()

    def _build(self, x):
        """The model's input and output, from the data's shape where no layer gave one."""
        if self.outputs is None:
            with self.graph.as_default():
                self.inputs = placeholder(D.float32, shape=(None, *np.shape(x)[1:]),
                                          name=f"{self.layers[0].name}_input")
                self.outputs = self(self.inputs)
        if self._compiled is not None and self._compiled.step is None:
            self._training_graph()

    def _training_graph(self):
        c, out = self._compiled, self.outputs
        with self.graph.as_default():
            before = set(global_variables())
            c.y = placeholder(out.dtype, shape=(None, *out.shape[1:]) if
                              c.loss != "sparse_categorical_crossentropy" else (None,),
                              name=f"{self.layers[-1].name}_target")
            total = ops.mean(_loss(c.loss, c.y, out))
            c.step = c.optimizer.minimize(total)
            c.fetch = {"loss": total}
            for m in c.metrics:
                c.fetch[m] = ops.mean(ops.cast(self._hits(c.loss, c.y, out), dtype=D.float32))
            if self._session is not None:  # compiled after a predict: the optimizer's slots
                self._session.run(variables_initializer(
                    [v for v in global_variables() if v not in before]))

    @staticmethod
    def _hits(loss, y, out):
        if loss == "binary_crossentropy" or out.shape[-1] == 1:
            return ops.equal(y, ops.cast(ops.greater(out, 0.5), dtype=out.dtype))
        guess = ops.argmax(out, axis=-1)
        if loss == "sparse_categorical_crossentropy":
            return ops.equal(ops.cast(ops.reshape(y, shape=(-1,)), dtype=D.int64), guess)
        return ops.equal(ops.argmax(y, axis=-1), guess)

    def _sess(self) -> Session:
        if self._session is None:
            self._session = Session(graph=self.graph)
            with self.graph.as_default():
                # a new session: every variable of the graph is uninitialised in it
                self._session.run(global_variables_initializer())
        return self._session

    def _batches(self, n, batch_size, shuffle):
        order = np.arange(n)
        if shuffle:
            np.random.shuffle(order)
        return [order[k:k + batch_size] for k in range(0, n, batch_size)]

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            shuffle=True, **kwargs):
        """Train on NumPy arrays: ``epochs`` passes over ``x`` in batches of ``batch_size``
        (32); returns a History."""
        if self._compiled is None:
            raise RuntimeError("You must compile your model before training/testing. Use "
                               "`model.compile(optimizer, loss)`.")
        x, y = np.asarray(x, np.float32), np.asarray(y)
        self._build(x)
        sess, c, bs = self._sess(), self._compiled, int(batch_size or 32)
        history = History()
        cbs = [history, *(callbacks or ())]
        steps = -(-len(x) // bs)
        for cb in cbs:
            cb.set_model(self)
            cb.set_params({"epochs": epochs, "steps": steps, "verbose": verbose})
            cb.on_train_begin({})
        for epoch in range(epochs):
            for cb in cbs:
                cb.on_epoch_begin(epoch, {})
            sums = dict.fromkeys(c.fetch, 0.0)
            for b, idx in enumerate(self._batches(len(x), bs, shuffle)):
                for cb in cbs:
                    cb.on_batch_begin(b, {"batch": b, "size": len(idx)})
                    cb.on_train_batch_begin(b, {"batch": b, "size": len(idx)})
                got = sess.run([c.fetch, c.step], {self.inputs: x[idx], c.y: y[idx]})[0]
                for k, v in got.items():
                    sums[k] += float(v) * len(idx)
                logs = {"batch": b, "size": len(idx), **{k: float(v) for k, v in got.items()}}
                for cb in cbs:
                    cb.on_batch_end(b, logs)
                    cb.on_train_batch_end(b, logs)
            logs = {k: s / len(x) for k, s in sums.items()}
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs} - "
                      + " - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
            for cb in cbs:
                cb.on_epoch_end(epoch, logs)
        for cb in cbs:
            cb.on_train_end({})
        return history

    def predict(self, x, batch_size=None, verbose=0, **kwargs):
        """The model's outputs on ``x``, computed in batches of ``batch_size`` (32)."""
        x = np.asarray(x, np.float32)
        self._build(x)
        bs, sess = int(batch_size or 32), self._sess()
        parts = [sess.run(self.outputs, {self.inputs: x[k:k + bs]})
                 for k in range(0, len(x), bs)]
        return np.concatenate(parts) if parts else np.zeros((0, *self.outputs.shape[1:]))

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, **kwargs):
        """The loss (and the metrics) on ``x`` and ``y``, averaged over the samples."""
        if self._compiled is None:
            raise RuntimeError("You must compile your model before training/testing.")
        x, y, bs = np.asarray(x, np.float32), np.asarray(y), int(batch_size or 32)
        self._build(x)
        c, sess = self._compiled, self._sess()
        sums = dict.fromkeys(c.fetch, 0.0)
        for k in range(0, len(x), bs):
            got = sess.run(c.fetch, {self.inputs: x[k:k + bs], c.y: y[k:k + bs]})
            for key, v in got.items():
                sums[key] += float(v) * len(x[k:k + bs])
        values = [s / len(x) for s in sums.values()]
        return values[0] if len(values) == 1 else values


# -- tf.feature_column ---------------------------------------------------------------------
class NumericColumn(types.SimpleNamespace):
    """What ``tf.feature_column.numeric_column`` returns: a feature's key, shape, dtype,
    default value and normaliser."""


def numeric_column(key, shape=(1,), default_value=None, dtype=D.float32, normalizer_fn=None):
    """``tf.feature_column.numeric_column(key, shape=(1,))``: a dense feature read from
    ``features[key]`` by ``input_layer``."""
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Given: {errors.shown(key)}")
    shape = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
    if D.as_dtype(dtype).kind not in "fiu":
        raise ValueError(f"dtype must be convertible to float. dtype: {errors.shown(dtype)}, "
                         f"key: {key}")
    return NumericColumn(key=key, name=key, shape=shape, default_value=default_value,
                         dtype=D.as_dtype(dtype), normalizer_fn=normalizer_fn)


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """``tf.feature_column.input_layer``: the columns' tensors, each flattened to (batch,
    prod(shape)) as float32, concatenated in the order of the columns' names (TF's)."""
    cols = sorted(feature_columns, key=lambda c: c.name)
    if not cols:
        raise ValueError("Expected feature_columns to be iterable, found empty.")
    parts = []
    for col in cols:
        if not isinstance(col, NumericColumn):
            raise NotImplementedError(f"kernelgraph's input_layer takes numeric columns, got "
                                      f"{errors.shown(col)}")
        if col.key not in features:
            raise ValueError(f"The feature '{col.key}' is not in the features dictionary.")
        value = features[col.key]
        value = value if isinstance(value, Node) else ops.identity(np.asarray(value))
        value = ops.cast(value, dtype=D.float32)
        if col.normalizer_fn is not None:
            value = col.normalizer_fn(value)
        parts.append(ops.reshape(value, shape=(-1, int(np.prod(col.shape)))))
    return parts[0] if len(parts) == 1 else ops.concat(parts, axis=1)


keras = types.SimpleNamespace(
    layers=types.SimpleNamespace(Dense=Dense, Conv2D=Conv2D, MaxPooling2D=MaxPooling2D,
                                 MaxPool2D=MaxPooling2D, Flatten=Flatten, Dropout=Dropout,
                                 SimpleRNNCell=SimpleRNNCell, Layer=Layer),
    Sequential=Sequential, models=types.SimpleNamespace(Sequential=Sequential),
    callbacks=types.SimpleNamespace(Callback=Callback, History=History),
    optimizers=types.SimpleNamespace(SGD=SGD, Adam=Adam),
    backend=types.SimpleNamespace(clear_session=clear_session),
)
"""The ``tf.keras`` namespace (the part of it TF1 graph code uses)."""
feature_column = types.SimpleNamespace(numeric_column=numeric_column, input_layer=input_layer)
"""The ``tf.feature_column`` namespace (numeric columns)."""

__all__ = ["feature_column", "keras"]
