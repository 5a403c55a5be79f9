"""TF1's switches between its modes and its old names: ``tf.enable_eager_execution`` (refused:
see below), ``tf.keras.backend.clear_session`` and ``tf.all_variables``.

kernelgraph's TF1 face is TF1's graph mode only. Its eager mode is the PyTorch face
(``import kernelgraph as kg``: ``kg.tensor``, ``backward()``), over the same ops; the TF1
names do not compute eagerly, so ``tf.enable_eager_execution()`` raises an error that says
so rather than leave a program to meet graph tensors where it expects values.
"""

from __future__ import annotations

from ...graph import reset_default_graph
from . import graph_collections as C


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Refused: kernelgraph's TF1 face builds graphs (see the module's text)."""
    raise NotImplementedError(
        "tf.enable_eager_execution: kernelgraph's TF1 face is TF1's graph mode only. Run "
        "the program in graph mode (tf.Session), or write it with kernelgraph's eager mode, "
        "the PyTorch face (import kernelgraph as kg; kg.tensor(...)).")


def executing_eagerly() -> bool:
    """False: the TF1 face always builds a graph."""
    return False


def clear_session() -> None:
    """``tf.keras.backend.clear_session()``: in TF1's graph mode, a new empty default graph
    (the nodes made so far are left with the old one)."""
    reset_default_graph()


def all_variables(scope=None) -> list:
    """TF1's old name of ``tf.global_variables()``."""
    return C.get_collection(C.GraphKeys.GLOBAL_VARIABLES, scope)



__all__ = ["all_variables", "enable_eager_execution", "executing_eagerly"]
