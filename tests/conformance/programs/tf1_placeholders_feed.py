"""In the manner of the classic TF1 "Basic Operations" example and TF1's feeding idioms:
placeholders of several dtypes and shapes, tf.add / tf.multiply with feed_dict, a
placeholder with a None dimension, fetching lists and dicts, and feeding numpy arrays."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

a = tf.placeholder(tf.int16)
b = tf.placeholder(tf.int16)
add = tf.add(a, b)
mul = tf.multiply(a, b)
with tf.Session() as sess:
    print("Addition with variables: %i" % sess.run(add, feed_dict={a: 2, b: 3}))
    print("Multiplication with variables: %i" % sess.run(mul, feed_dict={a: 2, b: 3}))
    r = sess.run(add, feed_dict={a: 7, b: -9})
    print(r, r.dtype)

x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
w = tf.constant([[1.0], [0.5], [-2.0]])
y = tf.matmul(x, w) + 1.0
print(x.shape.as_list(), y.get_shape().as_list())
with tf.Session() as sess:
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    print(sess.run(y, feed_dict={x: data}))
    print(sess.run(y, {x: [[1.0, 1.0, 1.0]]}))
    out = sess.run({"y": y, "both": [y, tf.reduce_sum(y)]}, feed_dict={x: data})
    print(out["y"].ravel(), out["both"][1])
    print(sess.run(tf.square(x), feed_dict={x: np.ones((1, 3)) * 1.5}))

z = tf.placeholder(tf.float64, shape=(2,))
with tf.Session() as sess:
    print(sess.run(z * 2, feed_dict={z: [0.25, 0.5]}).dtype)
    try:
        sess.run(z * 2, feed_dict={z: [1.0, 2.0, 3.0]})
    except ValueError:
        print("ValueError")
    try:
        sess.run(z * 2)
    except tf.errors.InvalidArgumentError:
        print("InvalidArgumentError")
