"""The GPU rows of ``python -m kernelgraph.bench``: training steps and host time per op on a
CUDA GPU, each against PyTorch on the same GPU in the same run (docs/gpu.md has the table).

- G1-G4: one SGD step (lr 0.1) of an MLP 784 -> 1024 -> 1024 -> 10 (relu, mean softmax
  cross-entropy) at batch 512 (G1 static, G2 eager) and 64 (G3, G4). Static: Variables
  under ``kg.device("cuda")``, ``opt.minimize``, ``Session.run(train)`` fed host arrays;
  eager: GPU tensors, ``backward()``, ``kg.optim.SGD.step()``.
- G5-G6: a CNN step on 128 images 3x32x32: conv3x3 32 + bias, relu, max-pool 2, conv3x3 64
  + bias, relu, max-pool 2, linear 4096 -> 10, SGD lr 0.01; static (G5) and eager (G6).
- G7: host time per static plan node: G3's run 100 times, one synchronize, per run and per
  node of its plan. G8a/b: host time per eager op: 100 ``a + b`` on (1,) / (1024, 1024)
  GPU tensors, one synchronize.

PyTorch runs each step with its data already on the GPU, TF32 off (kernelgraph computes in
true fp32). Every timed statement ends with a synchronize. Before timing, each side's first
step from the same initial weights is checked against a float64 NumPy step.

Without a GPU (or on numba's simulator) nothing is timed: the runner prints one line
(:func:`skipped_line`). :func:`check_rows` runs the rows' kernelgraph code at tiny sizes on
any CUDA device (the simulator in the tests) against the NumPy step.

>>> [row.id for row in ROWS][:3]
['G1', 'G2', 'G3']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import cases as C
from .cases import Impl, Target, Unavailable
from .timing import measure

LR_MLP, LR_CNN = 0.1, 0.01


@dataclass(frozen=True)
class Sizes:
    """The shapes of every GPU row: the issue's by default, :data:`TINY` for the simulator."""

    mlp: tuple = (784, 1024, 1024, 10)
    batches: tuple = (512, 64)
    cnn_batch: int = 128
    image: tuple = (3, 32, 32)
    channels: tuple = (32, 64)
    classes: int = 10
    add_shapes: tuple = ((1,), (1024, 1024))
    queued: int = 100  # ops (or runs) queued before one synchronize in G7 and G8


FULL = Sizes()
# Small enough for numba's CUDA simulator, which runs every GPU thread as a Python thread.
TINY = Sizes(mlp=(5, 4, 4, 3), batches=(3, 2), cnn_batch=1, image=(2, 4, 4), channels=(2, 2),
             classes=3, add_shapes=((1,), (2, 2)), queued=2)


# -- data and the float64 references ---------------------------------------------------------
def mlp_data(sizes: Sizes, batch: int):
    """x (batch, in) float32, labels int64, [w1, b1, w2, b2, w3, b3] (He-scaled weights)."""
    r = np.random.default_rng(22)
    dims = sizes.mlp
    x = r.standard_normal((batch, dims[0]), dtype=np.float32)
    labels = r.integers(0, dims[-1], batch).astype(np.int64)
    params = []
    for n_in, n_out in zip(dims[:-1], dims[1:]):
        params.append((r.standard_normal((n_in, n_out)) * np.sqrt(2 / n_in)).astype(np.float32))
        params.append((r.standard_normal(n_out) * 0.1).astype(np.float32))
    return x, labels, params


def _cross_entropy64(z, labels):
    """(mean loss, d loss / d z) of softmax cross-entropy, in float64."""
    n = z.shape[0]
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows = np.arange(n)
    dz = np.exp(logp)
    dz[rows, labels] -= 1.0
    return -logp[rows, labels].mean(), dz / n


def mlp_reference(sizes: Sizes, batch: int) -> list:
    """[loss before the step, [every parameter after one SGD step]], by hand in float64."""
    x, labels, params = mlp_data(sizes, batch)
    ws = [p.astype(np.float64) for p in params]
    acts, h = [], x.astype(np.float64)
    for k in range(0, len(ws), 2):
        acts.append(h)
        h = h @ ws[k] + ws[k + 1]
        if k + 2 < len(ws):
            h = np.maximum(h, 0.0)
    loss, g = _cross_entropy64(h, labels)
    grads = [None] * len(ws)
    for k in range(len(ws) - 2, -1, -2):
        grads[k], grads[k + 1] = acts[k // 2].T @ g, g.sum(axis=0)
        if k:
            g = (g @ ws[k].T) * (acts[k // 2] > 0)
    return [np.array(loss), [w - LR_MLP * gw for w, gw in zip(ws, grads)]]


def cnn_data(sizes: Sizes):
    """x (N, C, H, W), labels, [w1, b1, w2, b2, w3, b3] (conv weights OIHW)."""
    r = np.random.default_rng(23)
    c0, hgt, wid = sizes.image
    c1, c2 = sizes.channels
    flat = c2 * (hgt // 4) * (wid // 4)
    x = r.standard_normal((sizes.cnn_batch, c0, hgt, wid), dtype=np.float32)
    labels = r.integers(0, sizes.classes, sizes.cnn_batch).astype(np.int64)
    shapes = [(c1, c0, 3, 3), (c1,), (c2, c1, 3, 3), (c2,), (flat, sizes.classes),
              (sizes.classes,)]
    fans = [9 * c0, None, 9 * c1, None, flat, None]
    params = [(r.standard_normal(s) * (np.sqrt(2 / f) if f else 0.1)).astype(np.float32)
              for s, f in zip(shapes, fans)]
    return x, labels, params


def _conv64(x, w, b):
    """conv2d(x, w, padding=1) + b in float64, as one matrix product over the 3x3 patches
    (im2col); returns the output and the patches, which the backward pass reads."""
    n, c, hgt, wid = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + hgt, j:j + wid] for i in range(3) for j in range(3)],
                    axis=2)  # (n, c, 9, h, w), ordered as w's (c, kh, kw)
    cols = cols.transpose(0, 3, 4, 1, 2).reshape(n * hgt * wid, c * 9)
    y = cols @ w.reshape(w.shape[0], -1).T
    return y.reshape(n, hgt, wid, -1).transpose(0, 3, 1, 2) + b[None, :, None, None], cols


def _conv64_backward(dy, cols, w):
    """(dx, dw, db) of :func:`_conv64` for the output gradient ``dy``."""
    n, o, hgt, wid = dy.shape
    c = w.shape[1]
    dy2 = dy.transpose(0, 2, 3, 1).reshape(-1, o)
    dw = (dy2.T @ cols).reshape(w.shape)
    dcols = (dy2 @ w.reshape(o, -1)).reshape(n, hgt, wid, c, 3, 3)
    dxp = np.zeros((n, c, hgt + 2, wid + 2))
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + hgt, j:j + wid] += dcols[..., i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, 1:-1, 1:-1], dw, dy.sum(axis=(0, 2, 3))


def _pool64(h):
    """2x2 max-pool of (N, C, H, W) and the mask of the maxima (ties only where the ReLU
    before it made zeros, whose gradient the ReLU drops anyway)."""
    n, c, hgt, wid = h.shape
    blocks = h.reshape(n, c, hgt // 2, 2, wid // 2, 2)
    y = blocks.max(axis=(3, 5))
    return y, blocks == y[:, :, :, None, :, None]


def cnn_reference(sizes: Sizes) -> list:
    """[loss before the step, [every parameter after one SGD step]], by hand in float64."""
    x, labels, params = cnn_data(sizes)
    w1, b1, w2, b2, w3, b3 = (p.astype(np.float64) for p in params)
    a1, cols1 = _conv64(x.astype(np.float64), w1, b1)
    p1, m1 = _pool64(np.maximum(a1, 0.0))
    a2, cols2 = _conv64(p1, w2, b2)
    p2, m2 = _pool64(np.maximum(a2, 0.0))
    flat = p2.reshape(p2.shape[0], -1)
    loss, dz = _cross_entropy64(flat @ w3 + b3, labels)
    dw3, db3 = flat.T @ dz, dz.sum(axis=0)

    def unpool(dp, mask, like):
        return (mask * dp[:, :, :, None, :, None]).reshape(like.shape) * (like > 0)

    da2 = unpool((dz @ w3.T).reshape(p2.shape), m2, a2)
    dp1, dw2, db2 = _conv64_backward(da2, cols2, w2)
    da1 = unpool(dp1, m1, a1)
    _, dw1, db1 = _conv64_backward(da1, cols1, w1)
    grads = (dw1, db1, dw2, db2, dw3, db3)
    return [np.array(loss), [p.astype(np.float64) - LR_CNN * g
                             for p, g in zip(params, grads)]]


# -- the models, written once for kernelgraph (both modes) and PyTorch ---------------------
def _mlp_logits(matmul, relu, x, params):
    h = x
    for k in range(0, len(params), 2):
        h = matmul(h, params[k]) + params[k + 1]
        if k + 2 < len(params):
            h = relu(h)
    return h


def _kg_cnn_logits(kg, x, params):
    w1, b1, w2, b2, w3, b3 = params
    h = x
    for w, b in ((w1, b1), (w2, b2)):
        h = kg.conv2d(h, w, padding=1) + kg.reshape(b, (1, -1, 1, 1))
        h = kg.max_pool2d(kg.relu(h), kernel_size=2)
    return kg.matmul(kg.reshape(h, (-1, int(w3.shape[0]))), w3) + b3


def _torch_cnn_logits(torch, x, params):
    import torch.nn.functional as F

    w1, b1, w2, b2, w3, b3 = params
    h = F.max_pool2d(torch.relu(F.conv2d(x, w1, b1, padding=1)), 2)
    h = F.max_pool2d(torch.relu(F.conv2d(h, w2, b2, padding=1)), 2)
    return h.reshape(h.shape[0], -1) @ w3 + b3


# -- kernelgraph's sides -------------------------------------------------------------------
_SYNC = "; sync()"


def _kg_static(kg, data, logits_of, lr, device):
    """A static training step on ``device``, timing ``sess.run(train)``; the plan's node
    count goes into the cell (``plan_nodes``)."""
    x0, y0, w0 = data
    g = kg.Graph()
    with g.as_default(), kg.device(device):
        x = kg.placeholder(kg.float32, shape=(None, *x0.shape[1:]))
        labels = kg.placeholder(kg.int64, shape=(None,))
        params = [kg.Variable(w) for w in w0]
        loss = kg.cross_entropy(logits_of(kg, x, params), labels)
        train = kg.optim.SGD(params, lr=lr).minimize(loss)
        init = kg.global_variables_initializer()
    sess, feed = kg.Session(graph=g), {x: x0, labels: y0}
    sess.run(init)

    def output():  # one step from the initial weights: the loss, then the new weights
        sess.run(init)
        value = sess.run([loss, train], feed)[0]
        return [value, sess.run(params)]

    ns = {"sess": sess, "train": train, "feed": feed, "sync": kg.cuda.synchronize}
    impl = Impl("sess.run(train, feed_dict=feed)" + _SYNC, ns, output, close=sess.close)
    impl.extra["plan_nodes"] = plan_nodes(sess, train, feed)
    return impl


def plan_nodes(sess, fetches, feed) -> int:
    """How many nodes the compiled plan of ``sess.run(fetches, feed)`` runs (after pruning,
    folding and fusion; placeholders and variables included)."""
    return len(sess.plan(fetches, feed).order)


def _kg_eager(kg, data, logits_of, lr, device):
    x0, y0, w0 = data
    x, labels = kg.tensor(x0, device=device), kg.tensor(y0, device=device)
    params = [kg.tensor(w, device=device, requires_grad=True) for w in w0]
    opt = kg.optim.SGD(params, lr=lr)

    def step():
        opt.zero_grad()
        loss = kg.cross_entropy(logits_of(kg, x, params), labels)
        loss.backward()
        opt.step()
        return loss

    def output():
        with kg.no_grad():
            for p, w in zip(params, w0):
                p.copy_(kg.tensor(w, device=device))
        loss = step()
        return [loss.detach().cpu().numpy(), [p.detach().cpu().numpy() for p in params]]

    return Impl("step()" + _SYNC, {"step": step, "sync": kg.cuda.synchronize}, output)


def _mlp_kg_logits(kg, x, params):
    return _mlp_logits(kg.matmul, kg.relu, x, params)


def _kg_mlp(which, static):
    def setup(kg, sizes, device):
        run = _kg_static if static else _kg_eager
        return run(kg, mlp_data(sizes, sizes.batches[which]), _mlp_kg_logits, LR_MLP, device)
    return setup


def _kg_cnn(static):
    def setup(kg, sizes, device):
        run = _kg_static if static else _kg_eager
        return run(kg, cnn_data(sizes), _kg_cnn_logits, LR_CNN, device)
    return setup


def _kg_plan_node(kg, sizes, device):
    impl = _kg_static(kg, mlp_data(sizes, sizes.batches[1]), _mlp_kg_logits, LR_MLP, device)
    runs = sizes.queued
    impl.stmt = "for _ in r:\n    sess.run(train, feed_dict=feed)\nsync()"
    impl.namespace["r"] = range(runs)
    impl.per = runs * impl.extra["plan_nodes"]
    return impl


def _kg_add(shape_index):
    def setup(kg, sizes, device):
        shape = sizes.add_shapes[shape_index]
        a0, b0 = _add_data(shape)
        a, b = kg.tensor(a0, device=device), kg.tensor(b0, device=device)
        return Impl("for _ in r:\n    a + b\nsync()",
                    {"a": a, "b": b, "r": range(sizes.queued), "sync": kg.cuda.synchronize},
                    lambda: (a + b).cpu().numpy(), per=sizes.queued)
    return setup


def _add_data(shape):
    r = np.random.default_rng(24)
    return r.standard_normal(shape, dtype=np.float32), r.standard_normal(shape, dtype=np.float32)


# -- PyTorch's sides -----------------------------------------------------------------------
def _torch_device(torch):
    if not torch.cuda.is_available():
        raise Unavailable("this PyTorch build sees no CUDA GPU")
    # kernelgraph computes in true fp32: so does PyTorch here
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch.device("cuda")


def _torch_step(torch, data, logits_of, lr):
    import torch.nn.functional as F

    dev = _torch_device(torch)
    x0, y0, w0 = data
    x, labels = torch.from_numpy(x0).to(dev), torch.from_numpy(y0).to(dev)
    params = [torch.tensor(w, device=dev, requires_grad=True) for w in w0]
    opt = torch.optim.SGD(params, lr=lr)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(logits_of(torch, x, params), labels)
        loss.backward()
        opt.step()
        return loss

    def output():
        with torch.no_grad():
            for p, w in zip(params, w0):
                p.copy_(torch.from_numpy(w))
        loss = step()
        return [loss.detach().cpu().numpy(), [p.detach().cpu().numpy() for p in params]]

    return Impl("step()" + _SYNC, {"step": step, "sync": torch.cuda.synchronize}, output)


def _torch_mlp(which):
    def setup(torch, sizes):
        return _torch_step(torch, mlp_data(sizes, sizes.batches[which]),
                           lambda t, x, p: _mlp_logits(t.matmul, t.relu, x, p), LR_MLP)
    return setup


def _torch_cnn(torch, sizes):
    return _torch_step(torch, cnn_data(sizes), _torch_cnn_logits, LR_CNN)


def _torch_add(shape_index):
    def setup(torch, sizes):
        dev = _torch_device(torch)
        a0, b0 = _add_data(sizes.add_shapes[shape_index])
        a, b = torch.from_numpy(a0).to(dev), torch.from_numpy(b0).to(dev)
        return Impl("for _ in r:\n    a + b\nsync()",
                    {"a": a, "b": b, "r": range(sizes.queued), "sync": torch.cuda.synchronize},
                    lambda: (a + b).cpu().numpy(), per=sizes.queued)
    return setup


# -- the rows ------------------------------------------------------------------------------
@dataclass(frozen=True)
class GpuRow:
    """One GPU row: kernelgraph's setup ``(kg, sizes, device) -> Impl``, PyTorch's
    ``(torch, sizes) -> Impl``, the reference ``sizes -> value`` (None: checked against
    PyTorch's output instead) and the target."""

    id: str
    title: str
    unit: str
    description: str
    kernelgraph: object
    torch: object
    reference: object
    target: Target | None = None


def _add_reference(shape_index):
    def reference(sizes):
        a, b = _add_data(sizes.add_shapes[shape_index])
        return a.astype(np.float64) + b
    return reference


def _mlp_rows(row_id, which, static_target, eager_target):
    ids = (f"G{row_id}", f"G{row_id + 1}")
    words = f"MLP 784-1024-1024-10 SGD step, batch {FULL.batches[which]}"

    def reference(sizes):
        return mlp_reference(sizes, sizes.batches[which])

    return (
        GpuRow(ids[0], f"{words}, static", "us",
               "Session.run(train) of opt.minimize(loss) under kg.device('cuda'), fed host "
               "arrays; then a synchronize.",
               _kg_mlp(which, True), _torch_mlp(which), reference,
               static_target),
        GpuRow(ids[1], f"{words}, eager", "us",
               "zero_grad, forward, backward(), SGD step() on GPU tensors; then a "
               "synchronize.",
               _kg_mlp(which, False), _torch_mlp(which), reference,
               eager_target),
    )


ROWS = (
    *_mlp_rows(1, 0, Target(max_ratio=(("torch", 1.0),)),
               Target(max_ratio=(("torch", 1.5),))),
    *_mlp_rows(3, 1, Target(max_ratio=(("torch", 0.5),)), None),
    GpuRow("G5", "CNN step, batch 128 3x32x32, static", "us",
           "conv3x3 32 + pool, conv3x3 64 + pool, linear head; Session.run(train).",
           _kg_cnn(True), _torch_cnn, cnn_reference, Target(max_ratio=(("torch", 1.5),))),
    GpuRow("G6", "CNN step, batch 128 3x32x32, eager", "us",
           "The CNN step of G5 with GPU tensors, backward() and SGD step().",
           _kg_cnn(False), _torch_cnn, cnn_reference),
    GpuRow("G7", "host time per static plan node", "us/node",
           "G3's Session.run(train) 100 times, one synchronize, per run and per node of "
           "its plan; torch: its per-op time of G8a, for scale.",
           _kg_plan_node, _torch_add(0), None, Target(max_us=10.0)),
    GpuRow("G8a", "eager a + b on the GPU, (1,)", "us/op",
           "100 a + b on (1,) GPU tensors, then one synchronize; per op.",
           _kg_add(0), _torch_add(0), _add_reference(0), Target(max_us=20.0)),
    GpuRow("G8b", "eager a + b on the GPU, 1024x1024", "us/op",
           "100 a + b on (1024, 1024) GPU tensors, then one synchronize; per op.",
           _kg_add(1), _torch_add(1), _add_reference(1), Target(max_us=20.0)),
)


def selected(rows: str | None) -> tuple[str | None, bool]:
    """Split ``--rows``: (the other rows, whether the GPU rows are selected). None (every
    row) selects them too.

    >>> selected("gpu,4"), selected(None), selected("4")
    (('4', True), (None, True), ('4', False))
    """
    if rows is None:
        return None, True
    names = [n.strip() for n in rows.split(",") if n.strip()]
    rest = ",".join(n for n in names if n.lower() != "gpu")
    return rest, len(rest) < len(",".join(names))


def failed(section: dict | None) -> bool:
    """Whether a GPU row's kernelgraph side raised, or a side's output check failed."""
    return bool(section) and any(
        (side == "kernelgraph" and cell.get("error")) or cell.get("check", "ok") != "ok"
        for row in section.get("rows", ()) for side, cell in row["results"].items())


def unavailable() -> str | None:
    """Why the GPU rows cannot run here (no CUDA GPU, or numba's simulator), or None.

    >>> import os
    >>> unavailable() is None or "GPU" in unavailable() or "simulator" in unavailable()
    True
    """
    try:
        C._require_gpu()
    except Unavailable as e:
        return str(e)
    return None


def skipped_line(reason: str) -> str:
    """The one line the benchmark prints where the GPU rows cannot run."""
    ids = f"{ROWS[0].id}-{ROWS[-1].id}"
    return (f"GPU rows {ids}: not run, they need an NVIDIA GPU and its driver ({reason}); "
            "on a GPU machine: python -m kernelgraph.bench --rows gpu")


def _cell(setup, settings, reference, rtol):
    """Time one side of a row (a results cell as the CPU rows have: us, check, stmt)."""
    return C.timed_cell(setup, settings, None if reference is None else lambda: reference,
                        rtol)


def run(settings, kg, torch=None, progress=None, sizes: Sizes = FULL) -> dict:
    """The GPU section of the results (``kg``: the kernelgraph module, ``torch``: PyTorch or
    None): ``{'skipped': reason}`` without a GPU, else ``{'skipped': None, 'rows': [...]}``
    with both sides' cells, the ratio kernelgraph / PyTorch and the target's verdict."""
    reason = unavailable()
    if reason is not None:
        return {"skipped": reason, "line": skipped_line(reason), "rows": []}
    rows = []
    for row in ROWS:
        if progress is not None:
            progress(f"  {row.id:<3} {row.title:<36} (GPU) ...")
        reference = row.reference(sizes) if row.reference is not None else None
        rtol = 1e-3  # a GPU sums in another order than NumPy: float32 rounding differs more
        kg_cell, _ = _cell(lambda r=row: r.kernelgraph(kg, sizes, "cuda"), settings,
                           reference, rtol)
        if torch is None:
            torch_cell = {"us": None, "reason": "PyTorch is not installed"}
        else:
            torch_cell, _ = _cell(lambda r=row: r.torch(torch, sizes), settings,
                                  reference if row.reference is not None else None, rtol)
        ratio = (kg_cell["us"] / torch_cell["us"]
                 if kg_cell["us"] is not None and torch_cell["us"] else None)
        out = {"id": row.id, "title": row.title, "unit": row.unit,
               "description": row.description,
               "results": {"kernelgraph": kg_cell, "torch": torch_cell},
               "ratios": {"torch": ratio}, "target": None, "pass": None, "unchecked": []}
        if row.target is not None:
            out["pass"], out["unchecked"] = row.target.evaluate(kg_cell["us"],
                                                                {"torch": ratio})
            out["target"] = row.target.describe(row.unit)
        rows.append(out)
    return {"skipped": None, "device": _device_name(), "rows": rows}


def _device_name() -> str:
    try:
        from numba import cuda

        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception as e:  # noqa: BLE001 - the name is a label only
        return f"unknown ({type(e).__name__})"


def describe(section: dict | None) -> list[str]:
    """The GPU section as lines of text for the benchmark's table."""
    if not section:
        return []
    if section.get("skipped"):
        return [section["line"]]
    lines = [f"GPU rows on {section['device']} (kernelgraph / PyTorch on the same GPU, "
             "same run; lower is better):"]
    for row in section["rows"]:
        kg_cell, torch_cell = row["results"]["kernelgraph"], row["results"]["torch"]
        ratio = row["ratios"]["torch"]
        verdict = "" if row["pass"] is None else ("pass" if row["pass"] else "FAIL")
        lines.append(f"  {row['id']:<4} {row['title']:<44} {_us(kg_cell):>10} "
                     f"{_us(torch_cell):>10} {row['unit']:<7} "
                     f"{'n/a' if ratio is None else f'{ratio:.2f}x':>7}  "
                     f"{row['target'] or '-'} {verdict}".rstrip())
        for side, cell in (("kernelgraph", kg_cell), ("torch", torch_cell)):
            if cell["us"] is None:
                lines.append(f"       {side}: {cell['reason']}")
            elif cell.get("check", "ok") != "ok":
                lines.append(f"       {side}: {cell['check']}")
    return lines


def _us(cell: dict) -> str:
    return "n/a" if cell["us"] is None else f"{cell['us']:.1f}"


def check_rows(kg, sizes: Sizes = TINY, device: str = "cuda", ids=None) -> dict:
    """Run the kernelgraph side of every row (or of the rows ``ids`` names) once at
    ``sizes`` on ``device`` and check it against the float64 NumPy step: ``{row id: None or
    what differs}``. The statement each row times runs too, once (not timed).

    >>> import kernelgraph as kg
    >>> check_rows(kg, device="cpu")["G1"] is None
    True
    """
    found = {}
    for row in ROWS:
        if ids is not None and row.id not in ids:
            continue
        impl = row.kernelgraph(kg, sizes, device)
        try:
            output = impl.output()
            reference = row.reference(sizes) if row.reference is not None else None
            problem = C.check(output, reference, rtol=1e-3) if reference is not None else None
            measure(impl.stmt, impl.namespace, repeat=1, number=1, per=impl.per)
        finally:
            if impl.close is not None:
                impl.close()
        found[row.id] = problem
    return found


__all__ = ["FULL", "ROWS", "TINY", "GpuRow", "Sizes", "check_rows", "cnn_reference",
           "describe", "mlp_reference", "run", "skipped_line", "unavailable"]
