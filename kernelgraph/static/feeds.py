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
from ..dtypes import DtypeError, string
from ..dtypes import convert as convert_value
from ..errors import clipped, describe_location, shown
from ..graph import Node, node_of, shape_str


def feed_converter(node):
    """``convert(value) -> array``: a value fed to ``node``, checked against its declared
    shape and converted to its dtype (and device)."""
    dtype, shape = node.dtype, node.shape
    rank = None if shape is None else len(shape)
    checks = () if shape is None else tuple((i, d) for i, d in enumerate(shape)
                                            if d is not None)

    floats = dtype.kind == "f"

    def convert(value):
        if type(value) is np.ndarray and value.dtype == dtype:
            arr = value  # the hot path: a loop body fed the arrays the last iteration made
        elif floats and type(value) is float:
            arr = np.array(value, dtype)  # a Python float fed to a float: rounded, as below
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
        leaves = nest.flatten(fetches)
        self.nodes = [as_node(f, "Fetch") for f in leaves]
        # TF1: a fetched Operation (t.op, tf.group, an initializer, a train op) runs and
        # answers None, whatever the node's own value.
        self.operations = [i for i, (f, n) in enumerate(zip(leaves, self.nodes))
                           if getattr(type(f), "kg_operation", False) or n.is_operation]
        # TF1 answers a 0-d tensor with a NumPy scalar (np.float32(3.0), b'text').
        self.scalars = [i for i, n in enumerate(self.nodes)
                        if n.shape in ((), None) and i not in self.operations]
        self.fed_strings: list = []  # (fetch index, feed index): see keep_arrays
        self.per_session = False  # whether a run says which Session runs it (Session._compile)
        self.post = bool(self.operations or self.scalars)  # rebuild must change values
        # A copy of the nesting (leaves numbered): the user's own lists may change later.
        self.template = nest.pack_as(fetches, range(len(self.nodes)))

    def keep_arrays(self, nodes) -> None:
        """Answer the fetches among ``nodes`` (the fed ones) with arrays, 0-d ones too; a
        fed string tensor with the fed value itself as an object array (TF1's answers)."""
        fed = {id(n): k for k, n in enumerate(nodes)}
        self.scalars = [i for i in self.scalars if id(self.nodes[i]) not in fed]
        self.fed_strings = [(i, fed[id(n)]) for i, n in enumerate(self.nodes)
                            if id(n) in fed and n.dtype is string]
        self.post = bool(self.operations or self.scalars or self.fed_strings)

    def as_fed(self, values, feed_values) -> list:
        """``values`` with each fetched fed string tensor answered by its fed value."""
        values = list(values)
        for i, k in self.fed_strings:
            values[i] = np.asarray(feed_values[k], dtype=object)
        return values

    def rebuild(self, values):
        """The run's ``values`` (one per node) in the structure of the fetches."""
        if self.post:
            values = list(values)
            for i in self.operations:
                values[i] = None
            for i in self.scalars:
                v = values[i]
                if type(v) is np.ndarray and v.ndim == 0:
                    values[i] = v[()]
        return values[0] if self.single else nest.fill(self.template, values)


def fetch_key(fetches):
    """A hashable key of a fetches structure (the nodes themselves and the nesting), under
    which a Session caches its plans; TypeError for something unhashable inside."""
    t = type(fetches)
    if t is list or t is tuple:
        return (t, *(fetch_key(f) for f in fetches))
    if t is dict:
        return (dict, *((k, fetch_key(v)) for k, v in fetches.items()))
    if isinstance(fetches, Node):
        return fetches
    node = node_of(fetches)
    if node is not None:  # a face's wrapper: the node, and whether it is fetched as None
        return (type(fetches), node)
    return (type(fetches), repr(fetches))
