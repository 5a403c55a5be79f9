"""TF1's names for running on a cluster: ``tf.RunOptions``, ``tf.RunMetadata``,
``tf.train.ClusterSpec``, ``tf.train.replica_device_setter`` (kernelgraph.distributed's),
gathered here for ``kernelgraph.compat.v1``.

>>> import kernelgraph.compat.v1 as tf
>>> tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE).trace_level
3
>>> tf.train.ClusterSpec({"worker": ["tcp://10.0.0.1:8786"]}).num_tasks("worker")
1
"""

from __future__ import annotations

from ... import devices
from ...distributed.metadata import RunMetadata, RunOptions
from ...distributed.replicas import ClusterSpec, replica_device_setter
from ...distributed.timeline import Timeline


def device(device_name_or_function):
    """TF1's ``tf.device``: a device name, a ``replica_device_setter``'s scope, or None
    (what ``replica_device_setter`` returns for a cluster without ps tasks), which clears
    the enclosing device scopes for its block.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     with tf.device("/job:worker/task:1/device:CPU:0"):
    ...         with tf.device(tf.train.replica_device_setter(cluster={"worker": ["a"]})):
    ...             c = tf.constant(1.0)
    >>> c.device
    device('cpu')
    """
    if device_name_or_function is None:
        return devices.unplaced()
    return devices.device(device_name_or_function)


#: what ``tf.train`` gains (TF1's names there)
TRAIN_NAMES = {"ClusterSpec": ClusterSpec, "replica_device_setter": replica_device_setter}

__all__ = ["RunMetadata", "RunOptions", "device", "ClusterSpec", "replica_device_setter",
           "Timeline", "TRAIN_NAMES"]
