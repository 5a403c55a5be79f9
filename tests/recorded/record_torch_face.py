"""Record what PyTorch's tensors mean to tutorial code into ``torch_face.json`` (read by
tests/test_torch_face.py): ``t.data`` as a tensor sharing storage and unseen by autograd,
``.grad`` accumulated into the same tensor, checkpoints loaded between forward and backward.

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_torch_face.py

Each case is a function of the ``torch`` module, written once against PyTorch's API; the
tests run it with ``kernelgraph`` as ``torch``. A case is recorded as ``["ok", value]``
(tensors as nested lists) or ``[error type name, message]``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# -- t.data ----------------------------------------------------------------------------------------
@case
def data_numpy(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    return d.numpy(), d.requires_grad, d.is_leaf, d.grad_fn is None, type(d).__name__


@case
def data_shares_storage(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.data[0] = 10.0
    x.data.mul_(2)
    return x.detach(), x.requires_grad, x.is_leaf


@case
def manual_sgd_step(torch):
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    x = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    y = torch.tensor([1.0, 0.0, 2.0])
    losses = []
    for _ in range(4):
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        losses.append(loss.item())
        w.data -= 0.1 * w.grad.data
        b.data = b.data - 0.1 * b.grad.data
        w.grad.data.zero_()
        b.grad.data.zero_()
    return losses, w.detach(), b.detach(), w.grad, b.grad


@case
def data_write_unseen_by_autograd(torch):
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    y.data.mul_(2)  # exp's gradient reads its output: the changed values, and no error
    y.sum().backward()
    return x.grad


@case
def inplace_write_seen_by_autograd(torch):
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    y.detach().mul_(2)  # detach() shares the version counter: backward refuses
    y.sum().backward()


@case
def data_version_is_its_own(torch):
    x = torch.ones(2, requires_grad=True)
    d = x.data
    d.add_(1)
    return x._version, x.detach()


@case
def data_assign_tensor(torch):
    w = torch.zeros(2, requires_grad=True)
    w.data = torch.ones(3)
    return w.detach(), w.requires_grad, list(w.shape), w.is_leaf


@case
def data_assign_not_a_tensor(torch):
    w = torch.zeros(2, requires_grad=True)
    w.data = [1.0, 2.0]


@case
def data_of_nonleaf(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    d = y.data
    return d, d.requires_grad, d.is_leaf, y.requires_grad


@case
def grad_data_numpy(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    return x.grad.data.numpy(), x.grad.data.requires_grad


# -- .grad accumulated in place -------------------------------------------------------------------
@case
def grad_aliasing(torch):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    g = w.grad
    (w * 3).sum().backward()
    return g is w.grad, g, w.grad


@case
def grad_aliasing_after_zero(torch):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    g = w.grad
    w.grad.zero_()
    (w * 3).sum().backward()
    return g is w.grad, g


@case
def grad_set_then_accumulated(torch):
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    mine = torch.tensor([10.0, 20.0])
    w.grad = mine
    (w * 2).sum().backward()
    return mine is w.grad, mine


@case
def grads_of_add_not_shared(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()
    (a + b).sum().backward()
    return a.grad, b.grad, a.grad is b.grad


@case
def grad_of_view_input_not_shared(torch):
    a = torch.tensor([[1.0, 2.0]], requires_grad=True)
    b = torch.tensor([[3.0, 4.0]], requires_grad=True)
    (a.reshape(2) + b.reshape(2)).sum().backward()
    (a.reshape(2) * 2 + b.reshape(2)).sum().backward()
    return a.grad, b.grad


@case
def zero_grad_in_place(torch):
    m = torch.nn.Linear(2, 1)
    m(torch.ones(1, 2)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m(torch.ones(1, 2)).sum().backward()
    g2 = m.weight.grad
    opt.zero_grad(set_to_none=False)
    return g is m.weight.grad, g2 is m.weight.grad, g, m.weight.grad.requires_grad


# -- a checkpoint loaded between forward and backward ---------------------------------------------
@case
def load_between_forward_and_backward(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    path = os.path.join(tempfile.mkdtemp(), "model.pt")
    torch.save(model.state_dict(), path)
    out = model(torch.ones(2, 3)).sum()
    model.load_state_dict(torch.load(path))
    try:
        out.backward()
    except RuntimeError as e:
        return "RuntimeError", str(e).startswith(
            "one of the variables needed for gradient computation has been modified by an "
            "inplace operation")
    return "no error"


@case
def second_backward_accumulates_in_place_unless_create_graph(torch):
    """What PyTorch's own test_accumulate_grad checks: a second backward adds into the same
    .grad tensor, except under create_graph=True, which makes a new one."""
    def twice(create_graph):
        x = torch.zeros(2, 2, requires_grad=True)
        y = x * 3
        y.backward(torch.ones(2, 2), retain_graph=True)
        first, copy = x.grad, x.grad.clone()
        y.backward(torch.ones(2, 2), create_graph=create_graph)
        return first.tolist(), copy.tolist(), first is x.grad, x.grad.requires_grad

    return twice(False), twice(True)


@case
def a_grad_set_by_hand_keeps_its_reference(torch):
    def run(create_graph):
        p = torch.tensor([1.5, 1.5]).requires_grad_()
        p.grad = torch.tensor([1.0, 2.0])
        before = p.grad
        p.backward(torch.tensor([0.5, 0.5]), create_graph=create_graph)
        return before is p.grad, p.grad.tolist(), before.tolist()

    return run(False), run(True)


# -- NumPy scalars in arithmetic -----------------------------------------------------------------
@case
def numpy_scalars_are_weak_as_python_numbers(torch):
    import numpy as np
    t, i = torch.ones(2), torch.ones(2, dtype=torch.int64)
    results = [t * np.float64(2.0), np.float64(3.0) - t, t / np.sqrt(4), t ** np.float64(2),
               i * np.float64(2.5), i * np.int32(2), t * np.int64(2), torch.mul(t, np.float64(2))]
    return [(str(r.dtype).replace("torch.", ""), r.tolist()) for r in results]


# -- modules whose arguments tutorials pass positionally ------------------------------------------
@case
def relu_inplace_overwrites_its_input(torch):
    x = torch.tensor([-1.0, 2.0])
    y = torch.nn.ReLU(True)(x)
    return repr(torch.nn.ReLU(True)), repr(torch.nn.ReLU()), y is x, x.tolist()


@case
def embedding_padding_row_is_zero_and_gets_no_gradient(torch):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(5, 2, padding_idx=-1)
    emb(torch.tensor([[4, 1, 4], [0, 4, 2]])).sum().backward()
    return repr(emb), emb.padding_idx, emb.weight[4].tolist(), emb.weight.grad.tolist()


# -- shapes in messages: torch.Size([...]), as PyTorch prints them --------------------------------
@case
def size_in_a_loss_warning(torch):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.nn.functional.mse_loss(torch.zeros(2, 1), torch.zeros(2))
    return [str(w.message) for w in caught]


@case
def size_in_a_loss_error(torch):
    return torch.nn.functional.binary_cross_entropy(torch.full((2, 1), 0.5), torch.zeros(2))


@case
def size_in_a_gradient_mismatch(torch):
    x = torch.zeros(2, requires_grad=True)
    (x * 2).backward(torch.ones(3))


def _plain(value):
    """A result as JSON: tensors as nested lists, tuples as lists."""
    if hasattr(value, "tolist") and hasattr(value, "shape"):
        return value.tolist()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def run(torch, name):
    """``["ok", value]`` or ``[error type name, message]`` of case ``name`` in ``torch``."""
    try:
        return ["ok", _plain(CASES[name](torch))]
    except Exception as e:  # noqa: BLE001 - an error is the recorded outcome
        return [type(e).__name__, str(e)]


def main():
    import torch

    results = {name: run(torch, name) for name in CASES}
    out = {"torch": torch.__version__, "cases": results}
    path = Path(__file__).with_name("torch_face.json")
    path.write_text(json.dumps(out, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(results)} cases)")


if __name__ == "__main__":
    main()
