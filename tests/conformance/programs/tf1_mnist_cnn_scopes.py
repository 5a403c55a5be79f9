"""In the manner of the classic TF1 "convolutional_network_raw.py" examples and the
"MNIST with CNN" labs of TF1 courses: MNIST-shaped images fed through a placeholder as
784-vectors, reshaped to 28 x 28 x 1, two conv2d + ReLU + max_pool blocks and a dense
layer, each in a tf.name_scope, dropout through a keep_prob placeholder, softmax
cross-entropy, AdamOptimizer, a tf.summary.scalar written with tf.summary.FileWriter, and
the accuracy at the end. Each image is its digit's pattern plus noise, so there is something to
learn; initial weights come from a seeded NumPy generator (tf.random_normal's stream is
TensorFlow's own)."""
import os
import tempfile

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(7)
digits = rng.randint(0, 10, size=256)
strokes = rng.rand(10, 784).astype(np.float32)
images = (0.8 * strokes[digits] + 0.2 * rng.rand(256, 784)).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[digits]
print("images:", images.shape, "labels:", labels.shape)

learning_rate = 0.01
batch_size = 64
training_epochs = 4

X = tf.placeholder(tf.float32, [None, 784], name="X")
Y = tf.placeholder(tf.float32, [None, 10], name="Y")
keep_prob = tf.placeholder(tf.float32, name="keep_prob")


def init(*shape):
    return tf.Variable((rng.randn(*shape) * 0.1).astype(np.float32))


with tf.name_scope("conv1"):
    X_img = tf.reshape(X, [-1, 28, 28, 1])
    W1 = init(3, 3, 1, 8)
    L1 = tf.nn.relu(tf.nn.conv2d(X_img, W1, strides=[1, 1, 1, 1], padding="SAME"))
    L1 = tf.nn.max_pool(L1, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

with tf.name_scope("conv2"):
    W2 = init(3, 3, 8, 16)
    L2 = tf.nn.relu(tf.nn.conv2d(L1, W2, strides=[1, 1, 1, 1], padding="SAME"))
    L2 = tf.nn.max_pool(L2, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
    L2_flat = tf.reshape(L2, [-1, 7 * 7 * 16])

with tf.name_scope("dense"):
    W3 = init(7 * 7 * 16, 10)
    b = tf.Variable(np.zeros(10, np.float32))
    logits = tf.matmul(tf.nn.dropout(L2_flat, keep_prob=keep_prob), W3) + b

with tf.name_scope("loss"):
    cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    tf.summary.scalar("cost", cost)
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate).minimize(cost)

correct_prediction = tf.equal(tf.argmax(logits, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
summary = tf.summary.merge_all()

logdir = tempfile.mkdtemp()
sess = tf.Session()
writer = tf.summary.FileWriter(logdir, sess.graph)
sess.run(tf.global_variables_initializer())
print("Learning started. It takes sometime.")
step = 0
for epoch in range(training_epochs):
    avg_cost = 0
    total_batch = len(images) // batch_size
    for i in range(total_batch):
        batch_xs = images[i * batch_size:(i + 1) * batch_size]
        batch_ys = labels[i * batch_size:(i + 1) * batch_size]
        feed_dict = {X: batch_xs, Y: batch_ys, keep_prob: 1.0}
        s, c, _ = sess.run([summary, cost, optimizer], feed_dict=feed_dict)
        writer.add_summary(s, global_step=step)
        step += 1
        avg_cost += c / total_batch
    print("Epoch:", "%04d" % (epoch + 1), "cost =", "{:.9f}".format(avg_cost))
writer.close()
print("Learning Finished!")
print("Accuracy:", sess.run(accuracy, feed_dict={X: images, Y: labels, keep_prob: 1}))
print("event files written:", len([f for f in os.listdir(logdir) if "tfevents" in f]))
