"""In the manner of TF1's low-level API guide ("Introduction": tensors, graphs, sessions,
feeding, datasets, layers, training): constants, printing a graph tensor, fetching tuples
and dicts, placeholders fed with scalars and lists, a one-shot iterator to
OutOfRangeError, a tf.layers.Dense layer, and the small linear-model training loop with
tf.losses.mean_squared_error; fetching the train op gives None."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

a = tf.constant(3.0, dtype=tf.float32)
b = tf.constant(4.0)
total = a + b
print(a)
print(b)
print(total)

sess = tf.Session()
print(sess.run(total))
print(sess.run({"ab": (a, b), "total": total}))

x = tf.placeholder(tf.float32)
y = tf.placeholder(tf.float32)
z = x + y
print(sess.run(z, feed_dict={x: 3, y: 4.5}))
print(sess.run(z, feed_dict={x: [1, 3], y: [2, 4]}))

my_data = [[0, 1], [2, 3], [4, 5], [6, 7]]
slices = tf.data.Dataset.from_tensor_slices(my_data)
next_item = tf.data.make_one_shot_iterator(slices).get_next()
while True:
    try:
        print(sess.run(next_item))
    except tf.errors.OutOfRangeError:
        break

xs = tf.placeholder(tf.float32, shape=[None, 3])
linear_model = tf.layers.Dense(units=1, kernel_initializer=tf.constant_initializer(
    [[0.5], [-1.0], [2.0]]), bias_initializer=tf.constant_initializer(0.25))
ys = linear_model(xs)
init = tf.global_variables_initializer()
sess.run(init)
print(sess.run(ys, {xs: [[1, 2, 3], [4, 5, 6]]}))

x_in = tf.constant([[1], [2], [3], [4]], dtype=tf.float32)
y_true = tf.constant([[0], [-1], [-2], [-3]], dtype=tf.float32)
model = tf.layers.Dense(units=1, kernel_initializer=tf.constant_initializer(0.3))
y_pred = model(x_in)
loss = tf.losses.mean_squared_error(labels=y_true, predictions=y_pred)
optimizer = tf.train.GradientDescentOptimizer(0.01)
train = optimizer.minimize(loss)
sess.run(tf.global_variables_initializer())
print(sess.run(y_pred).ravel())
for i in range(60):
    _, loss_value = sess.run((train, loss))
    if i % 15 == 0:
        print(i, _, loss_value)
print(sess.run(y_pred).ravel())
print(sess.run(train), sess.run(init))
sess.close()
print(np.asarray(my_data).sum())
