"""kg.data: the data sets' shapes, dtypes and determinism; DataLoader batching; progress."""

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.data import digits as digits_module

# -- digits --------------------------------------------------------------------------------------


def test_digits_all_and_split_sizes():
    X, y = kg.data.load_digits(None)
    assert X.shape == (1797, 64) and X.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    assert X.min() == 0.0 and X.max() == 1.0
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    Xr, _ = kg.data.load_digits(None, normalize=False, flat=False)
    assert Xr.shape == (1797, 1, 8, 8) and Xr.max() == 16.0
    assert np.array_equal(Xr.reshape(1797, 64) / 16, X)
    Xtr, ytr = kg.data.load_digits("train")
    Xte, yte = kg.data.load_digits("test")
    assert len(Xtr) + len(Xte) == 1797


def test_digits_split_is_stratified_disjoint_and_seeded():
    _, labels = digits_module._raw()
    train, test = digits_module.split_indices(labels, 0.2, seed=0)
    assert not set(train) & set(test) and len(train) + len(test) == len(labels)
    per_class = np.bincount(labels[test], minlength=10)
    assert np.all(np.abs(per_class - 0.2 * np.bincount(labels)) <= 0.5)
    again = digits_module.split_indices(labels, 0.2, seed=0)
    assert np.array_equal(again[1], test)
    other = digits_module.split_indices(labels, 0.2, seed=1)
    assert not np.array_equal(other[1], test)
    a, _ = kg.data.load_digits("test", seed=3)
    b, _ = kg.data.load_digits("test", seed=3)
    assert np.array_equal(a, b)


def test_digits_returns_copies_and_checks_arguments():
    X, _ = kg.data.load_digits(None, normalize=False)
    X[:] = 99
    assert kg.data.load_digits(None, normalize=False)[0].max() == 16
    with pytest.raises(ValueError, match="split"):
        kg.data.load_digits("validation")
    with pytest.raises(ValueError, match="test_fraction"):
        kg.data.load_digits("train", test_fraction=1.5)


def test_digits_ship_as_package_data():
    with np.load(digits_module._FILE, allow_pickle=False) as f:
        assert f["images"].dtype == np.uint8 and f["images"].shape == (1797, 8, 8)
        assert f["labels"].shape == (1797,)


# -- sequences -----------------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["first_marker", "sum_sign"])
def test_sequence_task_shapes_and_determinism(task):
    seqs, y = kg.data.sequence_task(40, min_len=3, max_len=9, input_size=6, task=task, seed=5)
    assert len(seqs) == 40 and y.shape == (40,) and y.dtype == np.int64
    assert all(s.dtype == np.float32 and s.shape[1] == 6 and 3 <= len(s) <= 9 for s in seqs)
    assert len({len(s) for s in seqs}) > 1  # really of different lengths
    again, y2 = kg.data.sequence_task(40, min_len=3, max_len=9, input_size=6, task=task,
                                      seed=5)
    assert all(np.array_equal(a, b) for a, b in zip(seqs, again)) and np.array_equal(y, y2)


def test_sequence_task_targets_follow_the_rule():
    seqs, y = kg.data.sequence_task(50, num_classes=3, input_size=5, seed=1)
    for s, target in zip(seqs, y):
        marked = np.flatnonzero(s[:, :3].max(axis=1) == 1.0)
        assert 1 <= len(marked) <= 3
        assert np.argmax(s[marked[0], :3]) == target
    seqs, y = kg.data.sequence_task(50, task="sum_sign", seed=1)
    assert [int(s[:, 0].sum(dtype=np.float64) > 0) for s in seqs] == y.tolist()
    assert 0 < y.mean() < 1


def test_sequence_task_rejects_bad_arguments():
    with pytest.raises(ValueError, match="task"):
        kg.data.sequence_task(2, task="copy")
    with pytest.raises(ValueError, match="min_len"):
        kg.data.sequence_task(2, min_len=5, max_len=2)
    with pytest.raises(ValueError, match="num_classes"):
        kg.data.sequence_task(2, input_size=3, num_classes=4)


def test_pad_sequences():
    padded, lengths = kg.data.pad_sequences([np.ones((2, 3)), 2 * np.ones((4, 3)),
                                             np.ones((1, 3))], padding_value=-1)
    assert padded.shape == (3, 4, 3) and padded.dtype == np.float32
    assert lengths.tolist() == [2, 4, 1] and lengths.dtype == np.int64
    assert (padded[0, 2:] == -1).all() and (padded[1] == 2).all()
    one_d, _ = kg.data.pad_sequences([[1, 2], [3]], dtype=np.int64)
    assert one_d.tolist() == [[1, 2], [3, 0]]
    with pytest.raises(ValueError, match="sequence 1"):
        kg.data.pad_sequences([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="at least one"):
        kg.data.pad_sequences([])


def test_padded_sequences_feed_dynamic_rnn():
    seqs, _ = kg.data.sequence_task(4, min_len=2, max_len=5, input_size=3, num_classes=2,
                                    seed=0)
    padded, lengths = kg.data.pad_sequences(seqs)
    out, h = kg.nn.dynamic_rnn(kg.nn.RNNCell(3, 4), kg.tensor(padded),
                               sequence_length=lengths)
    assert out.shape == (4, padded.shape[1], 4) and h.shape == (4, 4)


# -- images --------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [16, 100])
def test_shapes_images_shapes(size):
    X, y = kg.data.shapes_images(30, size=size, seed=0)
    assert X.shape == (30, 1, size, size) and X.dtype == np.float32
    assert y.dtype == np.int64 and set(y.tolist()) == {0, 1, 2}


def test_shapes_images_same_scenes_at_every_size():
    small, ys = kg.data.shapes_images(20, size=16, noise=0, seed=3)
    big, yb = kg.data.shapes_images(20, size=100, noise=0, seed=3)
    assert np.array_equal(ys, yb)
    # The shape covers about the same fraction of the image at both sizes (up to the
    # coarse 16-pixel grid).
    assert np.allclose(small.mean(axis=(1, 2, 3)), big.mean(axis=(1, 2, 3)), atol=0.07)
    assert np.array_equal(small, kg.data.shapes_images(20, size=16, noise=0, seed=3)[0])
    assert not np.array_equal(small, kg.data.shapes_images(20, size=16, noise=0, seed=4)[0])


def test_shapes_images_classes_look_different():
    X, y = kg.data.shapes_images(300, size=32, noise=0, seed=0)
    # Area relative to the bounding square: square 1, disk pi/4, cross well below.
    fill = []
    for img in X[:, 0]:
        rows, cols = np.flatnonzero(img.any(1)), np.flatnonzero(img.any(0))
        box = (rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1)
        fill.append(img.sum() / box)
    fill = np.array(fill)
    assert fill[y == 0].min() > 0.99
    assert 0.7 < fill[y == 1].mean() < 0.85
    assert fill[y == 2].max() < 0.7


# -- expression trees ----------------------------------------------------------------------------


def test_expression_trees_values_depths_and_determinism():
    trees = kg.data.expression_trees(200, max_depth=4, ops=("+", "-", "*", "max"), seed=0)
    assert all(2 <= t.depth <= 4 and abs(t.value) <= 100 for t in trees)
    assert all(eval(str(t)) == t.value for t in trees)  # noqa: S307 - our own digits
    assert max(t.depth for t in trees) == 4
    assert {t.op for t in trees} == {"+", "-", "*", "max"}
    again = kg.data.expression_trees(200, max_depth=4, ops=("+", "-", "*", "max"), seed=0)
    assert [str(t) for t in trees] == [str(t) for t in again]


def test_expr_structure():
    E = kg.data.Expr
    e = E("-", (E(leaf=7), E("+", (E(leaf=1), E(leaf=2)))))
    assert str(e) == "7 - (1 + 2)" and e.value == 4 and e.depth == 3 and e.size == 5
    assert [n.value for n in e.postorder()] == [7, 1, 2, 3, 4]
    assert e.tokens() == ["(", "7", "-", "(", "1", "+", "2", ")", ")"]
    assert E(leaf=5).is_leaf and not e.is_leaf
    with pytest.raises(ValueError, match="op must be"):
        E("/", (E(leaf=1), E(leaf=2)))
    with pytest.raises(ValueError, match="two Expr children"):
        E("+", (E(leaf=1),))
    with pytest.raises(ValueError, match="ops must be"):
        kg.data.expression_trees(1, ops=("/",))


# -- DataLoader ----------------------------------------------------------------------------------


def test_dataloader_batches_in_order():
    X, y = np.arange(20).reshape(10, 2), np.arange(10)
    loader = kg.data.DataLoader((X, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert all(isinstance(b, tuple) and b[0].shape[1] == 2 for b in batches)
    dropped = kg.data.DataLoader((X, y), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [len(b[1]) for b in dropped] == [4, 4]
    single = kg.data.DataLoader(y, batch_size=5)
    assert [b.tolist() for b in single] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_dataloader_shuffle_is_seeded_per_epoch():
    y = np.arange(50)
    a = kg.data.DataLoader(y, batch_size=7, shuffle=True, seed=11)
    b = kg.data.DataLoader(y, batch_size=7, shuffle=True, seed=11)
    epochs_a = [np.concatenate(list(a)) for _ in range(3)]
    epochs_b = [np.concatenate(list(b)) for _ in range(3)]
    assert all(np.array_equal(p, q) for p, q in zip(epochs_a, epochs_b))
    assert all(sorted(e.tolist()) == y.tolist() for e in epochs_a)  # each a permutation
    assert not np.array_equal(epochs_a[0], epochs_a[1])  # a new order every epoch
    assert not np.array_equal(epochs_a[0], y)
    c = kg.data.DataLoader(y, batch_size=7, shuffle=True, seed=12)
    assert not np.array_equal(np.concatenate(list(c)), epochs_a[0])
    assert np.array_equal(a.indices(1), epochs_a[1])


def test_dataloader_shuffles_fields_together():
    X = np.arange(30).reshape(15, 2)
    y = X[:, 0] // 2
    for xb, yb in kg.data.DataLoader((X, y), batch_size=4, shuffle=True, seed=0):
        assert np.array_equal(xb[:, 0] // 2, yb)


def test_dataloader_ragged_fields_come_as_lists():
    seqs, y = kg.data.sequence_task(9, min_len=2, max_len=6, input_size=3, num_classes=2,
                                    seed=0)
    loader = kg.data.DataLoader((seqs, y), batch_size=4, shuffle=True, seed=1)
    seen = []
    for sb, yb in loader:
        assert isinstance(sb, list) and isinstance(yb, np.ndarray) and len(sb) == len(yb)
        seen.extend(id(s) for s in sb)
        padded, lengths = kg.data.pad_sequences(sb)
        assert padded.shape[0] == len(yb)
    assert sorted(seen) == sorted(id(s) for s in seqs)


def test_dataloader_over_a_dataset_collates():
    class Pairs:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.full(2, i, np.float32), np.ones(i + 1), i

    x, ragged, idx = next(iter(kg.data.DataLoader(Pairs(), batch_size=3)))
    assert x.shape == (3, 2) and x.dtype == np.float32
    assert isinstance(ragged, list) and [len(r) for r in ragged] == [1, 2, 3]
    assert idx.tolist() == [0, 1, 2]
    trees = kg.data.expression_trees(5, seed=0)
    batch = next(iter(kg.data.DataLoader(trees, batch_size=2)))
    assert batch == trees[:2]


def test_dataloader_rejects_bad_input():
    with pytest.raises(ValueError, match="same number of samples"):
        kg.data.DataLoader((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="batch_size"):
        kg.data.DataLoader(np.zeros(3), batch_size=0)
    with pytest.raises(TypeError, match="len"):
        kg.data.DataLoader(42)


def test_dataloader_progress_and_progress_helper(capsys, monkeypatch):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    loader = kg.data.DataLoader(np.arange(6), batch_size=2, progress="epoch")
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
    assert sum(kg.data.progress(range(4), desc="x")) == 6
    # Not a TTY here: tqdm's convention is to stay quiet.
    assert capsys.readouterr().err == ""
    shown = list(kg.data.progress(range(3), disable=False, desc="forced"))
    assert shown == [0, 1, 2] and "forced" in capsys.readouterr().err


def test_tqdm_disable_silences_even_a_tty(monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert kg.data.progress(range(2)).disable
    monkeypatch.setenv("TQDM_DISABLE", "0")
    assert kg.data.progress(range(2), disable=False).disable is False
