"""Record what real PyTorch gives for the names census.py marks (or marked) ``differs``,
for tests/test_census.py: ``torch.gather``, which kernelgraph's gather now agrees with. Run
it with a Python that has torch (tests/recorded/README.md)::

    python tests/conformance/census/record_differs.py    # rewrites differs.json

torch is imported inside ``main()``, so pytest's doctest collection can import this file
without it."""
import json
from pathlib import Path


def main() -> None:
    import torch

    x = [[1.0, 2.0], [3.0, 4.0]]
    index = [[0, 0], [1, 0]]
    gathered = torch.gather(torch.tensor(x), 1, torch.tensor(index)).tolist()
    record = {"torch": torch.__version__,
              "torch.gather": {"input": x, "dim": 1, "index": index, "result": gathered}}
    Path(__file__).with_name("differs.json").write_text(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
