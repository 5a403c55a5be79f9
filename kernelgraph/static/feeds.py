"""What ``Session.run`` is given and what it gives back: fed values checked and converted
to their placeholder's dtype and shape, and fetch structures flattened to nodes and rebuilt
around the values.

A feed is converted as TF1 converts one (floats truncated for an int dtype, text parsed),
except that nothing is wrapped; a value of the wrong shape is refused naming both shapes
and the line that made the placeholder. Fetches may be a node, a node's name, or any
list / tuple / dict nesting of them (:mod:`kernelgraph.nest`).
"""

from __future__ import annotations

import numpy as np

from .. import devices, nest
from ..dtypes import DtypeError
from ..dtypes import convert as convert_value
from ..errors import clipped, describe_location, shown
from ..graph import Node, shape_str


def feed_converter(node):
    """``convert(value) -> array``: a value fed to ``node``, checked against its declared
    shape and converted to its dtype (and device)."""
    dtype, shape = node.dtype, node.shape
    rank = None if shape is None else len(shape)
    checks = () if shape is None else tuple((i, d) for i, d in enumerate(shape)
                                            if d is not None)

    def convert(value):
        if type(value) is np.ndarray and value.dtype == dtype:
            arr = value  # the hot path: a loop body fed the arrays the last iteration made
        else:
            try:
                # Converted as TF1 converts a feed (floats truncated for an int dtype, text
                # parsed), except that nothing is wrapped: an int out of the dtype's range,
                # a uint64 above int64's, NaN for an int, or complex numbers are refused.
                arr = convert_value(value, dtype, what="the fed value", parse=True)
            except (TypeError, ValueError, OverflowError) as e:
                # TF1's error types: ValueError for text that is no number, TypeError for
                # an int the dtype cannot hold or a value NumPy cannot convert.
                kind = ValueError if isinstance(e, ValueError) and not isinstance(
                    e, DtypeError) else TypeError
                # Quoted in brief: the message never holds the whole fed value.
                raise kind(f"Cannot feed value {shown(value, 60)} to '{node.name}' "
                           f"({dtype.name}): {clipped(str(e))}") from None
        if rank is not None:
            got = arr.shape
            if len(got) != rank:
                _bad_feed(node, got)
            for i, d in checks:
                if got[i] != d:
                    _bad_feed(node, got)
        return arr

    if node.device.type == "cpu":
        return convert
    return lambda value: devices.transfer(convert(value), node.device)  # fed from the host


def _bad_feed(node, got):
    raise ValueError(f"Cannot feed value of shape {shape_str(got)} for Tensor '{node.name}:0', "
                     f"which has shape '{shape_str(node.shape)}'\n"
                     f"{describe_location(node.location)}")


class FetchSpec:
    """A fetches structure as a flat node list (``nodes``), and the values of those nodes
    put back into the same structure (:meth:`rebuild`). ``as_node(leaf, "Fetch")`` turns a
    leaf (a node or a name) into its node, refusing anything else."""

    def __init__(self, as_node, fetches):
        self.single = not nest.is_nested(fetches)  # one node: its value alone
        self.nodes = [as_node(f, "Fetch") for f in nest.flatten(fetches)]
        # A copy of the nesting (leaves numbered): the user's own lists may change later.
        self.template = nest.pack_as(fetches, range(len(self.nodes)))

    def rebuild(self, values):
        """The run's ``values`` (one per node) in the structure of the fetches."""
        return values[0] if self.single else nest.pack_as(self.template, values)


def fetch_key(fetches):
    """A hashable key of a fetches structure (the nodes themselves and the nesting), under
    which a Session caches its plans; TypeError for something unhashable inside."""
    t = type(fetches)
    if t is list or t is tuple:
        return (t, *(fetch_key(f) for f in fetches))
    if t is dict:
        return (dict, *((k, fetch_key(v)) for k, v in fetches.items()))
    return fetches if isinstance(fetches, Node) else (type(fetches), repr(fetches))
