"""Record PyTorch's 1-D and transposed convolutions, 1-D and adaptive pooling,
``interpolate``, the padding modes, channel dropout, pixel shuffling and instance
normalisation into ``torch_conv_layers.json`` (read by tests/test_torch_conv_layers.py).

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_torch_conv_layers.py

Each functional case runs ``F.<fn>(*inputs, **kwargs)`` in float64 on inputs of distinct
values (no ties in a pooling window) and records the output, its ``grad_fn`` and the
gradients of ``sum(y * w)`` for a weight ``w`` of distinct values. The module cases record,
after ``torch.manual_seed(0)``, the initial parameters and repr of a layer and its output on
a fixed input; the dropout cases the seeded masks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("torch_conv_layers.json")


def values(*shape, phase: float = 0.4) -> list:
    n = int(np.prod(shape))
    return (2.0 * np.sin(np.arange(n) * 1.3 + phase)).reshape(shape).tolist()


def case(name, fn, inputs, diff=None, **kwargs):
    """inputs: (shape or a literal list) per positional argument; diff: the ones to
    differentiate (all of them by default)."""
    arrays = [values(*s, phase=0.4 + i) if isinstance(s, tuple) else s
              for i, s in enumerate(inputs)]
    return {"name": name, "fn": fn, "inputs": arrays, "kwargs": kwargs,
            "diff": list(range(len(inputs))) if diff is None else diff}


# Sampling points inside and outside [-1, 1], none on a pixel edge or a rounding half (the
# bilinear weights are not differentiable there, and nearest rounds halves to even).
GRID = (np.array([[[[-1.1, -0.93], [-0.61, 0.27], [0.13, 0.71]],
                   [[0.37, -0.45], [0.83, 0.97], [1.17, 0.09]]],
                  [[[-0.71, 0.53], [0.21, -0.17], [0.59, -0.81]],
                   [[-0.33, 0.11], [0.91, 0.43], [-0.07, 1.03]]]])).tolist()
THETA = [[[0.9, -0.3, 0.1], [0.2, 1.1, -0.2]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]

CASES = [
    case("conv1d", "conv1d", [(2, 3, 7), (4, 3, 3), (4,)], stride=2, padding=1),
    case("conv1d_same_dilated", "conv1d", [(2, 3, 9), (2, 3, 3)], padding="same",
         dilation=2),
    case("conv1d_unbatched", "conv1d", [(3, 6), (2, 3, 2)]),
    case("conv3d", "conv3d", [(2, 3, 6, 5, 4), (4, 3, 3, 2, 3), (4,)], stride=2, padding=1),
    case("conv3d_dilated", "conv3d", [(1, 2, 7, 5, 4), (3, 2, 2, 3, 2)], stride=[2, 1, 2],
         padding=[2, 0, 1], dilation=[2, 1, 1]),
    case("conv3d_same", "conv3d", [(1, 2, 4, 4, 4), (2, 2, 3, 3, 3)], padding="same"),
    case("conv3d_unbatched", "conv3d", [(2, 3, 3, 3), (2, 2, 2, 2, 2)]),
    case("conv_transpose2d", "conv_transpose2d", [(2, 3, 4, 5), (3, 2, 3, 3), (2,)],
         stride=2, padding=1, output_padding=1),
    case("conv_transpose2d_dilated", "conv_transpose2d", [(1, 2, 3, 3), (2, 3, 2, 2)],
         dilation=2),
    case("conv_transpose2d_rect", "conv_transpose2d", [(2, 2, 3, 4), (2, 1, 4, 2), (1,)],
         stride=(2, 3), padding=(1, 0)),
    case("conv_transpose2d_unbatched", "conv_transpose2d", [(2, 3, 3), (2, 2, 2, 2)],
         stride=2),
    case("conv_transpose1d", "conv_transpose1d", [(2, 3, 5), (3, 2, 4), (2,)], stride=2,
         padding=1),
    case("max_pool1d", "max_pool1d", [(2, 3, 8)], kernel_size=3, stride=2, padding=1),
    case("max_pool1d_default_stride", "max_pool1d", [(1, 2, 9)], kernel_size=2),
    case("avg_pool1d", "avg_pool1d", [(2, 3, 8)], kernel_size=3, stride=2, padding=1),
    case("adaptive_avg_pool2d", "adaptive_avg_pool2d", [(2, 3, 7, 5)], output_size=[3, 2]),
    case("adaptive_avg_pool2d_one", "adaptive_avg_pool2d", [(2, 3, 4, 4)], output_size=1),
    case("adaptive_avg_pool2d_up", "adaptive_avg_pool2d", [(1, 2, 3, 2)], output_size=[5, 4]),
    case("adaptive_avg_pool2d_none", "adaptive_avg_pool2d", [(1, 2, 6, 5)],
         output_size=[None, 2]),
    case("adaptive_avg_pool1d", "adaptive_avg_pool1d", [(2, 3, 7)], output_size=3),
    case("adaptive_max_pool2d", "adaptive_max_pool2d", [(2, 3, 4, 6)], output_size=[2, 3]),
    case("adaptive_max_pool2d_one", "adaptive_max_pool2d", [(2, 3, 3, 5)], output_size=1),
    case("adaptive_max_pool2d_overlap", "adaptive_max_pool2d", [(2, 2, 5, 7)],
         output_size=[3, 4]),
    case("adaptive_max_pool2d_up", "adaptive_max_pool2d", [(1, 2, 2, 3)], output_size=[3, 5]),
    case("nearest_size", "interpolate", [(1, 2, 3, 4)], size=[7, 5]),
    case("nearest_scale2", "interpolate", [(2, 2, 3, 4)], scale_factor=2),
    case("nearest_scale_frac", "interpolate", [(1, 2, 3, 4)], scale_factor=1.7),
    case("nearest_recompute", "interpolate", [(1, 2, 3, 4)], scale_factor=1.7,
         recompute_scale_factor=True),
    case("nearest_down", "interpolate", [(1, 1, 7, 5)], size=[3, 2], mode="nearest"),
    case("bilinear", "interpolate", [(1, 2, 3, 4)], size=[7, 5], mode="bilinear"),
    case("bilinear_corners", "interpolate", [(1, 2, 3, 4)], size=[7, 5], mode="bilinear",
         align_corners=True),
    case("bilinear_scale", "interpolate", [(2, 1, 3, 4)], scale_factor=2.5, mode="bilinear",
         align_corners=False),
    case("bilinear_scale_corners", "interpolate", [(1, 1, 3, 4)], scale_factor=2,
         mode="bilinear", align_corners=True),
    case("bilinear_down", "interpolate", [(1, 2, 5, 7)], size=[2, 3], mode="bilinear"),
    case("bilinear_one_row", "interpolate", [(1, 1, 3, 4)], size=[1, 6], mode="bilinear",
         align_corners=True),
    case("linear_1d", "interpolate", [(2, 2, 4)], scale_factor=2, mode="linear"),
    case("nearest_1d", "interpolate", [(1, 2, 4)], size=7),
    case("area", "interpolate", [(1, 2, 5, 7)], size=[2, 3], mode="area"),
    case("pad_reflect", "pad", [(1, 2, 4, 5)], pad=[1, 2, 3, 0], mode="reflect"),
    case("pad_reflect_1d", "pad", [(2, 2, 5)], pad=[2, 3], mode="reflect"),
    case("pad_reflect_unbatched", "pad", [(2, 3, 4)], pad=[1, 1, 2, 2], mode="reflect"),
    case("pad_replicate", "pad", [(1, 2, 3, 4)], pad=[2, 1, 0, 3], mode="replicate"),
    case("pad_replicate_1d", "pad", [(1, 2, 3)], pad=[4, 1], mode="replicate"),
    case("grid_sample", "grid_sample", [(2, 3, 4, 5), GRID], align_corners=False),
    case("grid_sample_corners", "grid_sample", [(2, 3, 4, 5), GRID], align_corners=True),
    case("grid_sample_nearest", "grid_sample", [(2, 3, 4, 5), GRID], mode="nearest",
         align_corners=False),
    case("affine_grid", "affine_grid", [THETA], size=[2, 3, 4, 5], align_corners=False),
    case("affine_grid_corners", "affine_grid", [THETA], size=[2, 1, 3, 2], align_corners=True),
    case("pixel_shuffle", "pixel_shuffle", [(2, 8, 2, 3)], upscale_factor=2),
    case("pixel_unshuffle", "pixel_unshuffle", [(1, 2, 4, 6)], downscale_factor=2),
    case("instance_norm", "instance_norm", [(2, 3, 4, 5)]),
    case("instance_norm_affine", "instance_norm", [(2, 3, 4, 5), (3,), (3,)]),
]
# instance_norm's weight and bias go by keyword in torch; the test passes them the same way.
CASES[-1]["inputs_by_name"] = {"weight": 1, "bias": 2}

MODULES = [
    ("ConvTranspose2d", [3, 2, 3], {"stride": 2, "padding": 1, "output_padding": 1},
     (2, 3, 4, 4)),
    ("ConvTranspose2d", [2, 4, [2, 3]], {"bias": False}, (1, 2, 3, 3)),
    ("ConvTranspose1d", [3, 2, 4], {"stride": 2}, (2, 3, 5)),
    ("Conv1d", [3, 4, 3], {"padding": 1}, (2, 3, 6)),
    ("Conv1d", [2, 2, 5], {"stride": 2, "bias": False}, (1, 2, 11)),
    ("Conv3d", [2, 3, 3], {"padding": 1}, (1, 2, 4, 4, 4)),
    ("Conv3d", [2, 2, [1, 2, 2]], {"stride": [1, 2, 2], "bias": False}, (2, 2, 3, 4, 4)),
    ("MaxPool1d", [2], {}, (1, 2, 6)),
    ("AvgPool1d", [3], {"stride": 1}, (1, 2, 6)),
    ("AdaptiveAvgPool2d", [[1, 1]], {}, (2, 3, 4, 5)),
    ("AdaptiveAvgPool2d", [3], {}, (1, 2, 7, 8)),
    ("AdaptiveAvgPool1d", [2], {}, (1, 2, 5)),
    ("AdaptiveMaxPool2d", [1], {}, (1, 2, 4, 4)),
    ("Upsample", [], {"scale_factor": 2, "mode": "nearest"}, (1, 1, 2, 3)),
    ("Upsample", [], {"size": [5, 4], "mode": "bilinear", "align_corners": False},
     (1, 2, 3, 3)),
    ("UpsamplingNearest2d", [], {"scale_factor": 2}, (1, 1, 2, 2)),
    ("UpsamplingBilinear2d", [], {"scale_factor": 2}, (1, 1, 2, 3)),
    ("ReflectionPad2d", [2], {}, (1, 1, 3, 3)),
    ("ReflectionPad2d", [[1, 0, 2, 1]], {}, (1, 2, 3, 4)),
    ("ReflectionPad1d", [2], {}, (1, 2, 4)),
    ("ReplicationPad2d", [1], {}, (1, 1, 2, 3)),
    ("ReplicationPad1d", [[0, 2]], {}, (1, 2, 3)),
    ("ZeroPad2d", [[1, 0, 0, 2]], {}, (1, 1, 2, 2)),
    ("ConstantPad2d", [1, 3.5], {}, (1, 1, 2, 2)),
    ("PixelShuffle", [2], {}, (1, 4, 2, 2)),
    ("PixelUnshuffle", [2], {}, (1, 1, 4, 4)),
    ("InstanceNorm2d", [3], {}, (2, 3, 3, 4)),
    ("InstanceNorm2d", [2], {"affine": True}, (1, 2, 3, 3)),
    ("InstanceNorm1d", [2], {}, (2, 2, 5)),
    ("Dropout2d", [0.25], {}, None),
    ("Dropout1d", [0.5], {}, None),
]


def main() -> None:
    import torch
    import torch.nn.functional as F

    torch.set_default_dtype(torch.float64)
    functional = []
    for c in CASES:
        xs = [torch.tensor(v, dtype=torch.float64, requires_grad=i in c["diff"])
              for i, v in enumerate(c["inputs"])]
        kwargs = dict(c["kwargs"])
        by_name = c.get("inputs_by_name", {})
        for key, i in by_name.items():
            kwargs[key] = xs[i]
        positional = [x for i, x in enumerate(xs) if i not in by_name.values()]
        y = getattr(F, c["fn"])(*positional, **kwargs)
        w = torch.tensor(values(*y.shape, phase=2.1))
        (y * w).sum().backward()
        functional.append({**c, "out": y.detach().tolist(), "out_shape": list(y.shape),
                           "w": w.tolist(), "grad_fn": type(y.grad_fn).__name__,
                           "grads": {str(i): xs[i].grad.tolist() for i in c["diff"]
                                     if i < len(xs)}})

    modules = []
    for name, args, kwargs, shape in MODULES:
        torch.manual_seed(0)
        layer = getattr(torch.nn, name)(*args, **kwargs)
        entry = {"name": name, "args": args, "kwargs": kwargs, "repr": repr(layer),
                 "params": {k: v.detach().tolist() for k, v in layer.named_parameters()},
                 "param_shapes": {k: list(v.shape) for k, v in layer.named_parameters()}}
        if shape is None:  # dropout: the seeded masks of two calls, then eval()
            x = torch.ones(4, 6, 2, 3) if name == "Dropout2d" else torch.ones(4, 6, 3)
            entry["input_shape"] = list(x.shape)
            entry["outs"] = [layer(x).tolist(), layer(x).tolist()]
            entry["eval"] = layer.eval()(x).tolist()
        else:
            x = torch.tensor(values(*shape), requires_grad=True)
            y = layer(x)
            y.sum().backward()
            entry.update(input=x.tolist(), out=y.tolist(), x_grad=x.grad.tolist(),
                         grad_fn=type(y.grad_fn).__name__)
        modules.append(entry)

    # float32 modules: the parameters a default (float32) layer draws after manual_seed(0).
    torch.set_default_dtype(torch.float32)
    float32 = []
    for name, args, kwargs in (("ConvTranspose2d", [4, 3, 3], {"stride": 2}),
                               ("Conv1d", [3, 5, 2], {}), ("Conv3d", [2, 3, 2], {})):
        torch.manual_seed(0)
        layer = getattr(torch.nn, name)(*args, **kwargs)
        float32.append({"name": name, "args": args, "kwargs": kwargs,
                        "params": {k: v.detach().tolist()
                                   for k, v in layer.named_parameters()}})

    OUT.write_text(json.dumps({"torch": torch.__version__, "functional": functional,
                               "modules": modules, "float32_init": float32}, indent=1) + "\n",
                   encoding="utf-8")


if __name__ == "__main__":
    main()
