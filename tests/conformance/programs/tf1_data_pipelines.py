"""In the manner of TF1's low-level guide "Importing Data" (tf.data input pipelines):
Dataset.from_tensor_slices over arrays, tuples and dicts, map, batch, repeat, shuffle (its
order is TF's own: only the multiset is printed), one-shot and initializable iterators
fed from placeholders, and the OutOfRangeError that ends an epoch."""
import numpy as np
import tensorflow as tf

features = np.arange(10, dtype=np.float32).reshape(5, 2)
labels = np.array([0, 1, 0, 1, 1], dtype=np.int64)

dataset = tf.data.Dataset.from_tensor_slices((features, labels))
print(dataset.output_types, [s.as_list() for s in dataset.output_shapes])
dataset = dataset.map(lambda x, y: (x * 2.0, y + 10))
dataset = dataset.batch(2)
it = dataset.make_one_shot_iterator()
next_element = it.get_next()
with tf.Session() as sess:
    while True:
        try:
            fx, fy = sess.run(next_element)
            print(fx.tolist(), fy.tolist())
        except tf.errors.OutOfRangeError:
            print("end of epoch")
            break

d2 = tf.data.Dataset.from_tensor_slices({"a": np.array([1.0, 2.0, 3.0]),
                                         "b": np.array([[1, 2], [3, 4], [5, 6]])})
d2 = d2.repeat(2).batch(4)
el = d2.make_one_shot_iterator().get_next()
with tf.Session() as sess:
    for _ in range(2):
        out = sess.run(el)
        print(sorted(out), out["a"], out["b"].tolist())

max_value = tf.placeholder(tf.int64, shape=[])
d3 = tf.data.Dataset.range(max_value)
it3 = d3.make_initializable_iterator()
nxt = it3.get_next()
with tf.Session() as sess:
    sess.run(it3.initializer, feed_dict={max_value: 4})
    print([sess.run(nxt) for _ in range(4)])
    sess.run(it3.initializer, feed_dict={max_value: 2})
    print(sess.run(nxt), sess.run(nxt))
    try:
        sess.run(nxt)
    except tf.errors.OutOfRangeError:
        print("OutOfRangeError")

x_ph = tf.placeholder(tf.float32, shape=[None, 2])
d4 = tf.data.Dataset.from_tensor_slices(x_ph).shuffle(buffer_size=10, seed=1).batch(10)
it4 = tf.data.make_initializable_iterator(d4)
batch = it4.get_next()
total = tf.reduce_sum(batch)
with tf.Session() as sess:
    sess.run(it4.initializer, feed_dict={x_ph: features})
    shuffled = sess.run(batch)
    print(sorted(shuffled[:, 0].tolist()), shuffled.shape)
    sess.run(it4.initializer, feed_dict={x_ph: features})
    print(sess.run(total))

d5 = tf.data.Dataset.from_tensor_slices(features).repeat().batch(3)
n5 = d5.make_one_shot_iterator().get_next()
with tf.Session() as sess:
    for _ in range(3):
        print(sess.run(n5)[:, 1])
