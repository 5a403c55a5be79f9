"""In the manner of PyTorch's test/test_autograd.py and test_nn.py: unittest.TestCase methods
(self.assertEqual, torch.allclose) on gradient accumulation, grad modes, torch.Tensor(list),
retain_grad, torch.nn.functional losses, Module.to / .double() / .float(), set_default_device,
run by a TestResult so that only the outcome is printed."""
import unittest

import torch
import torch.nn.functional as F
from torch import nn


class TestAutogradBasics(unittest.TestCase):
    def test_accumulate_and_zero(self):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        (3 * x).sum().backward()
        self.assertTrue(torch.allclose(x.grad, torch.tensor([5.0, 7.0])))
        x.grad.zero_()
        self.assertEqual(x.grad.tolist(), [0.0, 0.0])

    def test_grad_modes(self):
        x = torch.ones(2, requires_grad=True)
        with torch.no_grad():
            y = x * 2
            with torch.enable_grad():
                z = x * 2
        self.assertFalse(y.requires_grad)
        self.assertTrue(z.requires_grad)
        self.assertIsNone(y.grad_fn)

    def test_tensor_constructor(self):
        t = torch.Tensor([1, 2, 3])
        self.assertEqual(t.dtype, torch.float32)
        self.assertEqual(t.tolist(), [1.0, 2.0, 3.0])
        self.assertEqual(torch.FloatTensor([[1, 2]]).shape, (1, 2))

    def test_retain_grad(self):
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        h = x * 3
        h.retain_grad()
        (h ** 2).sum().backward()
        self.assertEqual(h.grad.tolist(), [6.0, -12.0])
        self.assertEqual(x.grad.tolist(), [18.0, -36.0])

    def test_functional_losses(self):
        logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
        target = torch.tensor([0, 2])
        ce = F.cross_entropy(logits, target)
        nll = F.nll_loss(F.log_softmax(logits, dim=1), target)
        self.assertAlmostEqual(ce.item(), nll.item(), places=6)
        mse = F.mse_loss(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 4.0]))
        self.assertAlmostEqual(mse.item(), 2.5, places=6)
        print("cross_entropy", round(ce.item(), 6))

    def test_module_conversions(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        model = model.to(torch.device("cpu"))
        self.assertIs(model.double(), model)
        self.assertEqual(model[0].weight.dtype, torch.float64)
        out = model(torch.ones(4, 2, dtype=torch.float64))
        self.assertEqual(out.dtype, torch.float64)
        model.float()
        self.assertEqual(next(model.parameters()).dtype, torch.float32)
        print("module out", round(model(torch.ones(1, 2)).item(), 6))

    def test_default_device(self):
        torch.set_default_device("cpu")
        t = torch.zeros(2)
        self.assertEqual(str(t.device), "cpu")
        self.assertEqual(t.device, torch.device("cpu"))
        lin = nn.Linear(2, 2).to("cpu").cpu()
        self.assertEqual(lin.weight.device.type, "cpu")
        self.assertEqual(t.to("cpu").tolist(), [0.0, 0.0])

    def test_backward_twice_fails(self):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * 2).sum()
        y.backward()
        with self.assertRaises(RuntimeError):
            y.backward()


suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestAutogradBasics)
result = unittest.TestResult()
suite.run(result)
for test, trace in result.failures + result.errors:
    print("FAILED", test.id().split(".")[-1], trace.strip().splitlines()[-1])
ran = result.testsRun - len(result.skipped)
print("ran", ran, "failures", len(result.failures), "errors", len(result.errors))
