"""``kg.cuda``: is a GPU here? (PyTorch's ``torch.cuda`` names.)

>>> import kernelgraph as kg
>>> isinstance(kg.cuda.is_available(), bool)
True
"""

from .devices import cuda_device_count as device_count
from .devices import cuda_is_available as is_available
from .devices import cuda_synchronize as synchronize

__all__ = ["device_count", "is_available", "synchronize"]
