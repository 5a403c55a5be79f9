"""In the manner of TF1's low-level guide pages on tensors and graphs ("Tensors",
"Graphs and Sessions"): tf.constant with shape (fill and reshape), rank and tf.shape,
TensorShape and get_shape().as_list(), tf.reshape with -1, tf.cast, tensor.eval() and
op.run() in a default session, eval feeding a tensor that is not a placeholder,
fetching an op (None), tf.range, tf.unstack, tf.convert_to_tensor, tf.stop_gradient."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

filled = tf.constant(-1.0, shape=[2, 3])
reshaped = tf.constant([1, 2, 3, 4, 5, 6], shape=[3, 2])
column = tf.constant([1, 2, 3], shape=[3, 1])
print(filled.shape, reshaped.get_shape().as_list(), column.dtype)

my_image = tf.zeros([10, 299, 299, 3])
r = tf.rank(my_image)
s = tf.shape(my_image)
shape = tf.TensorShape([None, 4])
print(shape.as_list(), shape.ndims, shape[1], tf.TensorShape([2, 3]).num_elements())
print(my_image.shape[1], my_image.get_shape().as_list())

rank_three = tf.ones([3, 4, 5])
matrix = tf.reshape(rank_three, [6, 10])
matrixB = tf.reshape(matrix, [3, -1])
print(matrix.shape.as_list(), matrixB.shape.as_list())
float_tensor = tf.cast(tf.constant([1, 2, 3]), dtype=tf.float32)
print(float_tensor.dtype)

sess = tf.Session()
with sess.as_default():
    print(filled.eval())
    print(reshaped.eval())
    print(column.eval().ravel(), r.eval(), s.eval())
    print(tf.shape(matrixB).eval())

    p = tf.placeholder(tf.float32)
    t = p + 1.0
    u = t * 2.0
    print(t.eval(feed_dict={p: [1.0, 2.0, 3.0]}))
    print(u.eval({t: [10.0, 20.0]}))
    print(sess.run(u, feed_dict={t: 5.0}))

    v = tf.Variable([1.0, 2.0], name="v")
    init = tf.global_variables_initializer()
    init.run()
    inc = v.assign_add([0.5, 0.5])
    inc.op.run()
    print(v.eval(), sess.run(inc.op), sess.run(tf.no_op()))
    print(sess.run(init), v.eval())

    print(tf.range(5).eval(), tf.range(1, 10, 3).eval(), tf.range(0.0, 1.0, 0.25).eval())
    rows = tf.unstack(tf.constant([[1, 2], [3, 4], [5, 6]]))
    print(len(rows), rows[2].eval())
    cols = tf.unstack(tf.constant([[1, 2], [3, 4], [5, 6]]), axis=1)
    print([c.eval() for c in cols])
    ct = tf.convert_to_tensor(np.array([[1.5, 2.5]]), dtype=tf.float32)
    print(ct.dtype, ct.eval())

    w = tf.constant(3.0)
    out = w * w + tf.stop_gradient(w * w)
    print(out.eval(), tf.gradients(out, w)[0].eval())
sess.close()
