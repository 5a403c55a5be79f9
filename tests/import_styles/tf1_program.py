"""A TF1 program, its import swapped: it imports TF1's face and nothing else of kernelgraph.
``facts(tf)`` is also what tests/recorded/record_tf_face.py runs on real TF1."""

import kernelgraph.compat.v1 as tf


def facts(tf=tf) -> dict:
    """What a TF1 program reads off its tensors, operations and variables."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
        y = x * 2.0
        z = tf.reduce_sum(tf.matmul(y, tf.ones([3, 1])), name="total")
        v = tf.Variable([1.0, 2.0], name="v")
        step = v.assign_add([1.0, 1.0])
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            values = sess.run([y, y.op, z, step], {x: [[1.0, 2.0, 3.0]]})
            evaluated = z.eval({x: [[1.0, 1.0, 1.0]]})
        return {
            "names": [x.name, y.name, z.name, v.name, step.name],
            "op types": [x.op.type, y.op.type, z.op.type, v.op.type, step.op.type,
                         init.type, v.initializer.type],
            "op names": [y.op.name, v.initializer.name],
            "op inputs": [t.name for t in y.op.inputs],
            "outputs": [y.op.outputs[0] is y, y.op is y.op, y.op.inputs[0] is x],
            "graph": [y.graph is g, tf.get_default_graph() is g],
            "types": [type(x.shape).__name__, isinstance(x.dtype, tf.DType),
                      isinstance(y, tf.Tensor), isinstance(y.op, tf.Operation),
                      isinstance(init, tf.Operation), isinstance(v, tf.Variable)],
            "shapes": [x.shape.as_list(), x.get_shape().as_list(), x.shape.ndims,
                       str(x.shape), z.shape.as_list()],
            "dtypes": [str(x.dtype), x.dtype.name, x.dtype == tf.float32, repr(x.dtype)],
            "printed": [repr(x), str(y), repr(v)],
            "values": [values[0].tolist(), values[1], float(values[2]), values[3].tolist(),
                       float(evaluated)],
        }
