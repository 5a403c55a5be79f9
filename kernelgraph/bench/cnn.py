"""Bench rows 17: the MNIST CNN step a learner trains, in each framework's own words.

The model is the convolutional network of the classic PyTorch MNIST tutorials: two blocks of
a 5x5 convolution (1 -> 16, then 16 -> 32 channels, padding 2), BatchNorm2d, ReLU and a 2x2
max-pool, then a linear head 7*7*32 -> 10, the mean cross-entropy and one Adam step (lr
0.001), on a batch of 100 1x28x28 images. The eager row runs that PyTorch program with
kernelgraph as ``torch``; the static row runs the TF1 program (``tf.layers`` conv2d,
batch_normalization(training=True), max_pooling2d, dense; ``AdamOptimizer.minimize`` with
the UPDATE_OPS) with ``kernelgraph.compat.v1`` as ``tf``. PyTorch and TF1 run the same two
programs. Every side starts from the same weights and data, and its loss and gradients are
checked against the step written by hand in float64 NumPy.
"""

from __future__ import annotations

import numpy as np

from .cases import NO_AUTOGRAD_NP, Case, Impl, Target

BATCH, SIZE, CLASSES, KERNEL, LR, EPS = 100, 28, 10, 5, 1e-3, 1e-5
CHANNELS = (1, 16, 32)
FLAT = CHANNELS[-1] * (SIZE // 4) ** 2

# What the check compares besides the loss: the gradients that float32 rounding cannot
# change much. Among 150,000 max-pool windows some hold two values equal to about 1e-6, and
# which one wins is decided by rounding, differently in every framework (PyTorch and TF1 pick
# differently from each other there too). A flipped window hardly changes the head's or the
# last BatchNorm's gradients (the two values are nearly equal), but it moves a gradient
# onto another input patch, so the conv filters' and the first BatchNorm's gradients differ
# in their third digit between correct float32 programs.
CHECKED = ("layer2.1.weight", "layer2.1.bias", "fc.weight", "fc.bias")


def data() -> tuple[np.ndarray, np.ndarray, dict]:
    """Images (N, 1, 28, 28) in [0, 1), labels (N,) int64, and the weights under PyTorch's
    state_dict names (OIHW filters, fc.weight (10, 1568)), drawn as PyTorch's default
    initialisation draws them (uniform in +-1/sqrt(fan_in))."""
    r = np.random.default_rng(17)
    x = r.random((BATCH, 1, SIZE, SIZE), dtype=np.float32)
    labels = r.integers(0, CLASSES, BATCH).astype(np.int64)

    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return r.uniform(-bound, bound, shape).astype(np.float32)

    weights = {}
    for i, (c_in, c_out) in enumerate(zip(CHANNELS, CHANNELS[1:]), start=1):
        fan_in = c_in * KERNEL * KERNEL
        weights[f"layer{i}.0.weight"] = uniform((c_out, c_in, KERNEL, KERNEL), fan_in)
        weights[f"layer{i}.0.bias"] = uniform((c_out,), fan_in)
        weights[f"layer{i}.1.weight"] = np.ones(c_out, np.float32)
        weights[f"layer{i}.1.bias"] = np.zeros(c_out, np.float32)
    weights["fc.weight"] = uniform((CLASSES, FLAT), FLAT)
    weights["fc.bias"] = uniform((CLASSES,), FLAT)
    return x, labels, weights


# -- the float64 NumPy step --------------------------------------------------------------------
def _windows(x):
    """(N, C, H, W) -> (N, C, 5, 5, H, W): each output position's 5x5 window, padding 2."""
    n, c, h, w = x.shape
    p = KERNEL // 2
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.empty((n, c, KERNEL, KERNEL, h, w), x.dtype)
    for i in range(KERNEL):
        for j in range(KERNEL):
            out[:, :, i, j] = xp[:, :, i:i + h, j:j + w]
    return out


def _unwindow(cols, shape):
    """The adjoint of :func:`_windows`: each window element added back where it was read."""
    n, c, h, w = shape
    p = KERNEL // 2
    dxp = np.zeros((n, c, h + 2 * p, w + 2 * p))
    for i in range(KERNEL):
        for j in range(KERNEL):
            dxp[:, :, i:i + h, j:j + w] += cols[:, :, i, j]
    return dxp[:, :, p:-p, p:-p]


def _block_forward(x, w, b, gamma, beta):
    cols = _windows(x)
    a = np.einsum("ncijhw,ocij->nohw", cols, w) + b[None, :, None, None]
    mean = a.mean(axis=(0, 2, 3), keepdims=True)
    inv = 1.0 / np.sqrt(a.var(axis=(0, 2, 3), keepdims=True) + EPS)
    xhat = (a - mean) * inv
    z = xhat * gamma[None, :, None, None] + beta[None, :, None, None]
    r = np.maximum(z, 0.0)
    n, c, h, wd = r.shape
    quads = r.reshape(n, c, h // 2, 2, wd // 2, 2)
    pooled = quads.max(axis=(3, 5))
    return pooled, (x, cols, w, xhat, inv, gamma, z, quads, pooled)


def _block_backward(dpooled, saved):
    x, cols, w, xhat, inv, gamma, z, quads, pooled = saved
    # the first maximum of each 2x2 window takes the gradient, as PyTorch's max-pool does
    flat = quads.transpose(0, 1, 2, 4, 3, 5).reshape(*pooled.shape, 4)
    first = flat.argmax(axis=-1)
    dflat = np.zeros_like(flat)
    np.put_along_axis(dflat, first[..., None], dpooled[..., None], axis=-1)
    n, c, h2, w2 = pooled.shape
    dr = dflat.reshape(n, c, h2, w2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(z.shape)
    dz = dr * (z > 0)
    axes = (0, 2, 3)
    dgamma, dbeta = (dz * xhat).sum(axis=axes), dz.sum(axis=axes)
    dxhat = dz * gamma[None, :, None, None]
    da = inv * (dxhat - dxhat.mean(axis=axes, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=axes, keepdims=True))
    dw = np.einsum("ncijhw,nohw->ocij", cols, da)
    dx = _unwindow(np.einsum("ocij,nohw->ncijhw", w, da), x.shape)
    return dx, dw, da.sum(axis=axes), dgamma, dbeta


def reference_step() -> list:
    """[loss, [the gradients named in CHECKED]] of the step from :func:`data`, in float64."""
    x, labels, weights = data()
    loss, grads = loss_and_gradients(x, labels, weights)
    return [np.array(loss), [grads[k] for k in CHECKED]]


def loss_and_gradients(x, labels, weights) -> tuple[float, dict]:
    """The mean cross-entropy of the model and its gradient for every weight, in float64."""
    p = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    h, saved = x.astype(np.float64), []
    for i in (1, 2):
        h, s = _block_forward(h, p[f"layer{i}.0.weight"], p[f"layer{i}.0.bias"],
                              p[f"layer{i}.1.weight"], p[f"layer{i}.1.bias"])
        saved.append(s)
    flat = h.reshape(len(h), -1)
    z = flat @ p["fc.weight"].T + p["fc.bias"]
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))
    loss = -logp[rows, labels].mean()
    dz = np.exp(logp)
    dz[rows, labels] -= 1.0
    dz /= len(labels)
    grads = {"fc.weight": dz.T @ flat, "fc.bias": dz.sum(axis=0)}
    dh = (dz @ p["fc.weight"]).reshape(h.shape)
    for i in (2, 1):
        dh, dw, db, dgamma, dbeta = _block_backward(dh, saved[i - 1])
        grads.update({f"layer{i}.0.weight": dw, f"layer{i}.0.bias": db,
                      f"layer{i}.1.weight": dgamma, f"layer{i}.1.bias": dbeta})
    return float(loss), grads


# -- the PyTorch program (kernelgraph eager, torch) ----------------------------------------------
def _torch_program(torch):
    nn = torch.nn

    class ConvNet(nn.Module):
        def __init__(self, num_classes=CLASSES):
            super().__init__()
            self.layer1 = nn.Sequential(
                nn.Conv2d(1, 16, kernel_size=5, stride=1, padding=2),
                nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2))
            self.layer2 = nn.Sequential(
                nn.Conv2d(16, 32, kernel_size=5, stride=1, padding=2),
                nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2))
            self.fc = nn.Linear(7 * 7 * 32, num_classes)

        def forward(self, x):
            out = self.layer1(x)
            out = self.layer2(out)
            out = out.reshape(out.size(0), -1)
            return self.fc(out)

    x0, y0, weights = data()
    model = ConvNet()
    state = model.state_dict()
    state.update({k: torch.tensor(v) for k, v in weights.items()})
    model.load_state_dict(state)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    images, labels = torch.tensor(x0), torch.tensor(y0)

    def step():
        outputs = model(images)
        loss = criterion(outputs, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    def output():  # the first step: its loss and the gradients at the initial weights
        loss = step()
        params = dict(model.named_parameters())
        return [loss.detach().numpy(), [params[k].grad.numpy() for k in CHECKED]]

    return Impl("step()", {"step": step}, output)


# -- the TF1 program (kernelgraph static, TF1) ---------------------------------------------------
def _hwio(w):
    return np.ascontiguousarray(w.transpose(2, 3, 1, 0))


def _fc_nhwc(w):
    """fc.weight (10, C*H*W) as a dense kernel for NHWC flattening: (H*W*C, 10)."""
    side = SIZE // 4
    return np.ascontiguousarray(w.reshape(CLASSES, CHANNELS[-1], side, side)
                                .transpose(2, 3, 1, 0).reshape(FLAT, CLASSES))


def _tf_program(tf):
    """The step in TF1's words; ``tf`` is ``tf.compat.v1`` or ``kernelgraph.compat.v1``."""
    x0, y0, weights = data()
    images = np.ascontiguousarray(x0.transpose(0, 2, 3, 1))  # NHWC, once, outside timing
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, (None, SIZE, SIZE, 1))
        labels = tf.placeholder(tf.int64, (None,))
        h = x
        for i in (1, 2):
            w, b = weights[f"layer{i}.0.weight"], weights[f"layer{i}.0.bias"]
            h = tf.layers.conv2d(h, w.shape[0], KERNEL, padding="same",
                                 kernel_initializer=tf.constant_initializer(_hwio(w)),
                                 bias_initializer=tf.constant_initializer(b))
            h = tf.layers.batch_normalization(h, epsilon=EPS, training=True)
            h = tf.layers.max_pooling2d(tf.nn.relu(h), 2, 2)
        logits = tf.layers.dense(
            tf.reshape(h, (-1, FLAT)), CLASSES,
            kernel_initializer=tf.constant_initializer(_fc_nhwc(weights["fc.weight"])),
            bias_initializer=tf.constant_initializer(weights["fc.bias"]))
        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.AdamOptimizer(LR).minimize(loss)
        names = ("batch_normalization_1/gamma", "batch_normalization_1/beta", "dense/kernel",
                 "dense/bias")
        by_name = {v.op.name: v for v in tf.trainable_variables()}
        grads = tf.gradients(loss, [by_name[n] for n in names])
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=g)
    sess.run(init)
    feed = {x: images, labels: y0}

    def output():  # the gradients at the initial weights, in PyTorch's layouts
        value, (g2, b2, kd, bd) = sess.run([loss, grads], feed_dict=feed)
        side = SIZE // 4
        fc = kd.reshape(side, side, CHANNELS[-1], CLASSES).transpose(3, 2, 0, 1)
        return [value, [g2, b2, fc.reshape(CLASSES, FLAT), bd]]

    ns = {"sess": sess, "loss": loss, "train": train, "feed": feed}
    return Impl("sess.run([loss, train], feed_dict=feed)", ns, output, close=sess.close)


def _kg_tf_program(kg):
    # late: the TF1 face only when this row runs, not in every process that reads the cases
    # (the compile row's child times its import)
    from ..compat import v1

    return _tf_program(v1)


def _tf1(tf):
    return _tf_program(tf.compat.v1)


_MODEL = ("The MNIST CNN step of the PyTorch tutorials: conv 5x5 1->16 pad 2, BatchNorm2d, "
          "ReLU, max-pool 2x2, conv 5x5 16->32, BatchNorm2d, ReLU, max-pool, linear 1568->10, "
          "mean cross-entropy, one Adam step (lr 0.001), batch 100 of 1x28x28")
_CHECK = ("checked against the float64 NumPy step: the loss and the gradients of the last "
          "BatchNorm and the linear head (the others depend on which of two nearly equal "
          "values some max-pool windows pick, which rounding decides)")
CASES = (
    Case("17a", "MNIST CNN step, kg eager", "us",
         f"{_MODEL}. kernelgraph eager runs the PyTorch program (model(images), "
         "criterion, zero_grad, backward, optimizer.step()) with kernelgraph as torch; torch "
         "runs it as written; TF1 runs the same layers in tf.layers (NHWC) with "
         f"AdamOptimizer.minimize; {_CHECK}.",
         reference_step,
         {"kernelgraph": _torch_program, "numpy": NO_AUTOGRAD_NP, "torch": _torch_program,
          "tensorflow": _tf1},
         Target(max_ratio=(("torch", 1.5),))),
    Case("17b", "MNIST CNN step, kg static", "us",
         f"{_MODEL}. kernelgraph static runs the TF1 program of row 17a's TF1 column with "
         "kernelgraph.compat.v1 as tf (sess.run([loss, train], feed_dict=feed)); torch and "
         f"TF1 as in 17a; {_CHECK}.",
         reference_step,
         {"kernelgraph": _kg_tf_program, "numpy": NO_AUTOGRAD_NP, "torch": _torch_program,
          "tensorflow": _tf1},
         Target(max_ratio=(("torch", 1.5),))),
)
