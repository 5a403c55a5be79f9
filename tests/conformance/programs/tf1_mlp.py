"""In the manner of the classic TF1 example "multilayer_perceptron.py": a weights dict and a
biases dict of tf.Variables (initial values from a seeded NumPy generator instead of
tf.random_normal, whose stream only TF has), two ReLU hidden layers, softmax cross-entropy
with logits, AdamOptimizer, minibatches, and a test accuracy on MNIST-shaped data."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
images = rng.rand(96, 784).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=96)]

learning_rate = 0.01
n_hidden_1, n_hidden_2, n_input, n_classes = 32, 16, 784, 10
X = tf.placeholder("float", [None, n_input])
Y = tf.placeholder("float", [None, n_classes])


def normal(*shape):
    return (rng.randn(*shape) * 0.1).astype(np.float32)


weights = {
    "h1": tf.Variable(normal(n_input, n_hidden_1)),
    "h2": tf.Variable(normal(n_hidden_1, n_hidden_2)),
    "out": tf.Variable(normal(n_hidden_2, n_classes)),
}
biases = {
    "b1": tf.Variable(normal(n_hidden_1)),
    "b2": tf.Variable(normal(n_hidden_2)),
    "out": tf.Variable(normal(n_classes)),
}


def multilayer_perceptron(x):
    layer_1 = tf.nn.relu(tf.add(tf.matmul(x, weights["h1"]), biases["b1"]))
    layer_2 = tf.nn.relu(tf.add(tf.matmul(layer_1, weights["h2"]), biases["b2"]))
    return tf.matmul(layer_2, weights["out"]) + biases["out"]


logits = multilayer_perceptron(X)
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(5):
        avg_cost = 0.0
        for i in range(3):
            bx, by = images[i * 32:(i + 1) * 32], labels[i * 32:(i + 1) * 32]
            _, c = sess.run([train_op, loss_op], feed_dict={X: bx, Y: by})
            avg_cost += c / 3
        print("Epoch:", "%04d" % (epoch + 1), f"cost={avg_cost:.9f}")
    pred = tf.nn.softmax(logits)
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    print("Accuracy:", accuracy.eval({X: images, Y: labels}))
    print(sess.run(biases["out"]))
