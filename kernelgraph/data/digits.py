"""The 8×8 handwritten digits, shipped with kernelgraph so that examples run offline.

Source: the test set of the *Optical Recognition of Handwritten Digits* data set of the UCI
Machine Learning Repository (E. Alpaydin and C. Kaynak, 1998; licence CC BY 4.0,
https://doi.org/10.24432/C50P49), as scikit-learn distributes it
(``sklearn/datasets/data/digits.csv.gz``): 1797 images of 8×8 pixels, values 0..16 (the
count of set pixels in each 4×4 block of a 32×32 bitmap), 10 classes of about 180 each.
``digits.npz`` next to this file holds them as ``images`` (uint8, (1797, 8, 8)) and
``labels`` (uint8, (1797,)), extracted once; scikit-learn is not needed to load them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import shown

_FILE = Path(__file__).with_name("digits.npz")
N_SAMPLES, N_CLASSES = 1797, 10


@lru_cache(maxsize=1)
def _raw() -> tuple[np.ndarray, np.ndarray]:
    with np.load(_FILE, allow_pickle=False) as f:
        images, labels = f["images"], f["labels"]
    images.setflags(write=False)  # cached: callers get copies, never this array
    labels.setflags(write=False)
    return images, labels


def split_indices(labels: np.ndarray, test_fraction: float, seed: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (train, test) indices of a seeded split that is stratified: each class puts
    ``round(test_fraction * its count)`` samples into the test set.

    >>> train, test = split_indices(np.array([0, 0, 0, 0, 1, 1]), 0.5, seed=0)
    >>> len(train), len(test), sorted(np.array([0, 0, 0, 0, 1, 1])[test].tolist())
    (3, 3, [0, 0, 1])
    """
    if not 0.0 <= test_fraction <= 1.0:
        raise ValueError(f"test_fraction must be in [0, 1], got {shown(test_fraction)}")
    rng = np.random.default_rng(seed)
    test = []
    for c in np.unique(labels):
        members = np.flatnonzero(labels == c)
        test.append(rng.permutation(members)[:round(test_fraction * len(members))])
    test_idx = np.sort(np.concatenate(test)) if test else np.zeros(0, np.int64)
    train_idx = np.setdiff1d(np.arange(len(labels)), test_idx)
    return train_idx, test_idx


def load_digits(split: str | None = "train", test_fraction: float = 0.2, seed: int = 0,
                flat: bool = True, normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The digits as ``(X, y)``: X float32, (N, 64) if ``flat`` else (N, 1, 8, 8) (channels
    first, for ``kg.conv2d``); y int64 class labels 0..9.

    ``split``: "train", "test", or None for all 1797. The split is stratified by class and
    fixed by ``seed`` (the same seed and fraction always give the same samples); train and
    test never share a sample. ``normalize`` scales pixel values 0..16 to 0..1.

    >>> import kernelgraph as kg
    >>> X, y = kg.data.load_digits("train")
    >>> X.shape, X.dtype, y.shape, y.dtype, float(X.max())
    ((1438, 64), dtype('float32'), (1438,), dtype('int64'), 1.0)
    >>> kg.data.load_digits("test", flat=False)[0].shape
    (359, 1, 8, 8)
    """
    if split not in ("train", "test", None):
        raise ValueError(f"split must be 'train', 'test' or None, got {shown(split)}")
    images, labels = _raw()
    if split is not None:
        train, test = split_indices(labels, test_fraction, seed)
        idx = train if split == "train" else test
        images, labels = images[idx], labels[idx]
    X = images.astype(np.float32)
    if normalize:
        X /= 16.0
    X = X.reshape(len(X), 64) if flat else X.reshape(len(X), 1, 8, 8)
    return X, labels.astype(np.int64)
