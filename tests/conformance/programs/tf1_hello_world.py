"""In the manner of the classic TF1 example programs (aymericdamien's TensorFlow-Examples,
"Hello World" and "Basic Operations"): a string constant run in a Session, constants with
+ and *, and a matrix product of two constants."""
import tensorflow as tf

hello = tf.constant("Hello, TensorFlow!")
sess = tf.Session()
print(sess.run(hello))
print(sess.run(hello).decode())

a = tf.constant(2)
b = tf.constant(3)
with tf.Session() as sess:
    print("a=2, b=3")
    print("Addition with constants: %i" % sess.run(a + b))
    print("Multiplication with constants: %i" % sess.run(a * b))

matrix1 = tf.constant([[3.0, 3.0]])
matrix2 = tf.constant([[2.0], [2.0]])
product = tf.matmul(matrix1, matrix2)
with tf.Session() as sess:
    result = sess.run(product)
    print(result, result.dtype, result.shape)

greeting = tf.placeholder(tf.string)
with tf.Session() as sess:
    print(sess.run(greeting, feed_dict={greeting: "fed text"}))
    print(sess.run([hello, a], feed_dict={}))
