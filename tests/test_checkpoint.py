"""kg.save / kg.load: round trips in both modes, atomic writes, and refusing bad files."""

import io
import json
import os
import tempfile
import zipfile

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import checkpoint
from kernelgraph.errors import CheckpointError, FailedPreconditionError


class Affine(kg.nn.Module):
    def __init__(self, n_in, n_out, seed):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.register_parameter("weight", rng.standard_normal((n_in, n_out)).astype("f4"))
        self.register_parameter("bias", rng.standard_normal(n_out).astype("f4"))

    def forward(self, x):
        return kg.matmul(x, self.weight) + self.bias


class Net(kg.nn.Module):
    def __init__(self, seed=0):
        super().__init__()
        self.hidden = Affine(3, 4, seed)
        self.out = Affine(4, 2, seed + 1)

    def forward(self, x):
        return self.out(kg.tanh(self.hidden(x)))


X = np.arange(6, dtype=np.float32).reshape(2, 3) / 6


def params(model):
    return {n: p.detach().numpy().copy() for n, p in model.named_parameters()}


def eager_out(model):
    return model(kg.tensor(X)).detach().numpy()


def static_setup(model):
    """A graph running ``model``, and an initialised session on it."""
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3])
        y = model(x)
        init = kg.global_variables_initializer()
    sess = kg.Session(g)
    sess.run(init)
    return sess, x, y


def session_values(sess):
    return {v.name: sess._store[v].copy() for v in sess.graph.variables if v in sess._store}


def assert_same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


# -- round trips ---------------------------------------------------------------------------------


def test_module_round_trip_restores_in_place(tmp_path):
    path = tmp_path / "net.npz"
    a, b = Net(seed=0), Net(seed=10)
    kg.save(path, a)
    weight = b.hidden.weight
    loaded = kg.load(path, into=b)
    assert list(loaded) == ["hidden.weight", "hidden.bias", "out.weight", "out.bias"]
    assert_same(params(a), params(b))
    assert b.hidden.weight is weight and weight.requires_grad  # the same leaf tensors
    np.testing.assert_array_equal(eager_out(a), eager_out(b))
    # An ordinary .npz archive, readable without kernelgraph.
    with np.load(path, allow_pickle=False) as f:
        assert set(f.files) == {"__kernelgraph__", *loaded}
        meta = json.loads(f["__kernelgraph__"].item())
    assert meta["kind"] == "module" and meta["class"] == "Net" and meta["version"] == 1


def test_dict_round_trip_with_tensors_arrays_and_awkward_names(tmp_path):
    path = tmp_path / "d.npz"
    saved = {"w": kg.tensor([[1.0, 2.0]]), "step": np.int64(3), "mask": np.array([True]),
             "file": np.zeros(2), "allow_pickle": np.ones(1, np.int32), "a/b.c": np.eye(2)}
    kg.save(path, saved)
    loaded = kg.load(path)
    assert loaded["w"].dtype == np.float32 and loaded["step"].shape == ()
    assert loaded["mask"].dtype == np.bool_ and loaded["a/b.c"].tolist() == [[1, 0], [0, 1]]
    t, arr = kg.tensor(np.zeros((1, 2), np.float32)), np.zeros(2)
    view = arr[:]
    kg.load(path, into={"w": t, "file": arr}, strict=False)
    assert t.tolist() == [[1.0, 2.0]] and view.tolist() == [0.0, 0.0]
    kg.save(path, {"file": np.array([5.0, 6.0])})
    kg.load(path, into={"file": arr})
    assert view.tolist() == [5.0, 6.0]  # restored in place: views see it


def test_session_round_trip(tmp_path):
    path = tmp_path / "sess.npz"
    model = Net(seed=0)
    sess, x, y = static_setup(model)
    out_bias = model.variables(sess.graph)[3]
    sess.run(out_bias.assign(np.array([7, 8], np.float32)))  # differs from its initial value
    expected = sess.run(y, {x: X})
    kg.save(path, sess)
    assert sorted(kg.load(path)) == sorted(v.name for v in sess.graph.variables)
    fresh = kg.Session(sess.graph)  # a second session: its own, uninitialised variables
    kg.load(path, into=fresh)
    np.testing.assert_array_equal(fresh.run(y, {x: X}), expected)
    assert_same(session_values(fresh), session_values(sess))


def test_eager_checkpoint_into_a_session_running_the_model(tmp_path):
    path = tmp_path / "eager.npz"
    trained = Net(seed=0)
    kg.save(path, trained)
    other = Net(seed=5)  # different weights, run as a graph
    sess, x, y = static_setup(other)
    assert not np.allclose(sess.run(y, {x: X}), eager_out(trained))
    kg.load(path, into=sess, module=other)
    np.testing.assert_allclose(sess.run(y, {x: X}), eager_out(trained), rtol=1e-6)
    assert_same(params(other), params(Net(seed=5)))  # the eager parameters are untouched


def test_session_checkpoint_of_a_module_into_eager(tmp_path):
    path = tmp_path / "static.npz"
    model = Net(seed=0)
    sess, x, y = static_setup(model)
    w = model.variables(sess.graph)[0]
    sess.run(w.assign(np.full((3, 4), 0.5, np.float32)))  # "training" in the session
    kg.save(path, sess, module=model)
    assert list(kg.load(path)) == [n for n, _ in model.named_parameters()]
    eager = Net(seed=9)
    kg.load(path, into=eager)
    np.testing.assert_allclose(eager_out(eager), sess.run(y, {x: X}), rtol=1e-6)


def test_names_of_the_other_mode_fail_with_a_hint(tmp_path):
    model = Net()
    sess, _, _ = static_setup(model)
    kg.save(tmp_path / "s.npz", sess)
    with pytest.raises(CheckpointError, match="(?s)missing.*hidden.weight.*hint.*module=model"):
        kg.load(tmp_path / "s.npz", into=Net())
    kg.save(tmp_path / "m.npz", model)
    with pytest.raises(CheckpointError, match=r"(?s)unexpected.*into=sess, module=model"):
        kg.load(tmp_path / "m.npz", into=sess)
    with pytest.raises(CheckpointError, match=r"(?s)missing.*by those names: kg.load\(path, "
                                              r"into=sess\)"):
        kg.load(tmp_path / "s.npz", into=sess, module=model)


def test_rnn_cell_round_trip(tmp_path):
    cell, other = kg.nn.RNNCell(2, 3), kg.nn.RNNCell(2, 3)
    kg.save(tmp_path / "c.npz", cell)
    kg.load(tmp_path / "c.npz", into=other)
    assert_same(params(cell), params(other))


# -- what save refuses ---------------------------------------------------------------------------


def test_save_refuses_what_it_cannot_hold(tmp_path):
    path = tmp_path / "x.npz"
    with pytest.raises(TypeError, match="not a numeric array"):
        kg.save(path, {"o": np.array([object()])})
    with pytest.raises(TypeError, match="graph node"):
        with kg.Graph().as_default():
            kg.save(path, {"v": kg.Variable(1.0)})
    with pytest.raises(TypeError, match="Module, a dict"):
        kg.save(path, [1, 2])
    with pytest.raises(ValueError, match="reserved"):
        kg.save(path, {"__kernelgraph__": np.zeros(1)})
    g = kg.Graph()
    with g.as_default():
        kg.Variable(np.zeros(2), name="w")
    with pytest.raises(FailedPreconditionError, match="uninitialized value w"):
        kg.save(path, kg.Session(g))
    closed = kg.Session(g)
    closed.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        kg.save(path, closed)
    assert not os.listdir(tmp_path)


# -- atomic writes -------------------------------------------------------------------------------


def test_failed_replace_keeps_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "net.npz"
    kg.save(path, Net(seed=0))
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        kg.save(path, Net(seed=1))
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["net.npz"]


def test_failure_while_writing_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "net.npz"
    kg.save(path, Net(seed=0))
    before = path.read_bytes()
    real = np.lib.format.write_array
    calls = []

    def fail_on_third(fp, array, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # even an interrupt mid-write leaves no trace
        return real(fp, array, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", fail_on_third)
    with pytest.raises(KeyboardInterrupt):
        kg.save(path, Net(seed=1))
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["net.npz"]


def test_directory_that_refuses_new_files(tmp_path, monkeypatch):
    # A read-only directory, as the file system answers it (root would not be refused, so
    # the refusal is simulated where the temporary file is created).
    path = tmp_path / "net.npz"
    kg.save(path, Net(seed=0))
    before = path.read_bytes()

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError):
        kg.save(path, Net(seed=1))
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["net.npz"]


def test_overwrite_keeps_permissions(tmp_path):
    path = tmp_path / "net.npz"
    kg.save(path, Net(seed=0))
    path.chmod(0o640)
    kg.save(path, Net(seed=1))
    assert path.stat().st_mode & 0o777 == 0o640
    assert_same(kg.load(path), params(Net(seed=1)))


# -- bad files change nothing --------------------------------------------------------------------


def rewrite(src, dst, change):
    """Copy the archive ``src`` to ``dst``, member by member, through ``change(name, bytes)``
    (returning new bytes, or None to drop the member); ``change`` may add members by
    returning a dict."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            out = change(info.filename, zin.read(info.filename))
            if isinstance(out, dict):
                for name, data in out.items():
                    zout.writestr(name, data)
            elif out is not None:
                zout.writestr(info.filename, out)


def npy_bytes(arr):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(arr), allow_pickle=True)
    return buf.getvalue()


def marker_bytes(src, edit):
    with np.load(src, allow_pickle=False) as f:
        meta = json.loads(f["__kernelgraph__"].item())
    edit(meta)
    return npy_bytes(np.array(json.dumps(meta)))


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "good.npz"
    kg.save(path, Net(seed=0))
    return path


def assert_refused(path, match):
    """Loading ``path`` into a model and into a session raises and changes neither."""
    model = Net(seed=3)
    before = params(model)
    with pytest.raises(CheckpointError, match=match):
        kg.load(path, into=model)
    assert_same(params(model), before)
    sess, _, _ = static_setup(Net(seed=3))
    vars_before = session_values(sess)
    with pytest.raises(CheckpointError, match=match):
        kg.load(path, into=sess)
    assert_same(session_values(sess), vars_before)


def test_truncated_files(saved, tmp_path):
    data = saved.read_bytes()
    for cut in (0, 10, len(data) // 2, len(data) - 5):
        bad = tmp_path / f"cut{cut}.npz"
        bad.write_bytes(data[:cut])
        assert_refused(bad, "not a kernelgraph checkpoint, or is truncated")


def test_files_that_are_not_checkpoints(tmp_path):
    text = tmp_path / "notes.npz"
    text.write_text("hello")
    assert_refused(text, "cannot read it as an .npz archive")
    plain = tmp_path / "plain.npz"
    np.savez(plain, **{"hidden.weight": np.zeros((3, 4), np.float32)})
    assert_refused(plain, "no '__kernelgraph__' entry .*hidden.weight")
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    assert_refused(single, "single .npy array")
    with pytest.raises(FileNotFoundError):
        kg.load(tmp_path / "missing.npz")


def test_tampered_values(saved, tmp_path):
    bad = tmp_path / "bad.npz"
    rewrite(saved, bad, lambda n, b: npy_bytes(np.ones((3, 4), np.float32))
            if n == "hidden.weight.npy" else b)
    assert_refused(bad, "'hidden.weight': the values do not match the marker's SHA-256")


def test_tampered_shapes_and_names(saved, tmp_path):
    bad = tmp_path / "shape.npz"
    rewrite(saved, bad, lambda n, b: npy_bytes(np.ones((4, 4), np.float32))
            if n == "hidden.weight.npy" else b)
    assert_refused(bad, r"'hidden.weight': the marker says \(3, 4\) float32, the array is "
                        r"\(4, 4\) float32")
    dropped = tmp_path / "dropped.npz"
    rewrite(saved, dropped, lambda n, b: None if n == "out.bias.npy" else b)
    assert_refused(dropped, "the marker lists 'out.bias', which the file does not hold")
    added = tmp_path / "added.npz"
    rewrite(saved, added, lambda n, b: {n: b, "extra.npy": npy_bytes(np.zeros(1))}
            if n == "out.bias.npy" else b)
    assert_refused(added, "the file holds 'extra', which the marker does not list")


def test_tampered_or_foreign_markers(saved, tmp_path):
    cases = {
        "not valid JSON": npy_bytes(np.array("{nope")),
        "does not describe": marker_bytes(saved, lambda m: m.update(format="other")),
        "newer kernelgraph": marker_bytes(saved, lambda m: m.update(version=99)),
        "lacks its kind": marker_bytes(saved, lambda m: m.pop("entries")),
        "one JSON string": npy_bytes(np.zeros(3)),
    }
    for i, (match, marker) in enumerate(cases.items()):
        bad = tmp_path / f"marker{i}.npz"
        rewrite(saved, bad, lambda n, b, m=marker: m if n == "__kernelgraph__.npy" else b)
        assert_refused(bad, match)


class Boom:
    ran = False

    def __reduce__(self):
        return (Boom._explode, ())

    @staticmethod
    def _explode():
        Boom.ran = True
        return Boom()


def test_pickled_members_are_never_unpickled(saved, tmp_path):
    bad = tmp_path / "pickle.npz"
    evil = npy_bytes(np.array([Boom()], dtype=object))
    rewrite(saved, bad, lambda n, b: evil if n == "out.bias.npy" else b)
    assert_refused(bad, "holds something other than numeric arrays")
    marker_evil = tmp_path / "pickle_marker.npz"
    rewrite(saved, marker_evil, lambda n, b: evil if n == "__kernelgraph__.npy" else b)
    assert_refused(marker_evil, "holds something other than numeric arrays")
    assert not Boom.ran


def test_mismatched_targets_change_nothing(tmp_path):
    path = tmp_path / "net.npz"
    kg.save(path, Net(seed=0))

    class Wider(Net):
        def __init__(self):
            super().__init__(seed=4)
            self.out = Affine(4, 3, 5)  # out.* shapes differ

    model = Wider()
    before = params(model)
    with pytest.raises(CheckpointError) as info:
        kg.load(path, into=model)
    message = str(info.value)
    assert "'out.weight': the checkpoint has (4, 2) float32, Wider expects (4, 3) float32" \
        in message and "'out.bias'" in message
    assert_same(params(model), before)  # hidden.* matched, yet was not written either

    class Double(Net):
        def __init__(self):
            super().__init__(seed=4)
            self.hidden.weight = kg.tensor(np.zeros((3, 4)), requires_grad=True)  # float64

    with pytest.raises(CheckpointError, match=r"\(3, 4\) float32, Double expects \(3, 4\) "
                                              r"float64"):
        kg.load(path, into=Double())

    class Bigger(Net):
        def __init__(self):
            super().__init__(seed=4)
            self.extra = Affine(1, 1, 0)

    bigger = Bigger()
    before = params(bigger)
    with pytest.raises(CheckpointError, match="missing from the checkpoint: 'extra.weight', "
                                              "'extra.bias'"):
        kg.load(path, into=bigger)
    assert_same(params(bigger), before)
    kg.load(path, into=bigger, strict=False)  # PyTorch's strict=False: what both have
    assert_same({k: v for k, v in params(bigger).items() if not k.startswith("extra")},
                params(Net(seed=0)))
    with pytest.raises(CheckpointError, match="unexpected in the checkpoint"):
        kg.load(path, into={"hidden.weight": np.zeros((3, 4), np.float32)})


def test_mismatch_into_a_session_with_a_module_changes_nothing(tmp_path):
    path = tmp_path / "rnn.npz"
    kg.save(path, kg.nn.RNNCell(2, 3))
    model = Net()
    sess, _, _ = static_setup(model)
    before = session_values(sess)
    with pytest.raises(CheckpointError, match="missing from the checkpoint"):
        kg.load(path, into=sess, module=model)
    assert_same(session_values(sess), before)


def test_load_arguments_are_checked(saved):
    sess, _, _ = static_setup(Net())
    with pytest.raises(TypeError, match="module= goes with a Session"):
        kg.load(saved, into=Net(), module=Net())
    with pytest.raises(TypeError, match="values must be kg tensors or NumPy arrays"):
        kg.load(saved, into={"hidden.weight": [1, 2]})
    with pytest.raises(TypeError, match="read-only"):
        ro = np.zeros((3, 4), np.float32)
        ro.setflags(write=False)
        kg.load(saved, into={"hidden.weight": ro})
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        kg.load(saved, into=sess)


def test_format_constants():
    assert checkpoint.MARKER == "__kernelgraph__" and checkpoint.VERSION == 1


def test_cuda_tensors_and_variables(tmp_path):
    """Values on the GPU (numba's simulator without one) are saved from and restored to
    their device."""
    path = tmp_path / "gpu.npz"
    kg.save(path, {"w": kg.tensor([1.0, 2.0], device="cuda")})
    target = kg.tensor([0.0, 0.0], device="cuda")
    kg.load(path, into={"w": target})
    assert target.is_cuda and target.tolist() == [1.0, 2.0]
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        w = kg.Variable(np.zeros(2, np.float32), name="w")
        doubled = w * 2.0
    sess = kg.Session(g)
    kg.load(path, into=sess)
    assert sess.run(doubled).tolist() == [2.0, 4.0]
    kg.save(path, sess)
    assert kg.load(path)["w"].tolist() == [1.0, 2.0]


def test_pytorchs_save_and_load_spellings(tmp_path):
    """``torch.save(obj, path)`` and ``torch.load(path, map_location=, weights_only=)``:
    PyTorch's order and keywords reach the same checkpoint."""
    kg.manual_seed(0)
    model, other = kg.nn.Linear(3, 2), kg.nn.Linear(3, 2)
    path = tmp_path / "model.pth"
    kg.save(model.state_dict(), path)
    other.load_state_dict(kg.load(path, map_location="cpu", weights_only=True))
    np.testing.assert_array_equal(other.weight.detach().numpy(), model.weight.detach().numpy())


# -- symbolic links ------------------------------------------------------------------------------


def _layout(root) -> dict:
    """Every name under ``root``: 'link -> <where it points>' or 'file <old|new>' (which save
    kg.load reads there); the shape of tests/recorded/record_save_links.py's record."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            if os.path.islink(p):
                out[rel] = "link -> " + os.readlink(p)
            elif os.path.isfile(p):
                out[rel] = "file " + ("new" if kg.load(p)["w"].tolist() == [2.0] else "old")
    return dict(sorted(out.items()))


def test_save_writes_through_symbolic_links_as_torch_save(tmp_path, recorded):
    """torch.save (open()) writes the file a link ends at and keeps the link; kg.save did
    os.replace over the link itself, turning it into a file and leaving its target old."""
    cases = recorded("save_links")["cases"]
    assert len(cases) == 5
    for i, (case, c) in enumerate(cases.items()):
        root = tmp_path / str(i)
        for name, what in c["before"].items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            if what == "file":
                kg.save(root / name, {"w": np.array([1.0], np.float32)})
            else:
                os.symlink(what[3:], root / name)
        kg.save(root / c["path"], {"w": np.array([2.0], np.float32)})
        assert _layout(root) == c["after"], case
        assert kg.load(root / c["path"])["w"].tolist() == [2.0], case


def test_save_through_a_link_keeps_the_targets_permissions(tmp_path):
    kg.save(tmp_path / "real.npz", Net(seed=0))
    (tmp_path / "real.npz").chmod(0o640)
    os.symlink("real.npz", tmp_path / "link.npz")
    kg.save(tmp_path / "link.npz", Net(seed=1))
    assert (tmp_path / "real.npz").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "link.npz").is_symlink()
    assert_same(kg.load(tmp_path / "real.npz"), params(Net(seed=1)))
