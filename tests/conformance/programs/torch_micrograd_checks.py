"""In the manner of micrograd's test/test_engine.py: the sanity check and the "more ops"
check, each computed with torch.Tensor([...]).double() leaves and backward(), values and
gradients asserted against numbers derived by hand, plus unary functions (tanh, exp)."""
import torch


def test_sanity_check():
    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    print("sanity", y.data.item(), x.grad.item())
    assert y.data.item() == -20.0
    assert x.grad.item() == 46.0


def test_more_ops():
    a = torch.Tensor([-4.0]).double()
    b = torch.Tensor([2.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    print("more_ops", g.data.item(), a.grad.item(), b.grad.item())
    assert abs(g.data.item() - 24.70408163265306) < 1e-6
    assert abs(a.grad.item() - 138.83381924198252) < 1e-6
    assert abs(b.grad.item() - 645.5772594752186) < 1e-6


def test_unary_tensor_fns():
    for fn in (torch.Tensor.tanh, torch.Tensor.exp, torch.Tensor.sigmoid):
        for v in (-1.0, 0.123, 2.0):
            xt = torch.Tensor([v]).double()
            xt.requires_grad = True
            yt = fn(xt)
            yt.backward()
            print(fn.__name__, v, yt.data.item(), xt.grad.item())


def test_grad_accumulates():
    w = torch.tensor(3.0, requires_grad=True)
    for _ in range(3):
        (w * w).backward()
    print("accumulated", w.grad.item())
    assert w.grad.item() == 18.0


for test in (test_sanity_check, test_more_ops, test_unary_tensor_fns, test_grad_accumulates):
    test()
    print(test.__name__, "ok")
