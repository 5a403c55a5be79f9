"""In the manner of TF1's dtype and reduction tests (math_ops tests, reduction_ops_test.py)
and the tutorials that use small dtypes: int8 / int16 / uint8 / float16 constants, casts and
arithmetic (uint8 wraps), reduce_sum / reduce_mean / reduce_max / reduce_min / reduce_prod
with axis, reduction_indices and keep_dims, tf.argmax / tf.arg_max / tf.arg_min."""
import numpy as np
import tensorflow as tf

u8 = tf.constant([250, 3, 7], dtype=tf.uint8)
i8 = tf.constant([-100, 50, 27], dtype=tf.int8)
i16 = tf.constant([1000, -2000], dtype=tf.int16)
h = tf.constant([0.1, 1.5, 1000.0], dtype=tf.float16)
img = tf.placeholder(tf.uint8, shape=[2, 2])
scaled = tf.cast(img, tf.float32) / 255.0

m = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
ints = tf.constant([[3, 1, 2], [0, 9, 4]])

with tf.Session() as sess:
    print(sess.run(u8 + tf.constant(10, dtype=tf.uint8)), u8.dtype)
    print(sess.run(i8 * 2), sess.run(tf.cast(i8, tf.int16) * 2))
    print(sess.run(i16 // 3), sess.run(tf.abs(i16)), i16.dtype.name)
    r = sess.run(h * 2.0)
    print(r, r.dtype, sess.run(tf.cast(h, tf.float32)))
    print(sess.run(tf.cast(tf.constant([1.7, 2.2, 200.0]), tf.uint8)))
    print(sess.run(scaled, {img: np.array([[0, 255], [128, 64]], dtype=np.uint8)}))
    print(sess.run(tf.reduce_sum(m)), sess.run(tf.reduce_sum(m, 0)), sess.run(tf.reduce_sum(m, 1)))
    print(sess.run(tf.reduce_sum(m, reduction_indices=1)),
          sess.run(tf.reduce_mean(m, reduction_indices=[0])))
    print(sess.run(tf.reduce_sum(m, 1, keep_dims=True)), sess.run(tf.reduce_max(m, keepdims=True)))
    print(sess.run(tf.reduce_min(m, axis=1)), sess.run(tf.reduce_prod(m, axis=0)))
    print(sess.run(tf.reduce_mean(ints)), sess.run(tf.reduce_mean(tf.cast(ints, tf.float32))))
    print(sess.run(tf.argmax(ints, 1)), sess.run(tf.arg_max(ints, 0)),
          sess.run(tf.arg_min(ints, 1)), sess.run(tf.argmin(ints, axis=0)))
    print(sess.run(tf.argmax(m, 1, output_type=tf.int32)).dtype)
    print(sess.run(tf.reduce_any(m > 5.0, axis=1)), sess.run(tf.reduce_all(m > 0.0)))
    print(sess.run(tf.reduce_logsumexp(m, axis=1)))
