"""Time one model in eager and static mode, phase by phase, and plot it as results arrive.

Phases, all measured on the real engine with ``time.perf_counter``:

- **construction**: static -- building the graph, its gradients and the initializer (the
  builder runs inside a fresh ``kg.Graph``); eager -- the extra cost of recording the graph
  while computing: the forward pass with autograd recording minus the same forward pass
  under ``kg.no_grad()`` (clamped at 0; eager mode pays it on every step);
- **compilation**: static -- the first ``Session.run`` (which builds and caches the plan)
  minus the fastest later run; eager -- 0, nothing is compiled;
- **execution**: static -- all runs minus the compilation; eager -- forward + ``backward()``
  minus the construction.

A third mode, ``"autobatch"`` (``modes=("static", "eager", "autobatch")``), runs the eager
model's per-step code for every step inside one ``with kg.autobatch():`` block, sums the
losses and calls ``backward()`` once, as DyNet users write a minibatch: construction is the
time spent recording the deferred ops, execution the batched run and its backward.

Numba compiles each kernel once per process; a warm-up run before the sweep keeps that
one-off cost out of both modes. Setting up data and initialising variables is not timed.

>>> rows = compare(values=(1, 2), sweep="samples", display=False,
...                config={"inputs": 4, "hidden": 8, "classes": 3})
>>> [(r["mode"], r["value"]) for r in rows]
[('static', 1), ('eager', 1), ('static', 2), ('eager', 2)]
>>> all(r["execution"] > 0 for r in rows), rows[0]["loss"] == rows[1]["loss"]
(True, True)
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ipywidgets
import numpy as np

import kernelgraph as kg

from .widget import RedisplayMixin

PHASES = ("construction", "compilation", "execution")
DEFAULT_CONFIG = {"samples": 16, "batch": 1, "inputs": 32, "hidden": 64, "classes": 10,
                  "seed": 0}
_ALIASES = {"batch_size": "batch", "input_size": "inputs", "n_samples": "samples",
            "hidden_size": "hidden"}


@dataclass
class Model:
    """One model written for both modes.

    - ``data(cfg) -> data``: inputs, labels and initial weights (not timed);
    - ``static(cfg, data) -> (fetches, feed_for)``: builds the graph (called inside a fresh
      ``kg.Graph``; timed as construction); ``feed_for(step)`` gives that step's feed_dict;
    - ``eager(cfg, data) -> forward``: sets up parameter tensors (not timed);
      ``forward(step)`` computes that step's scalar loss (the harness calls ``backward()``).

    ``cfg`` holds ``samples``, ``batch`` (one step per batch), ``inputs``, ``hidden``,
    ``classes``, ``seed`` and whatever keys a custom model reads.
    """

    name: str
    data: Callable[[dict], object]
    static: Callable[[dict, object], tuple]
    eager: Callable[[dict, object], Callable[[int], kg.Tensor]]


def steps_of(cfg: dict) -> int:
    return max(1, math.ceil(cfg["samples"] / cfg["batch"]))


def _mlp_data(cfg):
    rng = np.random.default_rng(cfg.get("seed", 0))
    n = steps_of(cfg) * cfg["batch"]
    x = rng.standard_normal((n, cfg["inputs"])).astype(np.float32)
    y = rng.integers(0, cfg["classes"], size=n).astype(np.int64)
    w1 = (rng.standard_normal((cfg["inputs"], cfg["hidden"])) /
          np.sqrt(cfg["inputs"])).astype(np.float32)
    w2 = (rng.standard_normal((cfg["hidden"], cfg["classes"])) /
          np.sqrt(cfg["hidden"])).astype(np.float32)
    return x, y, w1, w2


def _mlp_static(cfg, data):
    x_all, y_all, w1_init, w2_init = data
    b = cfg["batch"]
    x = kg.placeholder(kg.float32, shape=[None, cfg["inputs"]], name="x")
    y = kg.placeholder(kg.int64, shape=[None], name="y")
    with kg.name_scope("layer1"):
        w1 = kg.Variable(w1_init, name="W")
        h = kg.relu(kg.matmul(x, w1))
    with kg.name_scope("layer2"):
        w2 = kg.Variable(w2_init, name="W")
        logits = kg.matmul(h, w2)
    loss = kg.reduce_mean(kg.softmax_cross_entropy(logits, y), name="loss")
    grads = kg.gradients(loss, [w1, w2])

    def feed_for(step):
        return {x: x_all[step * b:(step + 1) * b], y: y_all[step * b:(step + 1) * b]}

    return [loss, grads], feed_for


def _mlp_eager(cfg, data):
    x_all, y_all, w1_init, w2_init = data
    b = cfg["batch"]
    w1 = kg.tensor(w1_init, requires_grad=True)
    w2 = kg.tensor(w2_init, requires_grad=True)
    xs = [kg.tensor(x_all[i * b:(i + 1) * b]) for i in range(steps_of(cfg))]
    ys = [kg.tensor(y_all[i * b:(i + 1) * b]) for i in range(steps_of(cfg))]

    def forward(step):
        h = kg.relu(kg.matmul(xs[step], w1))
        return kg.mean(kg.softmax_cross_entropy(kg.matmul(h, w2), ys[step]))

    return forward


def mlp_model() -> Model:
    """The default model: ``loss = mean(softmax_cross_entropy(relu(x @ W1) @ W2, y))`` and
    its gradients with respect to W1 and W2, on random data (same weights in both modes)."""
    return Model("MLP", _mlp_data, _mlp_static, _mlp_eager)


def _first_value(out):
    while isinstance(out, list | tuple):
        out = out[0]
    return float(np.asarray(out))


def measure_static(model: Model, cfg: dict, data=None) -> dict:
    """Time construction, compilation and execution of ``model`` in static mode."""
    data = model.data(cfg) if data is None else data
    graph = kg.Graph()
    t0 = time.perf_counter()
    with graph.as_default():
        fetches, feed_for = model.static(cfg, data)
        init = kg.global_variables_initializer()
    construction = time.perf_counter() - t0
    times = []
    with kg.Session(graph=graph) as sess:
        sess.run(init)
        for step in range(steps_of(cfg)):
            feed = feed_for(step)
            t = time.perf_counter()
            out = sess.run(fetches, feed)
            times.append(time.perf_counter() - t)
        extra = []  # two more runs, not counted, so that one step still has a baseline
        for _ in range(2):
            t = time.perf_counter()
            sess.run(fetches, feed_for(0))
            extra.append(time.perf_counter() - t)
    # The fastest later run is the cost of a run without compiling (a pause in one later
    # run cannot hide the compilation then).
    steady = min(times[1:] + extra)
    compilation = max(times[0] - steady, 0.0)
    execution = sum(times) - compilation
    return _row("static", cfg, construction, compilation, execution, _first_value(out))


def measure_eager(model: Model, cfg: dict, data=None) -> dict:
    """Time ``model`` in eager mode: forward + backward, and the share spent recording."""
    data = model.data(cfg) if data is None else data
    forward = model.eager(cfg, data)
    recorded = plain = backward = 0.0
    loss = None
    clock = time.perf_counter
    for step in range(steps_of(cfg)):
        # Each forward twice, alternating, and the faster of each kind: recording costs
        # about a microsecond per op, so a cold cache would otherwise hide it.
        best_plain = best_recorded = math.inf
        for _ in range(2):
            with kg.no_grad():
                t = clock()
                forward(step)
                best_plain = min(best_plain, clock() - t)
            t = clock()
            loss = forward(step)
            best_recorded = min(best_recorded, clock() - t)
        t = clock()
        loss.backward()
        backward += clock() - t
        plain += best_plain
        recorded += best_recorded
    construction = max(recorded - plain, 0.0)
    execution = recorded + backward - construction
    return _row("eager", cfg, construction, 0.0, execution, float(loss.item()))


def measure_autobatch(model: Model, cfg: dict, data=None) -> dict:
    """Time ``model``'s eager code with every step's forward inside one ``kg.autobatch()``
    block (DyNet's autobatching), the losses summed and differentiated once."""
    data = model.data(cfg) if data is None else data
    forward = model.eager(cfg, data)
    clock = time.perf_counter
    t0 = clock()
    with kg.autobatch():
        losses = [forward(step) for step in range(steps_of(cfg))]
        total = losses[0]
        for loss in losses[1:]:
            total = total + loss
        recorded = clock() - t0  # nothing has run yet: the ops were only recorded
        t = clock()
        total.backward()  # runs the batched forward, then its backward
        execution = clock() - t
    return _row("autobatch", cfg, recorded, 0.0, execution, float(losses[-1].item()))


MEASURES = {"static": measure_static, "eager": measure_eager, "autobatch": measure_autobatch}


def _row(mode, cfg, construction, compilation, execution, loss) -> dict:
    return {"mode": mode, "sweep": cfg.get("_sweep", ""), "value": cfg.get(cfg.get("_sweep")),
            "steps": steps_of(cfg), "construction": construction, "compilation": compilation,
            "execution": execution, "total": construction + compilation + execution,
            "loss": loss}


def measure(model: Model, cfg: dict, modes: Sequence = ("static", "eager")) -> list[dict]:
    """Each mode on one configuration (same data and weights), one row per mode."""
    data = model.data(cfg)
    return [MEASURES[m](model, cfg, data) for m in _check_modes(modes)]


def _check_modes(modes: Sequence) -> tuple:
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    unknown = [m for m in modes if m not in MEASURES]
    if unknown or not modes:
        raise ValueError(f"unknown modes {unknown}; expected some of {list(MEASURES)}")
    return modes


def _configs(sweep: str, values: Sequence, config: dict | None) -> list[dict]:
    sweep = _ALIASES.get(sweep, sweep)
    base = dict(DEFAULT_CONFIG)
    for k, v in (config or {}).items():
        base[_ALIASES.get(k, k)] = v
    if sweep not in base:
        raise ValueError(f"unknown sweep {kg.errors.shown(sweep)}; expected one of "
                         f"{', '.join(k for k in DEFAULT_CONFIG if k != 'seed')}")
    return [{**base, sweep: v, "_sweep": sweep} for v in values]


class TimingWidget(RedisplayMixin, ipywidgets.VBox):
    """A progress bar and a plotly ``FigureWidget`` of time per phase, stacked, for each
    sweep value and mode; :meth:`run` measures and updates the plot as results arrive.

    ``sweep`` is the configuration key that varies (``"samples"``, ``"batch"``,
    ``"inputs"``, ``"hidden"``) over ``values``; ``config`` overrides other keys; ``model``
    is a :class:`Model` (default :func:`mlp_model`).
    """

    def __init__(self, values: Sequence = (1, 8, 32, 128), sweep: str = "samples",
                 model: Model | None = None, config: dict | None = None,
                 warmup: bool = True, modes: Sequence = ("static", "eager"), **kwargs):
        import plotly.graph_objects as go

        self.model = model or mlp_model()
        self.modes = _check_modes(modes)
        self.configs = _configs(sweep, values, config)
        self.sweep = self.configs[0]["_sweep"] if self.configs else sweep
        self.warmup = warmup
        self.results: list[dict] = []
        self.progress = ipywidgets.IntProgress(value=0, min=0,
                                               max=len(self.modes) * len(self.configs),
                                               description="measuring")
        self.status = ipywidgets.Label(value="not started")
        colors = {"construction": "#60a5fa", "compilation": "#f59e0b", "execution": "#10b981"}
        self.figure = go.FigureWidget(
            data=[go.Bar(name=p, x=[[], []], y=[], marker_color=colors[p]) for p in PHASES],
            layout=go.Layout(
                barmode="stack",
                title=f"{self.model.name}: {' vs '.join(self.modes)}, time per phase",
                xaxis_title=f"{self.sweep} / mode", yaxis_title="seconds",
                legend_title="phase", height=420, margin={"t": 60, "b": 60}))
        super().__init__(children=[self.progress, self.status, self.figure], **kwargs)

    def run(self) -> list[dict]:
        """Measure every configuration in both modes; returns (and keeps) the rows."""
        if self.warmup and self.configs:
            self.status.value = "warming up (numba compiles each kernel once per process)"
            small = {**self.configs[0], "samples": 1, "batch": 1}
            measure(self.model, small, self.modes)
        for cfg in self.configs:
            data = self.model.data(cfg)
            for mode in self.modes:
                self.status.value = f"{mode} mode, {self.sweep} = {cfg[self.sweep]}"
                self.add(MEASURES[mode](self.model, cfg, data))
        self.status.value = f"done: {len(self.results)} measurements"
        self.refresh_displays()
        return list(self.results)

    def add(self, row: dict) -> None:
        """Add one measured row to the results and the plot."""
        self.results.append(row)
        self.progress.value = min(len(self.results), self.progress.max)
        level1 = [str(r["value"]) for r in self.results]
        level2 = [r["mode"] for r in self.results]
        with self.figure.batch_update():
            for trace_, phase in zip(self.figure.data, PHASES):
                trace_.x = [level1, level2]
                trace_.y = [r[phase] for r in self.results]

    def table(self) -> str:
        """The results as a text table (seconds)."""
        lines = [f"{self.sweep:>10} {'mode':>7} " + " ".join(f"{p:>13}" for p in PHASES)
                 + f" {'total':>10}"]
        for r in self.results:
            lines.append(f"{r['value']!s:>10} {r['mode']:>7} "
                         + " ".join(f"{r[p]:13.6f}" for p in PHASES) + f" {r['total']:10.6f}")
        return "\n".join(lines)

    def __repr__(self):
        return f"TimingWidget({len(self.results)} measurements)\n{self.table()}"

    def _repr_mimebundle_(self, **kwargs) -> dict:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = repr(self)  # the whole table, not ipywidgets' 110 characters
        return data


def compare(values: Sequence = (1, 8, 32, 128), sweep: str = "samples",
            model: Model | None = None, config: dict | None = None, display: bool = True,
            warmup: bool = True, modes: Sequence = ("static", "eager")) -> list[dict]:
    """Run ``model`` in each of ``modes`` (``"static"``, ``"eager"``, ``"autobatch"``) over
    a sweep, plotting as results arrive (in a notebook); returns one row per (value, mode):
    ``mode``, ``sweep``, ``value``, ``steps``, the seconds of each phase, ``total`` and the
    last step's ``loss``.

    ``kg.widgets.compare(sweep="batch", values=[1, 16, 256], config={"samples": 256})``;
    ``kg.widgets.compare(model=kg.widgets.rnn_model(), modes=("eager", "autobatch",
    "static"), values=(8, 32))``
    """
    widget = TimingWidget(values, sweep, model, config, warmup, modes)
    if display:
        ipython = sys.modules.get("IPython")
        if ipython is not None and ipython.get_ipython() is not None:
            widget._ipython_display_()
    return widget.run()
