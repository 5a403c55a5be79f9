"""Record PyTorch's batch normalisation (``nn.BatchNorm1d`` / ``nn.BatchNorm2d``, CPU) into
``batchnorm.json`` (read by tests/test_batch_norm.py), and TF1's fused batch normalisation
(``tf.compat.v1.layers.batch_normalization`` on 4-D inputs, ``tf.nn.fused_batch_norm``).

Run with an environment that has torch and tensorflow-cpu (see README.md here)::

    python tests/recorded/record_batchnorm.py

Each PyTorch case: the module's arguments, its weight and bias, the inputs of two training
steps (or one eval step after a training step) and each step's upstream gradient; per step
the output, the running statistics and ``num_batches_tracked`` after it, the gradients of x,
weight and bias, and the output's grad_fn name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# name: (module, shape of x, module kwargs, mode): mode "train" (two training steps) or
# "eval" (a training step, then eval())
CASES = {
    "bn1d_nc": ("BatchNorm1d", (6, 3), {}, "train"),
    "bn1d_ncl": ("BatchNorm1d", (4, 3, 5), {}, "train"),
    "bn2d": ("BatchNorm2d", (4, 3, 5, 6), {}, "train"),
    "bn2d_momentum_none": ("BatchNorm2d", (3, 2, 4, 4), {"momentum": None}, "train"),
    "bn2d_affine_false": ("BatchNorm2d", (4, 3, 5, 6), {"affine": False}, "train"),
    "bn2d_no_running": ("BatchNorm2d", (4, 3, 5, 6), {"track_running_stats": False}, "train"),
    "bn2d_eval": ("BatchNorm2d", (4, 3, 5, 6), {"eps": 1e-3}, "eval"),
    "bn1d_eval": ("BatchNorm1d", (5, 4), {}, "eval"),
    "bn2d_float64": ("BatchNorm2d", (4, 3, 5, 6), {"dtype": "float64"}, "train"),
}


def _torch_case(torch, np, name, module, shape, kwargs, mode) -> dict:
    rng = np.random.default_rng(sum(map(ord, name)))
    dtype = kwargs.pop("dtype", "float32")
    bn = getattr(torch.nn, module)(shape[1], dtype=getattr(torch, dtype), **kwargs)
    case: dict = {"module": module, "kwargs": kwargs, "dtype": dtype, "mode": mode, "steps": []}
    if bn.affine:
        with torch.no_grad():
            bn.weight.copy_(torch.tensor(rng.uniform(0.5, 1.5, shape[1])))
            bn.bias.copy_(torch.tensor(rng.uniform(-0.5, 0.5, shape[1])))
        case["weight"], case["bias"] = bn.weight.tolist(), bn.bias.tolist()
    for step in range(2):
        if mode == "eval" and step == 1:
            bn.eval()
        # channels with their own offsets and scales, as a conv's outputs have
        x0 = rng.normal(size=shape) * rng.uniform(0.5, 3.0, (1, shape[1]) + (1,) * (len(shape)
                                                                             - 2)) + 2.0
        g0 = rng.normal(size=shape)
        x = torch.tensor(x0.astype(dtype), requires_grad=True)
        y = bn(x)
        y.backward(torch.tensor(g0.astype(dtype)))
        record = {"x": x.detach().tolist(), "g": g0.astype(dtype).tolist(),
                  "y": y.detach().tolist(), "grad_fn": type(y.grad_fn).__name__,
                  "dx": x.grad.tolist()}
        if bn.affine:
            record["dweight"], record["dbias"] = bn.weight.grad.tolist(), bn.bias.grad.tolist()
            bn.weight.grad = bn.bias.grad = None
        if bn.track_running_stats:
            record["running_mean"] = bn.running_mean.tolist()
            record["running_var"] = bn.running_var.tolist()
            record["num_batches_tracked"] = int(bn.num_batches_tracked)
        case["steps"].append(record)
    return case


def _tf_cases(tf, np) -> dict:
    """TF1's fused batch normalisation, training and inference, NHWC and NCHW."""
    out = {}
    rng = np.random.default_rng(31)
    for name, data_format, shape in (("nhwc", "NHWC", (4, 5, 6, 3)), ("nchw", "NCHW",
                                                                       (4, 3, 5, 6))):
        x0 = (rng.normal(size=shape) * 2.0 + 1.0).astype(np.float32)
        g0 = rng.normal(size=shape).astype(np.float32)
        scale = rng.uniform(0.5, 1.5, 3).astype(np.float32)
        offset = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, shape)
            y, mean, var = tf.nn.fused_batch_norm(x, scale, offset, epsilon=1e-3,
                                                  data_format=data_format, is_training=True)
            grads = tf.gradients(y, [x], grad_ys=[tf.constant(g0)])
            axis = 3 if data_format == "NHWC" else 1
            ly = tf.layers.batch_normalization(x, axis=axis, training=True, momentum=0.9)
            lgrads = tf.gradients(ly, [x] + tf.trainable_variables(), grad_ys=[tf.constant(g0)])
            updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
            moving = [v for v in tf.global_variables() if "moving" in v.name]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                yv, mv, vv, gv = sess.run([y, mean, var, grads[0]], {x: x0})
                lyv, lgv = sess.run([ly, lgrads], {x: x0})
                sess.run(updates, {x: x0})
                movingv = sess.run(moving)
        out[name] = {"data_format": data_format, "x": x0.tolist(), "g": g0.tolist(),
                     "scale": scale.tolist(), "offset": offset.tolist(), "y": yv.tolist(),
                     "batch_mean": mv.tolist(), "batch_var": vv.tolist(), "dx": gv.tolist(),
                     "layer_y": lyv.tolist(), "layer_grads": [a.tolist() for a in lgv],
                     "moving_mean": movingv[0].tolist(), "moving_variance": movingv[1].tolist()}
    return out


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow.compat.v1 as tf
    import torch

    tf.disable_eager_execution()
    torch.set_num_threads(1)
    out: dict = {"torch": torch.__version__, "tensorflow": tf.__version__, "cases": {},
                 "tf1": _tf_cases(tf, np)}
    for name, (module, shape, kwargs, mode) in CASES.items():
        out["cases"][name] = _torch_case(torch, np, name, module, shape, dict(kwargs), mode)
    path = Path(__file__).with_name("batchnorm.json")
    path.write_text(json.dumps(out) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
