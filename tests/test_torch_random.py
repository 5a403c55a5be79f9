"""PyTorch's CPU random streams, against numbers recorded from torch 2.13
(tests/recorded/record_torch_random.py): the same program, written once against PyTorch's API,
run with ``kernelgraph`` in place of ``torch``.

Everything is compared exactly: uniforms, normals (float32 ones of 16 elements or more through
PyTorch's vectorised Cephes log/sincos, kernelgraph.ops.torch_vecmath), randint, randperm,
bernoulli, and the nn.Linear / Conv2d / Embedding / nn.init initialisations.
"""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.ops import torch_random as R

_SPEC = importlib.util.spec_from_file_location(
    "record_torch_random",
    pathlib.Path(__file__).parent / "recorded" / "record_torch_random.py")
REC = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(REC)


def _compare(got, want, where: str):
    if isinstance(want, dict):
        for key in want:
            _compare(got[key], want[key], f"{where}.{key}")
        return
    assert got == want, where


@pytest.mark.parametrize("index", range(len(REC.programs())))
def test_program_matches_pytorch(recorded, index):
    prog = REC.programs()[index]
    want = recorded("torch_random")["programs"][index]
    kg.manual_seed(prog["seed"])
    for k, ((name, args), expected) in enumerate(zip(prog["calls"], want)):
        got = REC.run_call(kg, name, args)
        _compare(got, expected, f"seed {prog['seed']} call {k} {name}{args}")


def test_factories_match_pytorch(recorded):
    want = recorded("torch_random")["factories"]
    for case, expected in zip(REC.factories(), want):
        got = REC.run_factory(kg, case)
        if "error" in expected and case[1] == "rand":
            # kernelgraph's size check raises its SizeError (a RuntimeError), in its words
            with pytest.raises(RuntimeError, match="non-negative"):
                kg.rand(*case[2])
        elif "error" in expected:
            assert got["error"] == expected["error"], case
            assert got["message"] == expected["message"], case
        else:
            assert got == expected, case


def test_mersenne_twister_reference_output():
    # mt19937 seeded with init_genrand(5489): its 10000th output is 4123659995 (C++11 std).
    g = R.Generator().manual_seed(5489)
    draws = g._draw32(10000)
    assert int(draws[-1]) == 4123659995
    g.manual_seed(5489)
    assert [g.random() for _ in range(3)] == [int(v) for v in draws[:3]]


def test_random64_is_two_draws_high_first():
    g = R.Generator().manual_seed(3)
    hi, lo = g._draw32(2)
    g.manual_seed(3)
    assert g.random64() == (int(hi) << 32) | int(lo)


def test_seed_functions_and_generators_are_independent():
    kg.manual_seed(5)
    assert kg.initial_seed() == 5
    a = kg.rand(4).tolist()
    g = kg.Generator().manual_seed(5)
    kg.manual_seed(5)
    assert kg.rand(4, generator=g).tolist() == a  # its own stream, same seed
    assert kg.rand(4).tolist() == a  # the default stream did not move
    s = kg.seed()
    assert kg.initial_seed() == s and 0 <= s < 2**63
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        kg.rand(2, generator=5)
    with pytest.raises(TypeError, match="must be int"):
        kg.manual_seed("zero")


def test_rng_state_round_trip_keeps_the_cached_normal():
    kg.manual_seed(0)
    kg.randn(1, dtype=kg.float64)  # leaves a cached second sample
    state = kg.get_rng_state()
    a = kg.randn(3, dtype=kg.float64).tolist()
    kg.set_rng_state(state)
    assert kg.randn(3, dtype=kg.float64).tolist() == a
    with pytest.raises(RuntimeError, match="5056"):
        kg.set_rng_state(np.zeros(10, np.uint8))


def test_fills_write_in_place_in_memory_order():
    # A transposed view is filled in its storage's order, as ATen's TensorIterator does.
    base = np.zeros((3, 5), np.float32)
    R.manual_seed(0)
    R.uniform_fill(base.T)
    R.manual_seed(0)
    assert np.array_equal(base.ravel(), R.uniform_array((15,), "float32"))
    d = np.zeros(40)
    R.manual_seed(2)
    R.normal_fill(d[::2])  # not contiguous: one normal_distribution<double> per element
    R.manual_seed(2)
    assert np.array_equal(d[::2], R.normal_array((20,), "float64", contiguous=False))
    assert not d[1::2].any()


def test_refused_dtypes_and_arguments():
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        kg.rand(2, dtype=kg.int64)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        R.normal_array((3,), "float32", 0.0, -1.0)
    with pytest.raises(TypeError, match="out="):
        kg.randn(2, out=kg.zeros(2))


def test_bernoulli_matches_pytorch(recorded):
    want = recorded("torch_random")["bernoulli"]
    kg.manual_seed(0)
    got = [kg.bernoulli(kg.full((40,), 0.3)).tolist(),
           kg.bernoulli(kg.zeros(40), 0.3).tolist(),
           kg.bernoulli(kg.full((20,), 0.7, dtype=kg.float64)).tolist(),
           kg.rand(3).tolist()]
    assert got == want["draws"]
    kg.manual_seed(1)
    x = np.ones((5, 4), np.float32)
    mask = R.bernoulli_array(x.shape, 1 - 0.5, "float32") / np.float32(1 - 0.5)
    assert (x * mask).tolist() == want["dropout"]  # F.dropout(x, 0.5)'s mask, as PyTorch


def test_multinomial_matches_pytorch(recorded):
    # makemore's sampling loop and the other forms of torch.multinomial
    assert REC.multinomial_program(kg) == recorded("torch_random")["multinomial"]
    with pytest.raises(RuntimeError, match="without replacement"):
        kg.multinomial(kg.tensor([0.5, 0.5]), 3)
    with pytest.raises(RuntimeError, match="element < 0"):
        kg.multinomial(kg.tensor([0.5, -0.5]), 1)


def test_exponential_matches_the_uniform_stream():
    g = R.Generator().manual_seed(0)
    u = R._uniform01(g, 5, "float64")
    g.manual_seed(0)
    np.testing.assert_array_equal(R.exponential_array((5,), "float64", 2.0, generator=g),
                                  -np.log1p(-u) / 2.0)
