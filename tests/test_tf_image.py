"""TF1's ``tf.image`` (kernelgraph/compat/v1/image.py, image_decode.py) against TensorFlow's
``tf.compat.v1.image`` in graph mode, recorded in tests/recorded/tf_image.json by
record_tf_image.py: the resizes in every sampling rule and their input gradients, the
crop-or-pad, the colour adjustments on uint8 and float32 images, and the decoders on the
small JPEG and PNG files recorded beside it.

Float results agree to float32 rounding (TF computes the sampling in float32, kernelgraph
mixes in float64 and rounds once). Where TF converts floats back to uint8 by truncation, a
value that lands within rounding of a level may fall on the other side: those compare
within one level. JPEG decoders differ by a level here and there (TF's libjpeg-turbo and
Pillow's): TF's default inverse DCT is libjpeg's fast integer one, Pillow's the accurate
one, so a default decode_jpeg compares within 3 levels, and one with
``dct_method="INTEGER_ACCURATE"`` exactly. PNG is lossless: exactly, except grayscale from
colour (channels=1), where libpng's weights and Pillow's round apart by one level.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf

HERE = Path(__file__).parent / "recorded"
SAMPLING = [(False, False), (True, False), (False, True)]


@pytest.fixture(scope="module")
def rec(recorded):
    return recorded("tf_image")


def _run(rec, build, grad=False):
    """build(x_uint8, x_float32) run on the recorded images: {"y": ..., "dx": ...}."""
    u8 = np.array(rec["u8"], np.uint8)
    f32 = np.array(rec["f32"], np.float32)
    with tf.Graph().as_default():
        xu = tf.placeholder(tf.uint8, u8.shape)
        xf = tf.placeholder(tf.float32, f32.shape)
        y = build(xu, xf)
        fetch = {"y": y}
        if grad:
            w = tf.constant(np.linspace(-1, 1, 2 * 7 * 3 * 3).reshape(2, 7, 3, 3), tf.float32)
            fetch["dx"] = tf.gradients(tf.reduce_sum(y * w), xf)[0]
        with tf.Session() as sess:
            return sess.run(fetch, {xu: u8, xf: f32})


def _same(got, want, levels=0, rtol=2e-6):
    y = np.array(want["y"])
    assert got.dtype.name == want["dtype"]
    assert got.shape == y.shape
    if got.dtype == np.uint8:
        assert np.abs(got.astype(int) - y).max() <= levels
    else:
        np.testing.assert_allclose(got, y, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("ac,hp", SAMPLING)
def test_resizes_and_their_gradients(rec, ac, hp):
    tag = f"ac{int(ac)}_hp{int(hp)}"
    for mode, fn in (("bilinear", tf.image.resize_bilinear),
                     ("nearest", tf.image.resize_nearest_neighbor)):
        got = _run(rec, lambda xu, xf, fn=fn: fn(xf, [7, 3], align_corners=ac,
                                                 half_pixel_centers=hp), grad=True)
        want = rec["cases"][f"{mode}_{tag}"]
        _same(got["y"], want)
        np.testing.assert_allclose(got["dx"], want["dx"], rtol=2e-6, atol=2e-6)
    got = _run(rec, lambda xu, xf: tf.image.resize_nearest_neighbor(
        xu, [7, 3], align_corners=ac, half_pixel_centers=hp))
    _same(got["y"], rec["cases"][f"nearest_u8_{tag}"])


@pytest.mark.parametrize("name,build", [
    ("bilinear_u8", lambda xu, xf: tf.image.resize_bilinear(xu, [3, 8])),
    ("resize_images_u8", lambda xu, xf: tf.image.resize_images(xu, [6, 9])),
    ("resize_images_nearest_u8", lambda xu, xf: tf.image.resize_images(
        xu, [6, 9], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)),
    ("resize_images_3d", lambda xu, xf: tf.image.resize_images(xf[0], [3, 7])),
    ("resize_images_same_u8", lambda xu, xf: tf.image.resize_images(xu, [4, 5])),
    ("resize", lambda xu, xf: tf.image.resize(xf, [5, 2])),
    ("crop_or_pad_2_3", lambda xu, xf: tf.image.resize_image_with_crop_or_pad(xu, 2, 3)),
    ("crop_or_pad_6_8", lambda xu, xf: tf.image.resize_image_with_crop_or_pad(xu, 6, 8)),
    ("crop_or_pad_3_9", lambda xu, xf: tf.image.resize_image_with_crop_or_pad(xu, 3, 9)),
    ("crop_or_pad_3d", lambda xu, xf: tf.image.resize_image_with_crop_or_pad(xf[1], 5, 2)),
    ("convert_saturate_f32", lambda xu, xf: tf.image.convert_image_dtype(
        xf * 1.5 - 0.25, tf.uint8, saturate=True)),
])
def test_resize_variants_crop_or_pad_and_conversion(rec, name, build):
    _same(_run(rec, build)["y"], rec["cases"][name], levels=1 if "convert" in name else 0)


ADJUSTMENTS = {
    "brightness": lambda x: tf.image.adjust_brightness(x, 0.2),
    "brightness_neg": lambda x: tf.image.adjust_brightness(x, -0.3),
    "contrast": lambda x: tf.image.adjust_contrast(x, 1.7),
    "contrast_low": lambda x: tf.image.adjust_contrast(x, 0.4),
    "standardization": tf.image.per_image_standardization,
    "grayscale": tf.image.rgb_to_grayscale,
    "hue": lambda x: tf.image.adjust_hue(x, 0.3),
    "hue_neg": lambda x: tf.image.adjust_hue(x, -0.45),
    "saturation": lambda x: tf.image.adjust_saturation(x, 1.8),
    "saturation_low": lambda x: tf.image.adjust_saturation(x, 0.3),
    "flip_lr": tf.image.flip_left_right,
    "flip_ud": tf.image.flip_up_down,
    "convert": lambda x: tf.image.convert_image_dtype(
        x, tf.float32 if x.dtype == tf.uint8 else tf.uint8),
}


@pytest.mark.parametrize("kind", ["u8", "f32"])
@pytest.mark.parametrize("name", sorted(ADJUSTMENTS))
def test_adjustments(rec, name, kind):
    got = _run(rec, lambda xu, xf: ADJUSTMENTS[name](xu if kind == "u8" else xf))["y"]
    _same(got, rec["cases"][f"{name}_{kind}"], levels=1, rtol=1e-5)


def _run_plain(build):
    with tf.Graph().as_default():
        y = build()
        with tf.Session() as sess:
            return sess.run(y)


@pytest.mark.parametrize("what", ["jpeg", "png"])
@pytest.mark.parametrize("channels", [0, 1, 3])
def test_decoders(rec, what, channels):
    data = (HERE / f"tf_image_small.{'jpg' if what == 'jpeg' else 'png'}").read_bytes()
    fn = tf.image.decode_jpeg if what == "jpeg" else tf.image.decode_png
    levels = 3 if what == "jpeg" else int(channels == 1)
    got = _run_plain(lambda: fn(tf.constant(data), channels=channels))
    _same(got, rec["cases"][f"decode_{what}_{channels}"], levels=levels)
    got = _run_plain(lambda: tf.image.decode_image(tf.constant(data), channels=channels))
    _same(got, rec["cases"][f"decode_image_{what}_{channels}"], levels=levels)
    if what == "jpeg":
        got = _run_plain(lambda: fn(tf.constant(data), channels=channels,
                                    dct_method="INTEGER_ACCURATE"))
        _same(got, rec["cases"][f"decode_jpeg_accurate_{channels}"], levels=0)


def test_decoders_read_a_fed_file_and_take_each_others_formats(rec):
    """A string placeholder fed each run (the bytes tf.read_file gives); as in TF, decode_jpeg
    reads a PNG and decode_png a JPEG; bytes that are no image are an InvalidArgumentError."""
    assert rec["errors"]["jpeg_of_png"] is None and rec["errors"]["png_of_jpeg"] is None
    assert rec["errors"]["garbage"][0] == "InvalidArgumentError"
    png = (HERE / "tf_image_small.png").read_bytes()
    jpeg = (HERE / "tf_image_small.jpg").read_bytes()
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        img = tf.image.decode_jpeg(s, channels=3)
        assert img.shape.as_list() == [None, None, 3] and img.dtype == tf.uint8
        with tf.Session() as sess:
            a = sess.run(img, {s: png})
            b = sess.run(img, {s: jpeg})
            with pytest.raises(tf.errors.InvalidArgumentError, match="image"):
                sess.run(img, {s: b"not an image"})
    np.testing.assert_array_equal(a, rec["cases"]["decode_png_3"]["y"])
    assert np.abs(b.astype(int) - rec["cases"]["decode_jpeg_3"]["y"]).max() <= 3


def test_a_decoded_image_of_unknown_size_resizes(rec):
    """The input pipeline of TF1 tutorials: a file's bytes fed, decoded (height and width
    known only at run time), resized."""
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        image = tf.image.decode_png(s, channels=3)
        y = tf.image.resize_images(image, [8, 7])
        assert y.shape.as_list() == [8, 7, 3]
        z = tf.image.per_image_standardization(image)
        with tf.Session() as sess:
            got, std = sess.run([y, z], {s: (HERE / "tf_image_small.png").read_bytes()})
    _same(got, rec["cases"]["decode_resize_png"], rtol=1e-5)
    _same(std, rec["cases"]["decode_standardization_png"], rtol=1e-5)


def test_decode_image_has_no_rank_unless_animations_are_not_expanded(rec):
    """As in TF1, decode_image's rank is unknown (a GIF gives 4 dims), so resize_images
    refuses it when the graph is built; expand_animations=False gives rank 3."""
    assert rec["errors"]["resize_of_decode_image"] == ["ValueError", "'images' contains no shape."]
    png = (HERE / "tf_image_small.png").read_bytes()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="^'images' contains no shape.$"):
            tf.image.resize_images(tf.image.decode_image(tf.constant(png)), [5, 6])
        y = tf.image.resize_images(
            tf.image.decode_image(tf.constant(png), channels=3, expand_animations=False), [5, 6])
        with tf.Session() as sess:
            got = sess.run(y)
    _same(got, rec["cases"]["decode_image_still_resize_png"], rtol=1e-5)


def check_decode_image(device):
    """The behavioural check of the decode op (tests/test_op_cards.py BEHAVIOURS): under a
    device scope and with the compiler's passes on, it decodes on the host the bytes fed
    that run, and a decode of a constant is computed at run time too (never folded)."""
    import kernelgraph as kg
    from kernelgraph.ops import OPS

    assert {"stateful", "host_only"} <= OPS["decode_image"].traits
    png = (HERE / "tf_image_small.png").read_bytes()
    with tf.Graph().as_default(), kg.device(device):
        s = tf.placeholder(tf.string, [])
        fed = tf.image.decode_png(s, channels=3)
        const = tf.image.decode_png(tf.constant(png), channels=1)
        with tf.Session() as sess:
            a, c = sess.run([fed, const], {s: png})
            b = sess.run(fed, {s: (HERE / "tf_image_small.jpg").read_bytes()})
    assert a.shape == b.shape == (12, 16, 3) and c.shape == (12, 16, 1)
    assert a.dtype == np.uint8 and not np.array_equal(a, b)


def test_decoders_refuse_bad_channels():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="channels must be 0, 1, 3"):
        tf.image.decode_png(tf.constant(b""), channels=2)


def _draws(build, x0, runs=4):
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        x = tf.placeholder(tf.as_dtype(x0.dtype), x0.shape)
        y = build(x)
        with tf.Session() as sess:
            return [sess.run(y, {x: x0}) for _ in range(runs)]


def test_random_flip_left_right_flips_each_image_on_its_own_draw():
    x0 = np.arange(8 * 2 * 3 * 1, dtype=np.uint8).reshape(8, 2, 3, 1)
    runs = _draws(lambda x: tf.image.random_flip_left_right(x, seed=1), x0, runs=6)
    flips = []
    for out in runs:
        assert out.dtype == np.uint8 and out.shape == x0.shape
        for k in range(8):
            same, flipped = np.array_equal(out[k], x0[k]), np.array_equal(out[k], x0[k, :, ::-1])
            assert same != flipped
            flips.append(flipped)
    assert 0 < sum(flips) < len(flips)  # both outcomes occur over 48 draws
    again = _draws(lambda x: tf.image.random_flip_left_right(x, seed=1), x0, runs=6)
    assert all(np.array_equal(a, b) for a, b in zip(runs, again))  # the seeds repeat it
    one = _draws(lambda x: tf.image.random_flip_left_right(x, seed=2), x0[0], runs=12)
    kinds = {np.array_equal(o, x0[0]) for o in one}
    assert kinds == {True, False}  # a single image: the whole image flipped, or not


def test_random_brightness_and_contrast_draw_in_their_ranges():
    x0 = np.random.default_rng(1).uniform(0.2, 0.8, (1, 3, 4, 3)).astype(np.float32)
    for out in _draws(lambda x: tf.image.random_brightness(x, 0.1, seed=3), x0):
        delta = out - x0
        assert np.ptp(delta) < 1e-6 and -0.1 <= delta.mean() < 0.1
    outs = _draws(lambda x: tf.image.random_contrast(x, 0.5, 1.5, seed=3), x0)
    mean = x0.mean(axis=(1, 2), keepdims=True)
    factors = [((o - mean) / (x0 - mean)).mean() for o in outs]
    assert all(0.5 <= f < 1.5 for f in factors) and len(set(np.round(factors, 5))) == 4
    assert np.array_equal(outs, _draws(lambda x: tf.image.random_contrast(x, 0.5, 1.5, seed=3),
                                       x0))
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(tf.constant(x0), 1.0, 0.5)
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        tf.image.random_brightness(tf.constant(x0), -0.1)


def test_resize_refuses_what_it_cannot_do():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, 4, 4, 3])
        with pytest.raises(ValueError, match="align_corners must be False"):
            tf.image.resize_bilinear(x, [2, 2], align_corners=True, half_pixel_centers=True)
        with pytest.raises(ValueError, match="size must be 2 positive integers"):
            tf.image.resize_bilinear(x, [2, 0])
        with pytest.raises(ValueError, match="must have 4 dimensions"):
            tf.image.resize_bilinear(tf.placeholder(tf.float32, [4, 4, 3]), [2, 2])
        with pytest.raises(NotImplementedError, match="BILINEAR and NEAREST_NEIGHBOR"):
            tf.image.resize_images(x, [2, 2], method=tf.image.ResizeMethod.BICUBIC)


def test_random_hue_and_saturation_draw_new_factors_each_run_and_repeat_with_seeds():
    x0 = np.random.default_rng(2).uniform(0.1, 0.9, (2, 3, 4, 3)).astype(np.float32)
    for build in (lambda x: tf.image.random_hue(x, 0.2, seed=4),
                  lambda x: tf.image.random_saturation(x, 0.2, 1.9, seed=4)):
        runs = _draws(build, x0)
        assert all(r.shape == x0.shape and r.dtype == np.float32 for r in runs)
        assert len({r.tobytes() for r in runs}) == 4
        assert all(np.array_equal(a, b) for a, b in zip(runs, _draws(build, x0)))
    # no room to draw in: the hue stays
    same = _draws(lambda x: tf.image.random_hue(x, 0.0), x0, runs=1)[0]
    np.testing.assert_allclose(same, x0, atol=1e-6)
    with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
        tf.image.random_hue(tf.constant(x0), 0.6)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tf.image.random_saturation(tf.constant(x0), -0.5, 1.0)
