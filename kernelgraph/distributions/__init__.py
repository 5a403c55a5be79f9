"""``torch.distributions``: :class:`Categorical`, :class:`Normal` and :class:`Multinomial`,
composed from kernelgraph's ops, so ``log_prob``, ``entropy`` and ``rsample`` have gradients
(a policy gradient's ``-dist.log_prob(action) * reward``, a VAE's reparameterised sample).

Samples come from PyTorch's generator the way PyTorch draws them (``torch.multinomial`` for
the categorical ones, ``normal_`` for the normal), so a seeded program samples what PyTorch
samples. ``Categorical(probs=...)`` normalises ``probs`` over the last dimension;
``logits=...`` are normalised log-probabilities (``logits - logsumexp``).

>>> import kernelgraph as kg
>>> from kernelgraph.distributions import Categorical, Normal
>>> d = Categorical(probs=kg.tensor([0.25, 0.25, 0.5]))
>>> round(float(d.log_prob(kg.tensor(2))), 4), round(float(d.entropy()), 4)
(-0.6931, 1.0397)
>>> n = Normal(kg.tensor(0.0), kg.tensor(1.0))
>>> round(float(n.log_prob(kg.tensor(0.0))), 4)
-0.9189
"""

from . import categorical, distribution, multinomial, normal
from .categorical import Categorical
from .distribution import Distribution
from .multinomial import Multinomial
from .normal import Normal

__all__ = ["Categorical", "Distribution", "Multinomial", "Normal", "categorical",
           "distribution", "multinomial", "normal"]
