"""In the manner of the classic TF1 example "recurrent_network.py": MNIST images read as 28
sequences of 28 pixels, tf.unstack(x, timesteps, 1), tf.nn.rnn_cell.BasicLSTMCell with
forget_bias=1.0, tf.nn.static_rnn, a dense output on the last step; the trainable variables
are then loaded from NumPy (the way pretrained weights are restored) before training."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(7)
timesteps, num_input, num_hidden, num_classes = 28, 28, 16, 10
images = rng.rand(8, timesteps * num_input).astype(np.float32)
labels = np.eye(num_classes, dtype=np.float32)[rng.randint(0, 10, size=8)]

X = tf.placeholder("float", [None, timesteps, num_input])
Y = tf.placeholder("float", [None, num_classes])
weights = {"out": tf.Variable(tf.zeros([num_hidden, num_classes]))}
biases = {"out": tf.Variable(tf.zeros([num_classes]))}


def RNN(x, weights, biases):
    x = tf.unstack(x, timesteps, 1)
    lstm_cell = tf.nn.rnn_cell.BasicLSTMCell(num_hidden, forget_bias=1.0)
    outputs, states = tf.nn.static_rnn(lstm_cell, x, dtype=tf.float32)
    print(len(outputs), outputs[-1].shape.as_list(), type(states).__name__)
    return tf.matmul(outputs[-1], weights["out"]) + biases["out"]


logits = RNN(X, weights, biases)
prediction = tf.nn.softmax(logits)
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
train_op = tf.train.GradientDescentOptimizer(learning_rate=0.5).minimize(loss_op)
correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
variables = tf.trainable_variables()
print([(v.name, v.shape.as_list()) for v in variables])

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for v in variables:
        value = (rng.randn(*v.shape.as_list()) * 0.2).astype(np.float32)
        sess.run(v.assign(value))
    batch_x = images.reshape((-1, timesteps, num_input))
    for step in range(1, 5):
        sess.run(train_op, feed_dict={X: batch_x, Y: labels})
        loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: labels})
        print("Step " + str(step) + ", Minibatch Loss= " + f"{loss:.4f}"
              + ", Training Accuracy= " + f"{acc:.3f}")
    print(sess.run(prediction, feed_dict={X: batch_x[:1]}))
