"""Event files that TensorBoard reads: PyTorch's ``SummaryWriter``, and the event-file writer
TF1's ``tf.summary.FileWriter`` shares with it.

The records are written by TensorBoard's own ``EventFileWriter``
(``tensorboard.summary.writer.event_file_writer``): one ``events.out.tfevents.*`` file per
writer in ``log_dir``, Event protobufs in TFRecord framing, flushed by a background thread
(every ``flush_secs``, on ``flush()`` and on ``close()``).
"""

from __future__ import annotations

import atexit
import os
import time
import weakref
from datetime import datetime

import numpy as np

from . import summaries as S
from .graphs import eager_graph_def

# The writers still open. TensorBoard's writer thread is a daemon, so what it holds when a
# script ends without close() (as tutorial scripts often do) would be lost: it is written
# at exit instead.
_OPEN: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_open_writers() -> None:
    for writer in list(_OPEN):
        writer.close()


class EventWriter:
    """An event file in ``logdir``: ``add_summary(summary, step)``, ``add_graph_def``,
    ``flush()``, ``close()``; one not closed is closed when the program ends."""

    def __init__(self, logdir, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = ""):
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        self.logdir = str(logdir)
        self._writer = EventFileWriter(self.logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        _OPEN.add(self)

    def get_logdir(self) -> str:
        return self.logdir

    def add_event(self, event) -> None:
        if self._closed:  # reopened, as TF1's and PyTorch's writers do after close()
            from tensorboard.summary.writer.event_file_writer import EventFileWriter
            self._writer = EventFileWriter(self.logdir)
            self._closed = False
            _OPEN.add(self)
        self._writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        """Write a Summary (a protobuf, or its serialized bytes as a Session fetches them)."""
        if isinstance(summary, bytes | bytearray | np.bytes_):
            summary = S.protos().summary.Summary.FromString(bytes(summary))
        elif isinstance(summary, np.ndarray) and summary.dtype == object and summary.ndim == 0:
            return self.add_summary(summary.item(), global_step, walltime)
        self._event(global_step, walltime, summary=summary)

    def add_graph_def(self, graph_def, global_step=None, walltime=None) -> None:
        self._event(global_step, walltime, graph_def=graph_def.SerializeToString())

    def _event(self, step, walltime, **fields) -> None:
        event = S.protos().event.Event(wall_time=time.time() if walltime is None else walltime,
                                       **fields)
        if step is not None:
            event.step = int(step)
        self.add_event(event)

    def flush(self) -> None:
        if not self._closed:
            self._writer.flush()

    def close(self) -> None:
        if not self._closed:
            self._writer.close()
            self._closed = True
            _OPEN.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _numpy(x) -> np.ndarray:
    """A tensor, array, list or number as a NumPy array (a tensor's values, detached)."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return np.asarray(x.detach().cpu().numpy())
    return np.asarray(x)


def _hwc(img: np.ndarray, dataformats: str) -> np.ndarray:
    """An image in ``dataformats`` ('CHW', 'HWC', 'HW') as HWC (PyTorch's convert_to_HWC)."""
    dataformats = dataformats.upper()
    if len(dataformats) != img.ndim:
        raise ValueError(f"size of input tensor and input format are different. tensor "
                         f"shape: {img.shape}, input_format: {dataformats}")
    if dataformats == "HW":
        return img[:, :, None]
    order = [dataformats.index(c) for c in "HWC"]
    return img.transpose(order)


class SummaryWriter:
    """PyTorch's ``torch.utils.tensorboard.SummaryWriter``: an event file in ``log_dir``
    (default ``runs/<date>_<host><comment>``) that TensorBoard reads.

    >>> import tempfile, kernelgraph as kg
    >>> from kernelgraph.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
    ...     for step in range(3):
    ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: float = 120, filename_suffix: str = ""):
        if not log_dir:
            import socket
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self._options = (max_queue, flush_secs, filename_suffix)
        self.file_writer = EventWriter(self.log_dir, *self._options)
        self.all_writers = {self.log_dir: self.file_writer}

    def get_logdir(self) -> str:
        return self.log_dir

    def _write(self, summary, global_step, walltime) -> None:
        self.file_writer.add_summary(summary, global_step, walltime)

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """Write one value of the curve ``tag`` at ``global_step``."""
        self._write(S.scalar(tag, _numpy(scalar_value)), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None,
                    walltime=None) -> None:
        """Several curves in one chart: each in its own run directory
        '<log_dir>/<main_tag>_<tag>', tagged ``main_tag`` (PyTorch's layout)."""
        for tag, value in tag_scalar_dict.items():
            path = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = EventWriter(path, *self._options)
            writer.add_summary(S.scalar(main_tag, _numpy(value)), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow",
                      walltime=None, max_bins=None) -> None:
        """The distribution of ``values`` (PyTorch's buckets: :func:`summaries.torch_histogram`)."""
        self._write(S.torch_histogram(tag, _numpy(values), bins), global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None,
                  dataformats: str = "CHW") -> None:
        """One image, CHW by default, floats in [0, 1] (scaled by 255) or uint8."""
        self._write(_image_summary(tag, _numpy(img_tensor), dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None,
                   dataformats: str = "NCHW") -> None:
        """A batch of images tiled into one grid image (PyTorch's make_grid of 8 columns)."""
        imgs = _numpy(img_tensor)
        self._write(_image_summary(tag, _grid(imgs, dataformats), "HWC"), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Text (markdown) shown in TensorBoard's text tab; tagged '<tag>/text_summary'."""
        # a string tensor of shape [1], as PyTorch writes it
        self._write(S.text(f"{tag}/text_summary", [text_string]), global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The graph of one forward pass of ``model`` on ``input_to_model`` (a tensor or a
        tuple of them), recorded as it ran, with one scope per module."""
        if input_to_model is None:
            input_to_model = ()
        graph_def, _ = eager_graph_def(model, input_to_model)
        self.file_writer.add_graph_def(graph_def)

    def flush(self) -> None:
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        for writer in self.all_writers.values():
            writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _image_summary(tag, img: np.ndarray, dataformats: str):
    """PyTorch's image(): HWC; floats times 255, clipped to [0, 255] and truncated; uint8 as
    it is."""
    img = _hwc(img, dataformats)
    if img.dtype != np.uint8:
        img = np.clip(img.astype(np.float32) * np.float32(255.0), 0, 255).astype(np.uint8)
    pb = S.protos().summary
    return pb.Summary(value=[S.image_value(tag, img)])


def _grid(imgs: np.ndarray, dataformats: str, ncols: int = 8) -> np.ndarray:
    """A batch as one HWC image: ``ncols`` images a row, in order, black where none."""
    order = [dataformats.upper().index(c) for c in "NHWC"] if "C" in dataformats.upper() \
        else None
    if order is None:
        imgs = imgs.transpose([dataformats.upper().index(c) for c in "NHW"])[..., None]
    else:
        imgs = imgs.transpose(order)
    n, h, w, c = imgs.shape
    if c == 1:
        imgs = np.repeat(imgs, 3, axis=-1)
        c = 3
    cols = min(n, ncols)
    rows = -(-n // cols)
    out = np.zeros((rows * h, cols * w, c), imgs.dtype)
    for i in range(n):
        r, k = divmod(i, cols)
        out[r * h:(r + 1) * h, k * w:(k + 1) * w] = imgs[i]
    return out
