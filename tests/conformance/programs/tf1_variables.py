"""In the manner of TF1's "Variables" guide and variables_test.py: tf.Variable and
tf.get_variable with zeros / ones / constant initializers under a variable_scope, names,
global_variables / trainable_variables, initializer and variables_initializer,
assign / assign_add / assign_sub, reuse, and reading an uninitialized variable."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

with tf.variable_scope("model"):
    my_variable = tf.get_variable("my_variable", [1, 2, 3])
    my_int_variable = tf.get_variable("my_int_variable", [1, 2, 3], dtype=tf.int32,
                                      initializer=tf.zeros_initializer)
    other_variable = tf.get_variable("other_variable", dtype=tf.int32,
                                     initializer=tf.constant([23, 42]))
    ones = tf.get_variable("ones", [2], initializer=tf.ones_initializer())
    consts = tf.get_variable("consts", [2, 2], initializer=tf.constant_initializer(0.5))
    counter = tf.Variable(0, name="counter", trainable=False)
with tf.variable_scope("model", reuse=True):
    same = tf.get_variable("ones")
print(my_variable.name, my_int_variable.dtype.base_dtype, other_variable.shape.as_list())
print(same is ones or same.name == ones.name)
print([v.name for v in tf.global_variables()])
print([v.name for v in tf.trainable_variables()])

w = tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32), name="w")
v = tf.Variable(tf.zeros([2]), name="v")
assignment = v.assign_add([1.0, 2.0])
sub = w.assign_sub(tf.ones([2, 2]))
setter = counter.assign(counter + 5)

with tf.Session() as sess:
    try:
        sess.run(w)
    except tf.errors.FailedPreconditionError:
        print("FailedPreconditionError")
    sess.run(tf.variables_initializer([w, v]))
    print(sess.run(w), sess.run(v))
    print(sess.run(tf.report_uninitialized_variables()).size > 0)
    sess.run(tf.global_variables_initializer())
    print(sess.run([my_int_variable, other_variable, ones, consts]))
    sess.run(assignment)
    print(sess.run(assignment), sess.run(v))
    print(sess.run(sub))
    print(sess.run(setter), sess.run(setter), counter.eval(session=sess))
    print(sess.run(w.initializer), sess.run(w))
    print(my_variable.shape.as_list(), sess.run(tf.shape(my_variable)))
