"""Normalisation benchmarks.

Row 15 times one BatchNorm2d training step's forward and backward on a CNN's activations,
(100, 16, 28, 28) float32 (the first block of the MNIST CNN): the batch statistics, the
normalised output, the running statistics' update (kernelgraph, PyTorch) and the gradients
of x, the weight and the bias for a fixed upstream gradient; ``kg.nn.BatchNorm2d`` against
``torch.nn.BatchNorm2d`` eagerly, and TF1's fused kernel (``tf.compat.v1.nn.
fused_batch_norm``, NHWC, with ``tf.gradients``) in a Session. Every framework's output and
gradients are checked against a float64 NumPy step.
"""

from __future__ import annotations

import numpy as np

from .cases import NO_AUTOGRAD_NP, Case, Impl, _rng

BN_SHAPE, BN_EPS = (100, 16, 28, 28), 1e-5


def bn_data():
    """(x, upstream gradient, weight, bias), float32."""
    r, c = _rng(15), BN_SHAPE[1]
    x = r.standard_normal(BN_SHAPE) * r.uniform(0.5, 2.0, (1, c, 1, 1)) + 0.3
    g = r.standard_normal(BN_SHAPE)
    w, b = r.uniform(0.5, 1.5, c), r.uniform(-0.5, 0.5, c)
    return tuple(a.astype(np.float32) for a in (x, g, w, b))


def reference_bn():
    """[y, dx, dweight, dbias] in float64."""
    x, g, w, b = (a.astype(np.float64) for a in bn_data())
    axes, view = (0, 2, 3), (1, -1, 1, 1)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    invstd = 1.0 / np.sqrt(var + BN_EPS)
    xhat = (x - mean.reshape(view)) * invstd.reshape(view)
    y = xhat * w.reshape(view) + b.reshape(view)
    db, dw = g.sum(axis=axes), (g * xhat).sum(axis=axes)
    m = x.size // x.shape[1]
    dx = (g - (db / m).reshape(view) - xhat * (dw / m).reshape(view)) * (
        invstd * w).reshape(view)
    return [y, dx, dw, db]


def _eager(make_module, tensor):
    """setup(module) for an eager framework (kernelgraph and PyTorch share the code)."""
    def setup(fw):
        x0, g0, w0, b0 = bn_data()
        bn = make_module(fw)
        with fw.no_grad():
            bn.weight.copy_(tensor(fw, w0))
            bn.bias.copy_(tensor(fw, b0))
        x, g = tensor(fw, x0), tensor(fw, g0)
        x.requires_grad_(True)

        def step():
            x.grad = bn.weight.grad = bn.bias.grad = None
            y = bn(x)
            y.backward(g)
            return y

        def output():
            y = step()
            return [y.detach().numpy(), x.grad.numpy(), bn.weight.grad.numpy(),
                    bn.bias.grad.numpy()]

        return Impl("step()", {"step": step}, output)
    return setup


def _kg_tensor(kg, a):
    return kg.tensor(a)


def _torch_tensor(torch, a):
    return torch.from_numpy(a.copy())


def _tf1(tf):
    v1 = tf.compat.v1
    x0, g0, w0, b0 = bn_data()
    nhwc = (0, 2, 3, 1)
    graph = tf.Graph()
    with graph.as_default():
        # variables, not constants: TF's constant folding would compute the step once
        x = v1.get_variable("x", initializer=x0.transpose(nhwc))
        scale = v1.get_variable("scale", initializer=w0)
        offset = v1.get_variable("offset", initializer=b0)
        y, _, _ = v1.nn.fused_batch_norm(x, scale, offset, epsilon=BN_EPS, data_format="NHWC",
                                         is_training=True)
        grads = v1.gradients(y, [x, scale, offset], grad_ys=[v1.constant(g0.transpose(nhwc))])
        init = v1.global_variables_initializer()
    sess = v1.Session(graph=graph)
    sess.run(init)
    fetches = [y, grads]
    nchw = (0, 3, 1, 2)

    def output():
        yv, (dx, dw, db) = sess.run(fetches)
        return [yv.transpose(nchw), dx.transpose(nchw), dw, db]

    return Impl("sess.run(fetches)", {"sess": sess, "fetches": fetches}, output,
                close=sess.close)


CASES = (
    Case("15", "BatchNorm2d forward+backward", "us",
         f"One training step of BatchNorm2d({BN_SHAPE[1]}) on {BN_SHAPE} float32: batch "
         "statistics, output, running statistics (eager), and the gradients of x, weight "
         "and bias for a fixed upstream gradient (TF1: fused_batch_norm, NHWC, and "
         "tf.gradients in a Session).",
         reference_bn,
         {"kernelgraph": _eager(lambda kg: kg.nn.BatchNorm2d(BN_SHAPE[1]), _kg_tensor),
          "numpy": NO_AUTOGRAD_NP,
          "torch": _eager(lambda torch: torch.nn.BatchNorm2d(BN_SHAPE[1]), _torch_tensor),
          "tensorflow": _tf1}, rtol=1e-3),
)
