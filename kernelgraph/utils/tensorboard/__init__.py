"""``kg.utils.tensorboard`` (``torch.utils.tensorboard``): :class:`SummaryWriter` writes
scalars, histograms, images, text and a model's graph into event files that TensorBoard
reads (``tensorboard --logdir runs``, or ``%load_ext tensorboard`` and
``%tensorboard --logdir runs`` in a notebook). See docs/tensorboard.md.

>>> import tempfile
>>> from kernelgraph.utils.tensorboard import SummaryWriter
>>> writer = SummaryWriter(tempfile.mkdtemp())
>>> writer.add_scalar("loss", 0.25, 0)
>>> writer.close()
"""

from .writer import EventWriter, SummaryWriter

__all__ = ["EventWriter", "SummaryWriter"]
