"""In the manner of the classic TF1 example "logistic_regression.py" on MNIST: x [None, 784],
y one-hot [None, 10], W and b from tf.zeros, softmax, cross-entropy with reduction_indices,
minibatches by slicing, and accuracy with tf.argmax / tf.equal / tf.cast evaluated with
accuracy.eval({...}). MNIST-shaped data from a seeded NumPy generator; a second model uses
tf.nn.softmax_cross_entropy_with_logits(_v2)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
images = rng.random((120, 784)).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, size=120)]
images[np.arange(120), labels.argmax(1) * 70] += 1.0  # a learnable signal

learning_rate = 0.05
batch_size = 40
x = tf.placeholder(tf.float32, [None, 784])
y = tf.placeholder(tf.float32, [None, 10])
W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
pred = tf.nn.softmax(tf.matmul(x, W) + b)
cost = tf.reduce_mean(-tf.reduce_sum(y * tf.log(pred), reduction_indices=1))
optimizer = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(4):
        avg_cost = 0.0
        total_batch = images.shape[0] // batch_size
        for i in range(total_batch):
            batch_xs = images[i * batch_size:(i + 1) * batch_size]
            batch_ys = labels[i * batch_size:(i + 1) * batch_size]
            _, c = sess.run([optimizer, cost], feed_dict={x: batch_xs, y: batch_ys})
            avg_cost += c / total_batch
        print("Epoch:", "%04d" % (epoch + 1), "cost=", f"{avg_cost:.9f}")
    print("Optimization Finished!")
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    print("Accuracy:", accuracy.eval({x: images[:60], y: labels[:60]}))
    print(sess.run(tf.argmax(pred, 1), feed_dict={x: images[:8]}))

logits = tf.matmul(x, W) + b
xent = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
xent2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits)
train2 = tf.train.GradientDescentOptimizer(0.05).minimize(xent)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(5):
        _, loss = sess.run([train2, xent], feed_dict={x: images[:40], y: labels[:40]})
        print(step, loss)
    print(sess.run(xent2, feed_dict={x: images[:3], y: labels[:3]}))
