"""A notebook's cells: they import kernelgraph and TF1's face, and mix them."""

import numpy as np

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from tests.import_styles import kg_program, tf1_program


def facts() -> dict:
    """TF1's tensors keep TF1's meanings and kernelgraph's nodes kernelgraph's, in one
    module; each crosses into the other framework's functions."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
        y = x * 2.0
        node = kg.reduce_sum(y)  # a TF1 tensor into kernelgraph: a kernelgraph node
        back = tf.identity(node)  # a kernelgraph node into TF1: a TF1 tensor
        mixed = node * y  # kernelgraph's operator, a TF1 operand: a kernelgraph node
        with tf.Session() as sess:
            values = sess.run([node, back, mixed, y.op], {x: [[1.0, 2.0, 3.0]]})
        return {
            "tf": [x.name, y.name, y.op.type, type(x.shape).__name__,
                   isinstance(x.dtype, tf.DType), repr(x), str(y)],
            "kg": [node.name, type(node).__name__, node.op.name, node.shape,
                   isinstance(node.dtype, np.dtype), repr(node)],
            "back": [back.name, back.op.type, isinstance(back, tf.Tensor)],
            "mixed": [type(mixed).__name__, mixed.name],
            "values": [float(values[0]), float(values[1]), values[2].tolist(), values[3]],
            # the other two programs, run from here, still give their own meanings
            "tf1 program": tf1_program.facts(),
            "kg program": kg_program.facts(),
        }
