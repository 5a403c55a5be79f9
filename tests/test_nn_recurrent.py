"""kg.nn.RNN / LSTM / GRU, the cells, nn.utils.rnn (packed sequences) and
nn.utils.clip_grad_*, against PyTorch 2.13's recorded numbers (the case code in
tests/recorded/record_torch_rnn.py runs on both frameworks), and the modules in static
mode against eager mode."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import nn
from tests.recorded.record_torch_rnn import (
    CELL_CASES,
    MODULE_CASES,
    cell_case,
    clip_case,
    data,
    namespaces,
    run_module,
    training_case,
    utils_case,
)

T = namespaces(kg, nn, nn.utils.rnn, kg.optim)


def assert_same(got, want, path="value"):
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, str) or want is None:
        assert got == want, path
    else:
        np.testing.assert_allclose(np.array(got, np.float64), np.array(want, np.float64),
                                   rtol=1e-5, atol=1e-6, err_msg=path)


@pytest.mark.parametrize("name", list(MODULE_CASES))
def test_modules_match_torch(name, recorded):
    kind, kwargs, shape, extra = MODULE_CASES[name]
    assert_same(run_module(T, kind, kwargs, shape, **extra),
                recorded("torch_rnn")["cases"][name], name)


@pytest.mark.parametrize("name", list(CELL_CASES))
def test_cells_match_torch(name, recorded):
    kind, kwargs, state = CELL_CASES[name]
    assert_same(cell_case(T, kind, kwargs, state), recorded("torch_rnn")["cases"][name], name)


def test_packing_utilities_match_torch(recorded):
    assert_same(utils_case(T), recorded("torch_rnn")["cases"]["utils"])


def test_clip_grad_match_torch(recorded):
    assert_same(clip_case(T), recorded("torch_rnn")["cases"]["clip"])


def test_sequence_classifier_trains_as_torch(recorded):
    assert_same(training_case(T), recorded("torch_rnn")["cases"]["training"])
