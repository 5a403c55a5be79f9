"""In the manner of the classic TF1 "save and restore a model" examples: a small network of
tf.Variables in a weights dict, RMSPropOptimizer, a tf.train.Saver, training for a few
epochs and saver.save(sess, model_path, global_step=...), then a second Session that
restores the newest checkpoint found by tf.train.latest_checkpoint (and checks
tf.train.get_checkpoint_state), evaluates, and resumes training. Data and initial weights
from a seeded NumPy generator."""
import os
import tempfile

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
x_data = rng.rand(64, 4).astype(np.float32)
y_data = (x_data @ np.array([[1.5], [-2.0], [0.5], [1.0]], np.float32) + 0.3
          + 0.01 * rng.randn(64, 1).astype(np.float32))

X = tf.placeholder(tf.float32, [None, 4], name="X")
Y = tf.placeholder(tf.float32, [None, 1], name="Y")
weights = {
    "h1": tf.Variable((rng.randn(4, 8) * 0.5).astype(np.float32), name="h1"),
    "out": tf.Variable((rng.randn(8, 1) * 0.5).astype(np.float32), name="out"),
}
biases = {
    "b1": tf.Variable(np.zeros(8, np.float32), name="b1"),
    "out": tf.Variable(np.zeros(1, np.float32), name="b_out"),
}
hidden = tf.nn.tanh(tf.matmul(X, weights["h1"]) + biases["b1"])
prediction = tf.add(tf.matmul(hidden, weights["out"]), biases["out"], name="prediction")
cost = tf.reduce_mean(tf.square(prediction - Y))
global_step = tf.Variable(0, trainable=False, name="global_step")
optimizer = tf.train.RMSPropOptimizer(learning_rate=0.01).minimize(cost, global_step=global_step)
init = tf.global_variables_initializer()
saver = tf.train.Saver()
model_dir = tempfile.mkdtemp()
model_path = os.path.join(model_dir, "model.ckpt")

print("Starting 1st session...")
with tf.Session() as sess:
    sess.run(init)
    for epoch in range(3):
        for i in range(4):
            batch = slice(i * 16, (i + 1) * 16)
            _, c = sess.run([optimizer, cost], feed_dict={X: x_data[batch], Y: y_data[batch]})
        print("Epoch:", "%04d" % (epoch + 1), "cost=", "{:.9f}".format(c))
    print("First Optimization Finished!")
    save_path = saver.save(sess, model_path, global_step=global_step)
    print("Model saved in file:", os.path.basename(save_path))

print("Starting 2nd session...")
with tf.Session() as sess:
    sess.run(init)
    print("cost before restoring:", "{:.6f}".format(sess.run(cost, {X: x_data, Y: y_data})))
    ckpt = tf.train.get_checkpoint_state(model_dir)
    print("checkpoint state names:", os.path.basename(ckpt.model_checkpoint_path))
    saver.restore(sess, tf.train.latest_checkpoint(model_dir))
    print("Model restored, global step", sess.run(global_step))
    print("cost after restoring:", "{:.6f}".format(sess.run(cost, {X: x_data, Y: y_data})))
    for epoch in range(2):
        for i in range(4):
            batch = slice(i * 16, (i + 1) * 16)
            _, c = sess.run([optimizer, cost], feed_dict={X: x_data[batch], Y: y_data[batch]})
        print("Epoch:", "%04d" % (epoch + 1), "cost=", "{:.9f}".format(c))
    print("Second Optimization Finished!", "global step", sess.run(global_step))
