"""Record what real TF1 (``tensorflow.compat.v1``, graph mode) computes for ``tf.summary``:
the Summary protobuf a Session fetches from ``tf.summary.scalar``, ``histogram``, ``image``,
``text`` and ``merge_all`` (as protobuf's JSON form, ``MessageToDict``), with the node names
and op types of the summary ops, into ``tf_summary.json`` (read by tests/test_tensorboard.py).

An image's PNG bytes are recorded as its decoded pixels (``tf.image.decode_png``): two PNG
encoders may compress the same pixels differently.

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_tf_summary.py
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

HERE = Path(__file__).parent

# Inputs shared with the tests (they feed the same values to kernelgraph).
VALUES = [-3.5, -1.0, -1e-13, 0.0, 0.0, 2e-12, 0.5, 0.5, 1.0, 7.25, 1000.0]
IMAGES = {
    "unit": [[[[0.0], [0.25]], [[0.5], [1.0]]]],  # [1, 2, 2, 1] floats in [0, 1]
    "signed": [[[[-2.0, 0.0, 1.0], [0.5, 2.0, -1.0]]],
               [[[3.0, 1.5, 0.0], [0.0, 0.75, 3.0]]]],  # [2, 1, 2, 3]: per image
    "large": [[[[0.0, 10.0, 20.0, 40.0]]]],  # [1, 1, 1, 4] RGBA, max 40
    "uint8": [[[[0, 255, 7]], [[128, 1, 64]]]],  # [1, 2, 1, 3] uint8 as it is
}


def _decoded(tf, summary: dict) -> dict:
    for value in summary.get("value", []):
        image = value.get("image")
        if image is not None:
            png = base64.b64decode(image.pop("encodedImageString"))
            with tf.Session():
                pixels = tf.image.decode_png(png).eval()
            image["pixels"] = pixels.tolist()
    return summary


def main():
    import numpy as np
    import tensorflow.compat.v1 as tf
    from google.protobuf.json_format import MessageToDict

    tf.disable_v2_behavior()
    out = {"versions": {"tensorflow": tf.__version__}, "values": VALUES, "images": IMAGES}

    def fetched(summary_bytes):
        return _decoded(tf, MessageToDict(tf.Summary.FromString(summary_bytes)))

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape=[None], name="x")
        with tf.name_scope("train"):
            loss = tf.summary.scalar("loss", tf.reduce_mean(x))
            hist = tf.summary.histogram("weights", x)
        lr = tf.summary.scalar("lr", tf.constant(0.01))
        note = tf.summary.text("note", tf.constant("hello <b>world</b>"))
        images = {}
        for key, pixels in IMAGES.items():
            dtype = tf.uint8 if key == "uint8" else tf.float32
            images[key] = tf.summary.image(key, tf.constant(np.array(pixels), dtype=dtype),
                                           max_outputs=3)
        two = tf.summary.image("two", tf.constant(np.array(IMAGES["signed"]), tf.float32),
                               max_outputs=1)
        merged = tf.summary.merge_all()
        pair = tf.summary.merge([loss, lr])
        nodes = {t.name: t.op.type for t in (loss, hist, lr, note, merged, pair, two,
                                             *images.values())}
        with tf.Session() as sess:
            feed = {x: VALUES}
            out["summaries"] = {
                "loss": fetched(sess.run(loss, feed)), "histogram": fetched(sess.run(hist, feed)),
                "lr": fetched(sess.run(lr)), "text": fetched(sess.run(note)),
                "merge_all": fetched(sess.run(merged, feed)),
                "merge": fetched(sess.run(pair, feed)),
                "images": {k: fetched(sess.run(v)) for k, v in images.items()},
                "one_of_two_images": fetched(sess.run(two)),
            }
            out["fetched_type"] = type(sess.run(lr)).__name__
            out["empty_histogram"] = fetched(sess.run(hist, {x: []}))
            out["image_with_nan"] = fetched(sess.run(tf.summary.image(
                "nan", tf.constant([[[[0.5, float("nan"), 0.0]], [[1.0, 2.0, 0.0]]]]),
                collections=[])))
            for key, bad in (("nan_histogram", float("nan")), ("inf_histogram", float("inf"))):
                try:
                    sess.run(hist, {x: [1.0, bad]})
                except tf.errors.OpError as e:
                    lines = [line for line in e.message.splitlines() if "summary histogram" in line
                             or "Infinity" in line or "Nan" in line]
                    out[key] = {"type": type(e).__name__, "message": lines}
            out["scalar_of_a_vector"] = {}
            v = tf.placeholder(tf.float32, [None])
            bad = tf.summary.scalar("vec", v, collections=[])
            for n in (1, 2):
                try:
                    sess.run(bad, {v: [1.0] * n})
                except tf.errors.OpError as e:
                    lines = [line for line in e.message.splitlines() if "shape" in line]
                    out["scalar_of_a_vector"][n] = {"type": type(e).__name__, "message": lines}
        out["nodes"] = nodes
        out["summaries_collection"] = [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    (HERE / "tf_summary.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
