"""TF1's program helpers: ``tf.flags`` / ``tf.app.flags`` with ``tf.app.run`` (each case run
as its own process, as a program is, and compared with what real TF did in
``tests/recorded/tf_graph_io.json``), and ``tf.gfile``."""

from __future__ import annotations

import os
import sys

import pytest

import kernelgraph.compat.v1 as tf
from kernelgraph import errors

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "recorded"))
import record_tf_graph_io as record  # noqa: E402 - its FLAG_CASES and their runner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_flags_as_tf1_parses_them_jupyter_argv_included(recorded):
    want = recorded("tf_graph_io")["flags"]
    got = record.flag_cases(sys.executable, "kernelgraph.compat.v1", {"PYTHONPATH": ROOT})
    assert got == want


def test_flags_namespaces():
    assert tf.app.flags is tf.flags
    assert tf.flags.DEFINE_bool is tf.flags.DEFINE_boolean
    from absl import flags as absl_flags

    values = absl_flags.FlagValues()
    tf.flags.DEFINE_string(flag_name="name", default_value="x", docstring="old spellings",
                           flag_values=values)
    wrapped = tf.flags.FlagValuesWrapper(values)
    assert wrapped(["prog", "--name=y", "rest"]) == ["prog", "rest"]
    assert wrapped.name == "y" and wrapped["name"].default == "x"


def test_gfile_round_trip(tmp_path):
    d = str(tmp_path / "a" / "b")
    tf.gfile.MakeDirs(d)
    tf.gfile.MakeDirs(d)  # no error when it exists
    assert tf.gfile.Exists(d) and tf.gfile.IsDirectory(d)
    path = os.path.join(d, "f.txt")
    with tf.gfile.GFile(path, "w") as f:
        f.write("one\ntwo\n")
    with tf.gfile.FastGFile(path, "rb") as f:
        assert f.read() == b"one\ntwo\n"
    with tf.gfile.GFile(path) as f:
        assert list(f) == ["one\n", "two\n"]
    assert tf.gfile.GFile(path).size() == 8
    tf.gfile.Copy(path, os.path.join(d, "g.txt"))
    with pytest.raises(errors.AlreadyExistsError):
        tf.gfile.Copy(path, os.path.join(d, "g.txt"))
    tf.gfile.Rename(os.path.join(d, "g.txt"), os.path.join(d, "h.txt"))
    assert tf.gfile.ListDirectory(d) == ["f.txt", "h.txt"]
    assert tf.gfile.Glob(os.path.join(d, "*.txt")) == [path, os.path.join(d, "h.txt")]
    assert [w[0] for w in tf.gfile.Walk(str(tmp_path))] == [
        str(tmp_path), str(tmp_path / "a"), d]
    tf.gfile.Remove(os.path.join(d, "h.txt"))
    tf.gfile.DeleteRecursively(str(tmp_path / "a"))
    assert not tf.gfile.Exists(d)


def test_gfile_errors_are_tfs(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(errors.NotFoundError):
        tf.gfile.GFile(missing).read()
    with pytest.raises(errors.NotFoundError):
        tf.gfile.DeleteRecursively(missing)
    with pytest.raises(errors.NotFoundError):
        tf.gfile.ListDirectory(missing)
    with pytest.raises(errors.UnimplementedError, match="'gs' not implemented"):
        tf.gfile.Exists("gs://bucket/x")
    with pytest.raises(errors.InvalidArgumentError):
        tf.gfile.GFile(missing, "x")
