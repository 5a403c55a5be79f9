"""In the manner of TF1's "Build a CNN with tf.layers" (the MNIST layers tutorial) and the
classic "convolutional_network.py": tf.layers.conv2d / max_pooling2d / flatten / dense /
dropout on MNIST-shaped input, kernels from tf.constant_initializer over NumPy arrays (TF's
glorot draws cannot be matched), sparse softmax cross-entropy and a GradientDescent step."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
images = rng.rand(12, 28, 28, 1).astype(np.float32)
labels = rng.randint(0, 10, size=12)


def const(*shape):
    return tf.constant_initializer((rng.randn(*shape) * 0.1).astype(np.float32))


x = tf.placeholder(tf.float32, [None, 28, 28, 1])
y = tf.placeholder(tf.int64, [None])
training = tf.placeholder_with_default(False, shape=())

conv1 = tf.layers.conv2d(x, filters=4, kernel_size=[5, 5], padding="same",
                         activation=tf.nn.relu, kernel_initializer=const(5, 5, 1, 4))
pool1 = tf.layers.max_pooling2d(conv1, pool_size=[2, 2], strides=2)
conv2 = tf.layers.conv2d(pool1, 6, 3, activation=tf.nn.relu,
                         kernel_initializer=const(3, 3, 4, 6),
                         bias_initializer=tf.constant_initializer(0.01))
pool2 = tf.layers.max_pooling2d(conv2, 2, 2)
flat = tf.layers.flatten(pool2)
dense = tf.layers.dense(flat, 16, activation=tf.nn.relu,
                        kernel_initializer=const(flat.shape.as_list()[1], 16))
drop = tf.layers.dropout(dense, rate=0.4, training=training)
logits = tf.layers.dense(drop, 10, kernel_initializer=const(16, 10))
print(conv1.shape.as_list(), pool1.shape.as_list(), conv2.shape.as_list(),
      pool2.shape.as_list(), flat.shape.as_list(), logits.shape.as_list())
print([v.name for v in tf.trainable_variables()])

loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
predictions = tf.argmax(logits, axis=1)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(5):
        _, loss_value = sess.run([train_op, loss], feed_dict={x: images, y: labels})
        print(step, loss_value)
    print(sess.run(predictions, feed_dict={x: images}))
    print(sess.run(tf.nn.softmax(logits)[0], feed_dict={x: images[:1]}))
