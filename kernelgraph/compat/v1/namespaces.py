"""The names of the networks, data and control-flow modules in ``kernelgraph.compat.v1`` (``tf.nn``,
``tf.losses``, ``tf.layers``, ``tf.data``, ``tf.get_variable`` and the initializers,
``tf.case``, ``tf.logging``, ``tf.compat.v1`` ...), gathered here so that the package's
``__init__`` imports them in one line."""

from __future__ import annotations

import sys

from .control_flow import case, switch_case
from .functional import foldl, foldr, map_fn, scan
from .initializers import (
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from .iterators import data
from .layers import layers
from .losses import losses
from .nn import nn
from .program import app, compat_namespace, logging
from .variable_scope import (
    AUTO_REUSE,
    VariableScope,
    get_variable,
    get_variable_scope,
    variable_scope,
)

# tf.compat.v1 is this package itself (half-made while it imports this module: its names
# are all there by the time a program reads them).
compat = compat_namespace(sys.modules[__package__])

__all__ = [
    "app", "case", "compat", "foldl", "foldr", "logging", "map_fn", "scan", "switch_case",
    "AUTO_REUSE", "VariableScope", "constant_initializer", "data", "get_variable",
    "get_variable_scope", "glorot_normal_initializer", "glorot_uniform_initializer", "layers",
    "losses", "nn", "ones_initializer", "random_normal_initializer",
    "random_uniform_initializer", "truncated_normal_initializer",
    "variable_scope", "variance_scaling_initializer", "zeros_initializer",
]
