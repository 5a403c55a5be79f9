"""Record what real PyTorch's ``torch.utils.tensorboard.SummaryWriter`` writes: the Summary
protobufs of ``add_scalar``, ``add_histogram``, ``add_image`` and ``add_text`` (as protobuf's
JSON form, an image's PNG as its decoded pixels), read back from the event file with
TensorBoard's own record reader (raw, without its migration to tensors), and the module
scopes of ``add_graph``'s GraphDef, into ``torch_summary.json`` (read by
tests/test_tensorboard.py).

torch needs the ``tensorboard`` package for this (not a dependency of the test run); with an
environment that has torch and tensorboard (see README.md here)::

    python tests/recorded/record_torch_summary.py
"""

from __future__ import annotations

import base64
import io
import json
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
VALUES = [-3.5, -1.0, -1e-13, 0.0, 0.0, 2e-12, 0.5, 0.5, 1.0, 7.25, 1000.0]
CHW = [[[0.0, 0.25], [0.5, 1.0]], [[1.0, 0.75], [0.2, 0.0]], [[0.1, 0.9], [0.4, 0.6]]]
HWC_UINT8 = [[[0, 255, 7]], [[128, 1, 64]]]


def _decoded(summary: dict) -> dict:
    import numpy as np
    from PIL import Image
    for value in summary.get("value", []):
        image = value.get("image")
        if image is not None:
            png = base64.b64decode(image.pop("encodedImageString"))
            image["pixels"] = np.asarray(Image.open(io.BytesIO(png))).tolist()
    return summary


def main():
    import torch
    from google.protobuf.json_format import MessageToDict
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from torch import nn
    from torch.utils.tensorboard import SummaryWriter

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(3, 4)
            self.act = nn.ReLU()
            self.head = nn.Sequential(nn.Linear(4, 2), nn.Tanh())

        def forward(self, x):
            return self.head(self.act(self.fc1(x)))

    logdir = tempfile.mkdtemp()
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("loss", 0.125, 3)
        writer.add_histogram("weights", torch.tensor(VALUES, dtype=torch.float64), 4)
        writer.add_image("chw", torch.tensor(CHW), 5)
        writer.add_image("hwc_uint8", torch.tensor(HWC_UINT8, dtype=torch.uint8), 6,
                         dataformats="HWC")
        writer.add_text("note", "hello *world*", 7)
        writer.add_images("batch", torch.arange(12, dtype=torch.float32).reshape(3, 1, 2, 2) / 11,
                          8)
        writer.add_graph(Net(), torch.zeros(2, 3))
    events = {}
    scopes = set()
    file = next(Path(logdir).glob("events.out.tfevents.*"))
    for record in RawEventFileLoader(str(file)).Load():
        event = Event.FromString(record)
        if event.HasField("summary"):
            for value in event.summary.value:
                events[value.tag] = {"step": event.step,
                                     "summary": _decoded(MessageToDict(type(event.summary)(
                                         value=[value])))}
        elif event.graph_def:
            from tensorboard.compat.proto.graph_pb2 import GraphDef
            for node in GraphDef.FromString(event.graph_def).node:
                scopes.add(node.name.rpartition("/")[0])
    out = {"versions": {"torch": torch.__version__}, "values": VALUES, "chw": CHW,
           "hwc_uint8": HWC_UINT8, "events": events, "graph_scopes": sorted(scopes)}
    (HERE / "torch_summary.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
