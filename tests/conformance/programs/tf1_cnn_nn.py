"""In the manner of the classic TF1 example "convolutional_network_raw.py": conv2d /
max_pool wrappers over tf.nn.conv2d, tf.nn.bias_add, tf.nn.max_pool, reshaping x to
[-1, 28, 28, 1], dropout with a keep_prob placeholder (fed 1.0 so that the numbers do not
depend on TF's random stream), AdamOptimizer, on MNIST-shaped data; weights from NumPy."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
images = rng.rand(16, 784).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=16)]

X = tf.placeholder(tf.float32, [None, 784])
Y = tf.placeholder(tf.float32, [None, 10])
keep_prob = tf.placeholder(tf.float32)


def conv2d(x, W, b, strides=1):
    x = tf.nn.conv2d(x, W, strides=[1, strides, strides, 1], padding="SAME")
    x = tf.nn.bias_add(x, b)
    return tf.nn.relu(x)


def maxpool2d(x, k=2):
    return tf.nn.max_pool(x, ksize=[1, k, k, 1], strides=[1, k, k, 1], padding="SAME")


def init(*shape):
    return tf.Variable((rng.randn(*shape) * 0.1).astype(np.float32))


weights = {"wc1": init(5, 5, 1, 4), "wc2": init(3, 3, 4, 8), "wd1": init(7 * 7 * 8, 32),
           "out": init(32, 10)}
biases = {"bc1": init(4), "bc2": init(8), "bd1": init(32), "out": init(10)}


def conv_net(x, weights, biases, dropout):
    x = tf.reshape(x, shape=[-1, 28, 28, 1])
    conv1 = maxpool2d(conv2d(x, weights["wc1"], biases["bc1"]), k=2)
    conv2 = maxpool2d(conv2d(conv1, weights["wc2"], biases["bc2"]), k=2)
    fc1 = tf.reshape(conv2, [-1, weights["wd1"].get_shape().as_list()[0]])
    fc1 = tf.nn.relu(tf.add(tf.matmul(fc1, weights["wd1"]), biases["bd1"]))
    fc1 = tf.nn.dropout(fc1, dropout)
    return tf.add(tf.matmul(fc1, weights["out"]), biases["out"])


logits = conv_net(X, weights, biases, keep_prob)
prediction = tf.nn.softmax(logits)
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
train_op = tf.train.AdamOptimizer(learning_rate=0.005).minimize(loss_op)
correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
print(logits.get_shape().as_list())

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(1, 7):
        sess.run(train_op, feed_dict={X: images, Y: labels, keep_prob: 1.0})
        if step % 2 == 0:
            loss, acc = sess.run([loss_op, accuracy],
                                 feed_dict={X: images, Y: labels, keep_prob: 1.0})
            print("Step " + str(step) + ", Minibatch Loss= " + f"{loss:.4f}"
                  + ", Training Accuracy= " + f"{acc:.3f}")
    print(sess.run(prediction, feed_dict={X: images[:2], keep_prob: 1.0}))
