"""``to_device``: copy a value to another device, as an op, so that transfers are nodes.

Eager ``x.to('cuda')`` records it (gradients flow back to the CPU leaf, as in PyTorch), and
static placement inserts it wherever a node reads an input that lives on another device, so
the graph view shows every copy between host and GPU.
"""

from __future__ import annotations

from .. import devices
from ..kernels import reference_grads as RG
from .registry import define


def _forward(x, device):
    return devices.transfer(x, devices.device(device))


def _infer(shapes_, dtypes, attrs):
    devices.device(attrs["device"])  # a bad name fails where the node is made
    return shapes_[0], dtypes[0]


def _grad(g, out, needs, attrs, x):
    return (to_device(g, device=devices.device_of(x).name),)


# A transfer runs the same code on either end (it reads one device and writes the other).
to_device = define("to_device", _forward, _infer, _grad, traits=("transfer",),
                   reference=RG.to_device, cuda=lambda k: _forward, attr_names=("device",),
                   doc="x copied to ``device`` ('cpu', 'cuda:0'); the gradient is copied "
                       "back.", saves=(0,), grad_fn="ToCopyBackward0")
