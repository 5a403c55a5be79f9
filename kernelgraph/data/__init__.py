"""``kg.data``: small data sets that work offline, batching, and progress bars.

- :func:`load_digits`: the 8×8 handwritten digits (1797 images, shipped with kernelgraph);
- :func:`sequence_task` and :func:`pad_sequences`: variable-length sequences for RNNs;
- :func:`shapes_images`: square / circle / cross images at any size (train small, test big);
- :func:`expression_trees` and :class:`Expr`: arithmetic trees with exact values;
- :class:`DataLoader`: mini-batches with seeded shuffling (ragged samples come as lists);
- :func:`progress`: the progress bar every long loop in kernelgraph uses (tqdm).
"""

from .digits import load_digits
from .expressions import Expr, expression_trees
from .images import shapes_images
from .loader import DataLoader
from .progress import progress
from .sequences import pad_sequences, sequence_task

__all__ = ["DataLoader", "Expr", "expression_trees", "load_digits", "pad_sequences",
           "progress", "sequence_task", "shapes_images"]
