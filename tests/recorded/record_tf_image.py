"""Record TF1's ``tf.image`` functions (TensorFlow's ``tf.compat.v1.image``, in graph mode) into
``tf_image.json`` (read by tests/test_tf_image.py): the resizes and their input gradients in
every sampling rule, the crop-or-pad, the colour adjustments on uint8 and float images, and
the decoders on the small JPEG and PNG files beside this script (which it writes first).

The image files are written once, with Pillow, and committed (``--files``, in an environment
with Pillow, such as kernelgraph's); the record is then made with TensorFlow (see README.md
here)::

    python tests/recorded/record_tf_image.py --files
    python tests/recorded/record_tf_image.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
JPEG, PNG = HERE / "tf_image_small.jpg", HERE / "tf_image_small.png"


def _images():
    rng = np.random.default_rng(7)
    u8 = rng.integers(0, 256, (2, 4, 5, 3)).astype(np.uint8)
    f32 = rng.uniform(0.0, 1.0, (2, 4, 5, 3)).astype(np.float32)
    return u8, f32


def _write_files():
    from PIL import Image

    y, x = np.mgrid[0:12, 0:16]
    rgb = np.stack([x * 15, y * 20, (x + y) * 9], -1).astype(np.uint8)  # smooth: few artefacts
    # 4:4:4 (no chroma subsampling): decoders upsample chroma differently (TF by up to 3 levels
    # from Pillow on 4:2:0), and a test should see the decoders, not their upsampling
    Image.fromarray(rgb).save(JPEG, quality=90, subsampling=0)
    rgba = np.concatenate([rgb, np.full((12, 16, 1), 200, np.uint8)], -1)
    Image.fromarray(rgba).save(PNG)


def main():
    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    u8, f32 = _images()
    out = {"tensorflow": tf.__version__, "u8": u8.tolist(), "f32": f32.tolist(), "cases": {}}
    cases = out["cases"]
    g = tf1.Graph()
    with g.as_default(), tf1.Session() as sess:
        xu = tf1.placeholder(tf.uint8, u8.shape)
        xf = tf1.placeholder(tf.float32, f32.shape)
        feed = {xu: u8, xf: f32}
        w = tf.constant(np.linspace(-1, 1, 2 * 7 * 3 * 3).reshape(2, 7, 3, 3), tf.float32)

        def record(name, y, grad=False):
            fetch = {"y": y}
            if grad:
                fetch["dx"] = tf1.gradients(tf.reduce_sum(y * w), xf)[0]
            got = sess.run(fetch, feed)
            cases[name] = {k: v.tolist() for k, v in got.items()}
            cases[name]["dtype"] = got["y"].dtype.name

        for ac, hp in ((False, False), (True, False), (False, True)):
            tag = f"ac{int(ac)}_hp{int(hp)}"
            record(f"bilinear_{tag}", tf1.image.resize_bilinear(
                xf, [7, 3], align_corners=ac, half_pixel_centers=hp), grad=True)
            record(f"nearest_{tag}", tf1.image.resize_nearest_neighbor(
                xf, [7, 3], align_corners=ac, half_pixel_centers=hp), grad=True)
            record(f"nearest_u8_{tag}", tf1.image.resize_nearest_neighbor(
                xu, [7, 3], align_corners=ac, half_pixel_centers=hp))
        record("bilinear_u8", tf1.image.resize_bilinear(xu, [3, 8]))
        record("resize_images_u8", tf1.image.resize_images(xu, [6, 9]))
        record("resize_images_nearest_u8", tf1.image.resize_images(
            xu, [6, 9], method=tf1.image.ResizeMethod.NEAREST_NEIGHBOR))
        record("resize_images_3d", tf1.image.resize_images(xf[0], [3, 7]))
        record("resize_images_same_u8", tf1.image.resize_images(xu, [4, 5]))
        record("resize", tf1.image.resize(xf, [5, 2]))
        for th, tw in ((2, 3), (6, 8), (3, 9)):
            record(f"crop_or_pad_{th}_{tw}", tf1.image.resize_image_with_crop_or_pad(
                xu, th, tw))
        record("crop_or_pad_3d", tf1.image.resize_image_with_crop_or_pad(xf[1], 5, 2))
        for name, x in (("u8", xu), ("f32", xf)):
            record(f"brightness_{name}", tf1.image.adjust_brightness(x, 0.2))
            record(f"brightness_neg_{name}", tf1.image.adjust_brightness(x, -0.3))
            record(f"contrast_{name}", tf1.image.adjust_contrast(x, 1.7))
            record(f"contrast_low_{name}", tf1.image.adjust_contrast(x, 0.4))
            record(f"standardization_{name}", tf1.image.per_image_standardization(x))
            record(f"grayscale_{name}", tf1.image.rgb_to_grayscale(x))
            record(f"hue_{name}", tf1.image.adjust_hue(x, 0.3))
            record(f"hue_neg_{name}", tf1.image.adjust_hue(x, -0.45))
            record(f"saturation_{name}", tf1.image.adjust_saturation(x, 1.8))
            record(f"saturation_low_{name}", tf1.image.adjust_saturation(x, 0.3))
            record(f"flip_lr_{name}", tf1.image.flip_left_right(x))
            record(f"flip_ud_{name}", tf1.image.flip_up_down(x))
            record(f"convert_{name}", tf1.image.convert_image_dtype(
                x, tf.float32 if name == "u8" else tf.uint8))
        record("convert_saturate_f32", tf1.image.convert_image_dtype(
            xf * 1.5 - 0.25, tf.uint8, saturate=True))
        for path, what in ((JPEG, "jpeg"), (PNG, "png")):
            data = tf.constant(path.read_bytes())
            for ch in (0, 1, 3):
                fn = tf1.image.decode_jpeg if what == "jpeg" else tf1.image.decode_png
                record(f"decode_{what}_{ch}", fn(data, channels=ch))
                record(f"decode_image_{what}_{ch}", tf1.image.decode_image(data, channels=ch))
                if what == "jpeg":
                    record(f"decode_jpeg_accurate_{ch}", tf1.image.decode_jpeg(
                        data, channels=ch, dct_method="INTEGER_ACCURATE"))
        png = tf1.placeholder_with_default(tf.constant(PNG.read_bytes()), [])
        record("decode_resize_png", tf1.image.resize_images(
            tf1.image.decode_png(png, channels=3), [8, 7]))
        record("decode_image_still_resize_png", tf1.image.resize_images(
            tf1.image.decode_image(png, channels=3, expand_animations=False), [5, 6]))
        record("decode_standardization_png", tf1.image.per_image_standardization(
            tf1.image.decode_png(png, channels=3)))
        errors = {}
        for name, build in (
                ("jpeg_of_png", lambda: tf1.image.decode_jpeg(tf.constant(PNG.read_bytes()))),
                ("png_of_jpeg", lambda: tf1.image.decode_png(tf.constant(JPEG.read_bytes()))),
                ("garbage", lambda: tf1.image.decode_image(tf.constant(b"not an image")))):
            try:
                sess.run(build())
                errors[name] = None
            except Exception as e:  # noqa: BLE001 - the type and message are the record
                errors[name] = [type(e).__name__, str(e).splitlines()[0]]
        try:  # a build-time error: decode_image's rank is unknown (a GIF would add one)
            tf1.image.resize_images(tf1.image.decode_image(png), [5, 6])
            errors["resize_of_decode_image"] = None
        except ValueError as e:
            errors["resize_of_decode_image"] = [type(e).__name__, str(e)]
        out["errors"] = errors
    (HERE / "tf_image.json").write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    import sys

    _write_files() if sys.argv[1:] == ["--files"] else main()
