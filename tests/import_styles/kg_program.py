"""A kernelgraph program (PyTorch-style names, static mode): it imports kernelgraph only."""

import numpy as np

import kernelgraph as kg


def facts() -> dict:
    """What a kernelgraph program reads off its graph nodes."""
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        y = x * 2.0
        z = kg.reduce_sum(y)
        with kg.Session() as sess:
            value = sess.run(z, {x: [[1.0, 2.0, 3.0]]})
        return {
            "names": [x.name, y.name, z.name],
            "ops": [y.op is kg.ops.mul, y.op.name, z.op.name],
            "shapes": [x.shape, type(x.shape) is tuple, z.shape],
            "dtypes": [x.dtype is np.dtype(np.float32), isinstance(x.dtype, np.dtype)],
            "printed": [repr(x), str(y)],
            "value": float(value),
        }
