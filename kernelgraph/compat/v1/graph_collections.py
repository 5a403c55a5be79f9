"""TF1's graph collections (``tf.GraphKeys``, ``tf.get_collection``,
``tf.add_to_collection``) and its local variables: a variable made with
``collections=[tf.GraphKeys.LOCAL_VARIABLES]`` (``tf.metrics``' counts) is listed by
``tf.local_variables()``, not by ``tf.global_variables()``."""

from __future__ import annotations

import re
import weakref

from ...graph import Node, get_default_graph
from ...static.variables import variables_initializer


class GraphKeys:
    """TF1's standard collection names (``tf.GraphKeys.TRAINABLE_VARIABLES`` ...)."""

    GLOBAL_VARIABLES = VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    QUEUE_RUNNERS = "queue_runners"


_collections: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # graph -> {key: list}


def get_collection_ref(key) -> list:
    """The default graph's collection ``key`` itself (a list that may be changed)."""
    return _collections.setdefault(get_default_graph(), {}).setdefault(key, [])


def get_collection(key, scope=None) -> list:
    """TF1's ``tf.get_collection``: a copy of the default graph's collection ``key``; the
    variables' collections list the graph's Variables. ``scope`` keeps the items whose
    name matches it from the start (a regular expression, as in TF1)."""
    graph = get_default_graph()
    items = list(_collections.get(graph, {}).get(key, []))
    if key == GraphKeys.GLOBAL_VARIABLES:
        items = list(graph.variables) + [v for v in items if v not in graph.variables]
    elif key == GraphKeys.TRAINABLE_VARIABLES:
        items = [v for v in graph.variables if v.trainable] + [
            v for v in items if v not in graph.variables]
        # local trainable variables among the global ones, in the order they were made
        items.sort(key=lambda v: getattr(v, "seq", 0))
    if scope is not None:
        items = [i for i in items if re.match(scope, getattr(i, "name", "") or "")]
    return items


def add_to_collection(name, value) -> None:
    """TF1's ``tf.add_to_collection``: append ``value`` to the default graph's collection."""
    get_collection_ref(name).append(value)


def add_to_collections(names, value) -> None:
    """TF1's ``tf.add_to_collections``: ``value`` appended to each collection of ``names``."""
    for name in ([names] if isinstance(names, str) else names):
        add_to_collection(name, value)


def in_collections(var, collections):
    """``var`` in TF1's ``collections`` (None: the global variables): one made with
    ``collections=[tf.GraphKeys.LOCAL_VARIABLES]`` is a local variable, which
    ``tf.global_variables()`` and its initializer leave out."""
    if collections is None:
        return var
    keys = [collections] if isinstance(collections, str) else list(collections)
    if GraphKeys.GLOBAL_VARIABLES in keys:
        return var
    var.graph.variables.remove(var)
    if var.trainable:  # as TF1: trained (tf.trainable_variables()) though not global
        keys.append(GraphKeys.TRAINABLE_VARIABLES)
    with var.graph.as_default():
        for key in dict.fromkeys(keys):
            get_collection_ref(key).append(var)
    return var


def trainable_variables(scope=None) -> list:
    """TF1's ``tf.trainable_variables()``: the ``TRAINABLE_VARIABLES`` collection (the
    trainable global variables, and local ones made trainable), in the order made."""
    return get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None) -> list:
    """TF1's local variables (``tf.GraphKeys.LOCAL_VARIABLES``: ``tf.metrics``' counts),
    which ``tf.global_variables()`` does not list."""
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def local_variables_initializer() -> Node:
    """An Operation that initialises the local variables (``tf.metrics``' counts)."""
    return variables_initializer(local_variables(), name="init_1")
