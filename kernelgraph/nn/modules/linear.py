"""``torch.nn.modules.linear``: the linear layers."""

from ..attention import NonDynamicallyQuantizableLinear
from ..extras import LazyLinear
from ..layers import Identity, Linear

__all__ = ["Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]
