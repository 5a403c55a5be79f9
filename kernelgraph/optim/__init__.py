"""``kg.optim``: ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad`` and ``Adadelta`` with
PyTorch's update formulas, in both modes, and :mod:`.lr_scheduler` (``torch.optim.lr_scheduler``).

An optimiser's update rule is written once with the public ops (``_update``), like every
op's gradient rule. Eager mode (PyTorch): ``loss.backward(); opt.step()`` runs that rule on
the parameters' ``.grad`` and writes the results into the parameter tensors in place.
Static mode (TF1): ``train = opt.minimize(loss)`` adds the same rule to the loss's graph
(gradients from ``kg.gradients``) and returns one ``kg.group`` of variable updates; the
optimiser's own state (momentum buffers, Adam's moments and step count) lives in
non-trainable ``kg.Variable`` s that ``kg.global_variables_initializer()`` initialises, so
make the initializer after ``minimize``. The same initial weights then give the same losses
in both modes.

>>> import kernelgraph as kg
>>> import numpy as np
>>> w = kg.tensor([1.0, 2.0], requires_grad=True)
>>> opt = kg.optim.SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()                      # gradient 2w
...     opt.step()
>>> [round(x, 4) for x in w.tolist()]                 # 1 -> 0.8 -> 0.8 - 0.1*(0.9*2 + 1.6)
[0.46, 0.92]
>>> with kg.Graph().as_default():
...     v = kg.Variable(np.array([1.0, 2.0], np.float32))
...     train = kg.optim.SGD([v], lr=0.1, momentum=0.9).minimize(kg.sum(v * v))
...     init = kg.global_variables_initializer()
...     with kg.Session() as sess:
...         _ = sess.run(init); _ = sess.run(train); _ = sess.run(train)
...         [round(x, 4) for x in sess.run(v).tolist()]
[0.46, 0.92]
"""

from . import lr_scheduler
from .algorithms import SGD, Adadelta, Adagrad, Adam, AdamW, RMSprop
from .lbfgs import LBFGS
from .optimizer import GraphUpdates, Optimizer

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "GraphUpdates", "Optimizer", "RMSprop",
           "lr_scheduler"]
__all__ += ["LBFGS"]  # eager mode only: its closure re-evaluates the loss
