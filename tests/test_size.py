"""``x.shape`` and ``x.size()`` of an eager tensor are a ``kg.Size`` (``torch.Size``): a tuple
that prints as PyTorch prints it. Expected texts are what torch 2.13.0 printed for the same
lines (checked with /work/refvenv)."""

from __future__ import annotations

import kernelgraph as torch


def test_shape_is_a_size_that_prints_as_torch():
    x = torch.ones(2, 3)
    s = x.shape
    assert type(s) is torch.Size and type(x.size()) is torch.Size
    assert (str(s), repr(s), f"{s}") == ("torch.Size([2, 3])",) * 3
    assert str(torch.ones(()).shape) == "torch.Size([])"
    assert str([p.shape for p in [torch.zeros(4, 1), torch.zeros(5)]]) == \
        "[torch.Size([4, 1]), torch.Size([5])]"


def test_size_is_a_tuple():
    x = torch.ones(2, 3)
    s = x.shape
    assert s == (2, 3) and hash(s) == hash((2, 3)) and {s: 1}[(2, 3)] == 1
    assert s != [2, 3] and isinstance(s, tuple) and len(s) == 2
    assert type(s[0]) is int and x.size(1) == 3 and x.size(-1) == 3
    assert type(s[1:]) is torch.Size and s[1:] == (3,)
    assert type(s + (4,)) is torch.Size and s + (4,) == (2, 3, 4)
    a, b = s
    assert (a, b) == (2, 3)


def test_size_constructs_and_counts():
    assert torch.Size([2, 3]) == (2, 3) and str(torch.Size((4,))) == "torch.Size([4])"
    assert torch.Size([2, 3]).numel() == 6 and torch.Size([]).numel() == 1
    x = torch.ones(2, 3)
    assert torch.zeros(x.shape).shape == (2, 3) and torch.ones(*x.shape).shape == (2, 3)
    assert x.view(x.shape).shape == (2, 3) and x.sum(0).shape == (3,) and x.T.shape == (3, 2)


def test_graph_nodes_keep_tuples():
    p = torch.placeholder(torch.float32, torch.ones(2, 3).shape)
    assert type(p.shape) is tuple and p.shape == (2, 3)
