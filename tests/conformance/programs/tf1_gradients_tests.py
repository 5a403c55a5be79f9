"""In the manner of TF1's gradients_test.py and the gradients section of its API docs:
tf.gradients of sums and products, several xs, grad_ys, stop_gradient, a disconnected
input with unconnected_gradients NONE (None) and ZERO (zeros), aggregation_method,
tf.hessians of a quadratic form, and reduction gradients."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

x = tf.constant([1.0, 2.0, 3.0])
y = tf.constant([0.5, -1.0, 2.0])
f = tf.reduce_sum(x * x * y)
gx, gy = tf.gradients(f, [x, y])
z = tf.constant(4.0)
unused = tf.constant([7.0, 8.0])
g_none = tf.gradients(f, [x, unused])
g_zero = tf.gradients(f, [x, unused], unconnected_gradients=tf.UnconnectedGradients.ZERO)
g_agg = tf.gradients([f, 2.0 * f], [x],
                     aggregation_method=tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)
g_ys = tf.gradients(x * 2.0, x, grad_ys=tf.constant([1.0, 10.0, 100.0]))
stopped = tf.gradients(x * tf.stop_gradient(x), x)
multi = tf.gradients([tf.reduce_sum(x), tf.reduce_sum(x * z)], [x, z])

A = tf.constant(np.array([[2.0, 1.0], [1.0, 3.0]], dtype=np.float32))
v = tf.placeholder(tf.float32, shape=[2])
quad = tf.reduce_sum(v * tf.linalg.matvec(A, v)) + tf.reduce_sum(tf.sin(v))
hess = tf.hessians(quad, v)

m = tf.constant([[1.0, 4.0, 2.0], [3.0, 0.0, 5.0]])
g_max = tf.gradients(tf.reduce_max(m, reduction_indices=1), m)[0]
g_mean = tf.gradients(tf.reduce_mean(m, axis=0), m)[0]
g_soft = tf.gradients(tf.reduce_sum(tf.nn.softmax(m) * m), m)[0]

with tf.Session() as sess:
    print(sess.run([gx, gy]))
    print(g_none[1], sess.run(g_none[0]))
    print(sess.run(g_zero))
    print(sess.run(g_agg))
    print(sess.run(g_ys), sess.run(stopped))
    print(sess.run(multi))
    print(sess.run(hess, feed_dict={v: [0.5, -1.0]}))
    print(sess.run([g_max, g_mean]))
    print(sess.run(g_soft))
print(len(hess), hess[0].shape.as_list())
