"""The pool-of-devices rows (issue 23): static graphs split across the workers of a Dask
``LocalCluster`` (``kg.distributed.local``), timed with the same ``timeit`` method as every
other row.

- **20a**, a cross-worker transfer: a 16 MB float32 variable on ``worker:0`` summed on
  ``worker:1``, so every run moves 16 MB from one worker process to the other; the time is
  reported per MB (the derived ``net_us_per_mb`` also takes off row 20b's fixed cost);
- **20b**, a run's fixed overhead across two workers: a tiny graph split in two (``x * 2``
  on ``worker:0``, ``+ 1`` on ``worker:1``, 16 bytes crossing); target <= 5 ms;
- **20c / 20d**, data-parallel training: one SGD step of the digits CNN (3x3 convolution
  with 16 filters, ReLU, 2x2 max-pool, a linear layer to 10 classes, mean cross-entropy)
  on a batch of 256 digits, TF1's in-graph replication: the variables on ``worker:0``, one
  tower per worker computing the loss and gradients of its shard, the gradients averaged
  where the variables live and one update. 20c runs one tower (all 256 on ``worker:0``),
  20d two towers of 128; the speed-up is 20c's time over 20d's (target >= 1.7x);
- **20e**, 20d with the variables mirrored on both workers (an all-reduce): each worker
  averages both towers' gradients and updates its own copy. The parameter server of 20d
  makes worker:1 wait for worker:0's stage that sends it the variables (and, a stage being
  one task, for worker:0's own tower in it); mirrored, the two towers start together.

Every worker runs one thread (Dask's ``threads_per_worker=1``; BLAS and numba's
parallel loops set to one thread on each worker), so two workers can use at most two
cores, as one would use one. All rows share one two-worker cluster, started on first
use and closed by :func:`finish` at the end of the run (and at exit, should a run be
interrupted).

The outputs are checked first: 20a's sum, 20b's values, and for 20c/20d the loss and the
averaged gradients of the whole batch against a float64 NumPy forward and backward pass.
Without Dask (``pip install 'kernelgraph[distributed]'``) the rows read "n/a".
"""

from __future__ import annotations

import atexit

import numpy as np

from .. import distributed as dist
from ..data import load_digits
from .cases import NO_AUTOGRAD_NP, Case, Impl, Target, Unavailable, _patches, _rng

TRANSFER_MB = 16
TRANSFER_N = TRANSFER_MB * 2 ** 20 // 4  # float32 values in 16 MB
DP_BATCH, DP_CHANNELS, DP_CLASSES, DP_LR = 256, 16, 10, 0.1
DP_FLAT = DP_CHANNELS * 4 * 4
SPEEDUP_TARGET = 1.7
NO_POOL_NP = "NumPy has no cluster"
NO_POOL_TORCH = "PyTorch has no static graph split across Dask workers"
NO_POOL_TF = "TF1's distributed runtime (gRPC servers) is not a Dask cluster"
_POOL: list = []  # the shared cluster, once started


def pool(n_workers: int = 2):
    """The two-worker cluster the rows share (started on first use), or Unavailable."""
    if _POOL:
        return _POOL[0]
    try:
        cluster = dist.local(n_workers, threads_per_worker=1)
    except ImportError as e:
        raise Unavailable(str(e)) from None
    _POOL.append(cluster)
    # One thread per worker: Dask's nanny already gives BLAS one thread; numba's thread
    # count is per calling thread, so it is set by a task on each worker's one task thread.
    for address in cluster.workers:
        cluster.client.submit(_one_numba_thread, workers=[address], pure=False,
                              allow_other_workers=False).result(timeout=60)
    return cluster


def _one_numba_thread() -> int:
    import numba  # runs on a worker, in its one task thread
    numba.set_num_threads(1)
    return numba.get_num_threads()


def close_pool() -> None:
    """Close the shared cluster, if one was started."""
    while _POOL:
        _POOL.pop().close()


atexit.register(close_pool)


def _session(kg, graph):
    return kg.Session(graph=graph, target=pool())


# -- 20a: 16 MB across workers ----------------------------------------------------------------
def _transfer_reference():
    return np.array(0.5 * TRANSFER_N)  # exact in float32: a power of two


def _transfer_kg(kg):
    g = kg.Graph()
    with g.as_default():
        with kg.device("worker:0"):
            # made on the worker (a broadcast), so the program sent there stays small
            v = kg.Variable(kg.broadcast_to(kg.constant(0.5), [TRANSFER_N]),
                            name="sixteen_mb")
        with kg.device("worker:1"):
            total = kg.reduce_sum(v, name="total")
        init = kg.global_variables_initializer()
    sess = _session(kg, g)
    sess.run(init)
    return Impl("sess.run(total)", {"sess": sess, "total": total},
                lambda: sess.run(total), per=TRANSFER_MB, close=sess.close)


# -- 20b: a tiny graph split in two -----------------------------------------------------------
TINY_X = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def _tiny_reference():
    return TINY_X.astype(np.float64) * 2.0 + 1.0


def _tiny_kg(kg):
    g = kg.Graph()
    with g.as_default():
        with kg.device("worker:0"):
            x = kg.placeholder(kg.float32, shape=[4], name="x")
            h = kg.multiply(x, 2.0, name="h")
        with kg.device("worker:1"):
            y = kg.add(h, 1.0, name="y")
    sess, feed = _session(kg, g), {x: TINY_X}
    return Impl("sess.run(y, feed)", {"sess": sess, "y": y, "feed": feed},
                lambda: sess.run(y, feed), close=sess.close)


# -- 20c / 20d: data-parallel digits CNN --------------------------------------------------------
def dp_data():
    """(x (256, 1, 8, 8), labels (256,), [w1 (16, 1, 3, 3), b1 (16,), w2 (256, 10), b2 (10,)]):
    the first 256 training digits and seeded initial weights."""
    x, labels = load_digits("train", flat=False)
    r = _rng(20)
    w1 = (r.standard_normal((DP_CHANNELS, 1, 3, 3)) * np.sqrt(2 / 9)).astype(np.float32)
    b1 = (r.standard_normal(DP_CHANNELS) * 0.1).astype(np.float32)
    w2 = (r.standard_normal((DP_FLAT, DP_CLASSES)) / np.sqrt(DP_FLAT)).astype(np.float32)
    b2 = (r.standard_normal(DP_CLASSES) * 0.1).astype(np.float32)
    return x[:DP_BATCH], labels[:DP_BATCH], [w1, b1, w2, b2]


def _dp_model(kg, x, labels, w1, b1, w2, b2):
    h = kg.relu(kg.conv2d(x, w1, padding=1) + kg.reshape(b1, (1, DP_CHANNELS, 1, 1)))
    h = kg.max_pool2d(h, 2)
    logits = kg.matmul(kg.reshape(h, (-1, DP_FLAT)), w2) + b2
    return kg.cross_entropy(logits, labels)


def reference_dp_step():
    """[loss, [dw1, db1, dw2, db2]] of the whole batch of 256, by hand in float64 (what
    the towers' averaged gradients must equal)."""
    x, labels, params = dp_data()
    x, (w1, b1, w2, b2) = x.astype(np.float64), [p.astype(np.float64) for p in params]
    n = len(x)
    p1 = _patches(x)
    a1 = np.einsum("ncijhw,ocij->nohw", p1, w1) + b1[None, :, None, None]
    h1 = np.maximum(a1, 0.0)
    windows = h1.reshape(n, DP_CHANNELS, 4, 2, 4, 2).transpose(0, 1, 2, 4, 3, 5) \
        .reshape(n, DP_CHANNELS, 4, 4, 4)
    pooled = windows.max(axis=-1)
    flat = pooled.reshape(n, -1)
    z = flat @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows = np.arange(n)
    loss = -logp[rows, labels].mean()
    dz = np.exp(logp)
    dz[rows, labels] -= 1.0
    dz /= n
    dw2, db2 = flat.T @ dz, dz.sum(axis=0)
    dpooled = (dz @ w2.T).reshape(pooled.shape)
    # the gradient goes to the first maximum of each window (ties are zeros cut by ReLU)
    first = windows.argmax(axis=-1)
    dwin = np.zeros_like(windows)
    np.put_along_axis(dwin, first[..., None], dpooled[..., None], axis=-1)
    dh1 = dwin.reshape(n, DP_CHANNELS, 4, 4, 2, 2).transpose(0, 1, 2, 4, 3, 5) \
        .reshape(h1.shape)
    da1 = dh1 * (a1 > 0)
    dw1 = np.einsum("ncijhw,nohw->ocij", p1, da1)
    db1 = da1.sum(axis=(0, 2, 3))
    return [np.array(loss), [dw1, db1, dw2, db2]]


def _mean(values):
    total = values[0]
    for v in values[1:]:
        total = total + v
    return total * (1.0 / len(values)) if len(values) > 1 else total


def build_data_parallel(kg, towers: int, batch: int = DP_BATCH, mirrored: bool = False):
    """The data-parallel training graph (see the module docstring): a placeholder pair per
    tower on its worker. With ``mirrored=False`` the variables live on ``worker:0`` (TF1's
    parameter server): the towers read them there, their gradients are averaged there and
    one update applies them. With ``mirrored=True`` every worker keeps its own copy of the
    variables, as an all-reduce does: each tower's gradients go to every worker, and each
    worker averages them (in the same order, so to the same bits) and updates its copy.

    Returns (graph, feeds (x, labels) per tower, loss (the towers' mean, on worker:0),
    averaged gradients (on worker:0), train op, initializer)."""
    if batch % towers:
        raise ValueError(f"a batch of {batch} does not split into {towers} equal shards")
    shard = batch // towers
    _, _, init_values = dp_data()
    names = ("w1", "b1", "w2", "b2")
    g = kg.Graph()
    with g.as_default():
        copies = []  # the variables each tower reads: one shared set, or one set per worker
        for k in range(towers if mirrored else 1):
            with kg.device(f"worker:{k}"):
                copies.append([kg.Variable(v, name=f"{name}_{k}" if mirrored else name)
                               for v, name in zip(init_values, names)])
        feeds, losses, tower_grads = [], [], []
        for k in range(towers):
            params = copies[k if mirrored else 0]
            with kg.device(f"worker:{k}"), kg.name_scope(f"tower_{k}"):
                x = kg.placeholder(kg.float32, shape=[shard, 1, 8, 8], name="images")
                labels = kg.placeholder(kg.int64, shape=[shard], name="labels")
                loss = _dp_model(kg, x, labels, *params)
                feeds.append((x, labels))
                losses.append(loss)
                tower_grads.append(kg.gradients(loss, params))
        updates, averaged = [], None
        for k, params in enumerate(copies):
            with kg.device(f"worker:{k}"):  # averaged where the variables live
                grads = [_mean([t[i] for t in tower_grads]) for i in range(len(names))]
                updates += [v.assign_sub(g_ * DP_LR) for v, g_ in zip(params, grads)]
                averaged = averaged or grads
        with kg.device("worker:0"):
            loss = _mean(losses)
            train = kg.group(*updates, name="train")
        init = kg.global_variables_initializer()
    return g, feeds, loss, averaged, train, init


def _dp_kg(towers: int, mirrored: bool = False):
    def setup(kg):
        x0, y0, _ = dp_data()
        g, feeds, loss, grads, train, init = build_data_parallel(kg, towers,
                                                                 mirrored=mirrored)
        shard = DP_BATCH // towers
        feed = {}
        for k, (x, labels) in enumerate(feeds):
            feed[x] = x0[k * shard:(k + 1) * shard]
            feed[labels] = y0[k * shard:(k + 1) * shard]
        sess = _session(kg, g)
        sess.run(init)
        # checked before any update: the first step's loss and averaged gradients
        checked = sess.run([loss, grads], feed)
        return Impl("sess.run(train, feed)", {"sess": sess, "train": train, "feed": feed},
                    lambda: checked, close=sess.close,
                    extra={"towers": towers, "mirrored": mirrored})
    return setup


def _na(reason_np=NO_POOL_NP):
    return {"numpy": reason_np, "torch": NO_POOL_TORCH, "tensorflow": NO_POOL_TF}


CASES = (
    Case("20a", f"cross-worker transfer, {TRANSFER_MB} MB", "us/MB",
         f"A {TRANSFER_MB} MB float32 variable on worker:0 summed on worker:1 of a 2-worker "
         "Dask LocalCluster (one thread each): every run moves it between the worker "
         f"processes. Time per MB (sess.run / {TRANSFER_MB}), the run's fixed cost included; "
         "net_us_per_mb subtracts row 20b's.",
         _transfer_reference, {"kernelgraph": _transfer_kg, **_na()}),
    Case("20b", "run across 2 workers, fixed cost", "us",
         "A tiny graph split in two: x (4 floats, fed) * 2 on worker:0, + 1 on worker:1, "
         "fetched: one Session.run's fixed overhead across two workers.",
         _tiny_reference, {"kernelgraph": _tiny_kg, **_na()}, Target(max_us=5000.0)),
    Case("20c", "data-parallel CNN step, 1 worker", "us",
         f"One SGD step of the digits CNN on a batch of {DP_BATCH}, all of it on worker:0 "
         "(one tower): the baseline of 20d.",
         reference_dp_step, {"kernelgraph": _dp_kg(1), **_na(NO_AUTOGRAD_NP)}, rtol=1e-3),
    Case("20d", "data-parallel CNN step, 2 workers", "us",
         f"The step of 20c as two towers of {DP_BATCH // 2} (TF1 in-graph replication): "
         "the variables on worker:0, gradients averaged there, one update. Target: >= "
         f"{SPEEDUP_TARGET}x 20c's throughput.",
         reference_dp_step, {"kernelgraph": _dp_kg(2), **_na(NO_AUTOGRAD_NP)}, rtol=1e-3),
    Case("20e", "data-parallel CNN step, 2 mirrored", "us",
         f"The step of 20d with the variables mirrored on both workers (an all-reduce): "
         "each worker averages both towers' gradients and updates its copy, so neither "
         "tower waits for the other's variables. Target: >= "
         f"{SPEEDUP_TARGET}x 20c's throughput.",
         reference_dp_step, {"kernelgraph": _dp_kg(2, mirrored=True),
                             **_na(NO_AUTOGRAD_NP)}, rtol=1e-3),
)


# -- after the rows: derived figures --------------------------------------------------------------
def finish(rows: list) -> None:
    """Add what needs two rows (20d's and 20e's speed-up over 20c and their target, 20a's
    per-MB cost net of 20b's fixed cost) to the result rows, then close the cluster."""
    close_pool()
    by_id = {row["id"]: row for row in rows}
    one = by_id.get("20c")
    t1 = one["results"]["kernelgraph"]["us"] if one is not None else None
    for two in (by_id.get("20d"), by_id.get("20e")):
        if two is None:
            continue
        t2 = two["results"]["kernelgraph"]["us"]
        speedup = t1 / t2 if t1 and t2 else None
        two["speedup"] = speedup
        two["target"] = f">= {SPEEDUP_TARGET:g}x 20c's throughput"
        two["pass"] = None if speedup is None else speedup >= SPEEDUP_TARGET
        two["unchecked"] = [] if speedup is not None else ["speed-up (needs row 20c)"]
    transfer, fixed = by_id.get("20a"), by_id.get("20b")
    if transfer is not None:
        per_mb = transfer["results"]["kernelgraph"]["us"]
        base = fixed["results"]["kernelgraph"]["us"] if fixed is not None else None
        transfer["net_us_per_mb"] = (per_mb * TRANSFER_MB - base) / TRANSFER_MB \
            if per_mb and base else None


def footnotes(doc: dict) -> list[str]:
    """The table's lines about the distributed rows (speed-up, net transfer cost)."""
    notes = []
    for row in doc["rows"]:
        if row.get("speedup") is not None:
            notes.append(f"row {row['id']}: {row['speedup']:.2f}x the throughput of row 20c "
                         "(2 workers against 1, one thread each)")
        if row.get("net_us_per_mb") is not None:
            notes.append(f"row {row['id']}: {row['net_us_per_mb']:.0f} us per MB without "
                         "row 20b's fixed cost of a run")
    return notes
