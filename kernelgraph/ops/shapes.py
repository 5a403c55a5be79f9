"""The ops' shape rules, now in :mod:`kernelgraph.shapes` (floor 0, shared with the
kernels); kept importable here for callers of the old path."""

from ..shapes import (  # noqa: F401
    axes_arg,
    axis_arg,
    broadcast,
    broadcast_all,
    compatible,
    is_int,
    known,
    nonempty_reduction,
)
