"""``torch.utils.data.dataloader``: where PyTorch defines ``DataLoader`` and
``default_collate`` (``from torch.utils.data.dataloader import default_collate``).

>>> default_collate([(1, 2.0), (3, 4.0)])
[tensor([1, 3]), tensor([2., 4.], dtype=torch.float64)]
"""

from .loader import DataLoader, default_collate

__all__ = ["DataLoader", "default_collate"]
