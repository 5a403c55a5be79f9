"""In the manner of TF1's programmer's guide "Reading data" and the fully_connected_reader
example (convert_to_records.py): a CSV read with string_input_producer + TextLineReader +
decode_csv, images written as tf.train.Example records to a TFRecord file and read back
with TFRecordReader + parse_single_example + decode_raw, batched by tf.train.batch and
tf.train.shuffle_batch (only the multiset of a shuffled epoch is printed: the order is TF's
own), under a Coordinator until OutOfRangeError ends the epochs. The tensors of ops with
several outputs (a reader's read, a dequeue) are named differently in kernelgraph, so their
shapes and dtypes are printed, not their names."""
import os
import tempfile

import numpy as np
import tensorflow as tf

folder = tempfile.mkdtemp()
csv_path = os.path.join(folder, "iris.csv")
with open(csv_path, "w") as f:
    f.write("sepal,petal,species\n5.1,1.4,0\n4.9,1.5,0\n6.3,4.9,1\n5.8,5.1,2\n6.1,,1\n")

# -- CSV files
filename_queue = tf.train.string_input_producer([csv_path], num_epochs=2, shuffle=False)
reader = tf.TextLineReader(skip_header_lines=1)
key, value = reader.read(filename_queue)
sepal, petal, species = tf.decode_csv(value, record_defaults=[[0.0], [-1.0], [0]])
features = tf.stack([sepal, petal])
print(key.dtype, value.shape, features)

with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(coord=coord)
    rows = 0
    try:
        while not coord.should_stop():
            k, example, label = sess.run([key, features, species])
            print(os.path.basename(k.decode()), example, label)
            rows += 1
    except tf.errors.OutOfRangeError:
        print("Done reading --", rows, "rows, epoch limit reached")
    finally:
        coord.request_stop()
    coord.join(threads)


# -- convert_to_records: images and labels as tf.train.Example
def _int64_feature(value):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


images = (np.arange(6 * 4, dtype=np.uint8) * 10).reshape(6, 2, 2, 1)
labels = np.array([3, 1, 4, 1, 5, 9])
record_path = os.path.join(folder, "train.tfrecords")
writer = tf.python_io.TFRecordWriter(record_path)
for index in range(len(images)):
    example = tf.train.Example(features=tf.train.Features(feature={
        "height": _int64_feature(2), "width": _int64_feature(2),
        "label": _int64_feature(int(labels[index])),
        "image_raw": _bytes_feature(images[index].tobytes())}))
    writer.write(example.SerializeToString())
writer.close()
print(sum(1 for _ in tf.python_io.tf_record_iterator(record_path)), "records written")
first = tf.train.Example()
first.ParseFromString(next(tf.python_io.tf_record_iterator(record_path)))
print(first.features.feature["label"].int64_list.value[0],
      sorted(first.features.feature.keys()))


# -- fully_connected_reader: read_and_decode
def read_and_decode(filename_queue):
    reader = tf.TFRecordReader()
    _, serialized_example = reader.read(filename_queue)
    features = tf.parse_single_example(serialized_example, features={
        "image_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([4])
    image = tf.cast(image, tf.float32) * (1.0 / 255) - 0.5
    label = tf.cast(features["label"], tf.int32)
    return image, label


for shuffled in (False, True):
    with tf.Graph().as_default():
        queue = tf.train.string_input_producer([record_path], num_epochs=1,
                                               shuffle=shuffled)
        image, label = read_and_decode(queue)
        if shuffled:
            images_b, labels_b = tf.train.shuffle_batch(
                [image, label], batch_size=2, num_threads=2, capacity=10,
                min_after_dequeue=3, allow_smaller_final_batch=True)
        else:
            images_b, labels_b = tf.train.batch([image, label], batch_size=4,
                                                allow_smaller_final_batch=True)
        print(images_b.shape, images_b.dtype, labels_b.shape, labels_b.dtype)
        init_op = tf.group(tf.global_variables_initializer(),
                           tf.local_variables_initializer())
        with tf.Session() as sess:
            sess.run(init_op)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            seen = []
            try:
                step = 0
                while not coord.should_stop():
                    im, lb = sess.run([images_b, labels_b])
                    if not shuffled:
                        print(step, im.shape, np.round(im[:, :2], 4).tolist(), lb.tolist())
                    seen += lb.tolist()
                    step += 1
            except tf.errors.OutOfRangeError:
                print("Done training for 1 epochs,", len(seen), "examples:", sorted(seen))
            finally:
                coord.request_stop()
            coord.join(threads)
