"""Record what ``torch.save`` does when its path is a symbolic link into ``save_links.json``
(read by tests/test_checkpoint.py).

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_save_links.py

Each case lays out files and links in a fresh directory, saves through ``path``, and records
the layout afterwards: for every name, ``"link -> <where it points>"`` or ``"file"`` (and
which saved object ``torch.load`` reads through it: ``"old"`` or ``"new"``).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

# name -> what it is before the save: a link target ("-> x") or "file" (an old checkpoint).
CASES = {
    "link to a file": ({"real.pt": "file", "link.pt": "-> real.pt"}, "link.pt"),
    "dangling link": ({"link.pt": "-> new.pt"}, "link.pt"),
    "chain of links": ({"real.pt": "file", "mid.pt": "-> real.pt", "link.pt": "-> mid.pt"},
                       "link.pt"),
    "link into a subdirectory": ({"sub/real.pt": "file", "link.pt": "-> sub/real.pt"},
                                 "link.pt"),
    "linked directory": ({"sub/real.pt": "file", "d": "-> sub"}, "d/real.pt"),
}


def layout(root: Path, load) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath, name)
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link -> " + os.readlink(p)
            elif p.is_file():
                out[rel] = "file " + load(p)
    return dict(sorted(out.items()))


def main() -> None:
    import torch

    def load(p) -> str:
        return "new" if torch.load(p)["w"].tolist() == [2.0] else "old"

    out: dict = {"torch": torch.__version__, "cases": {}}
    for case, (before, path) in CASES.items():
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            for name, what in before.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                if what == "file":
                    torch.save({"w": torch.tensor([1.0])}, root / name)
                else:
                    os.symlink(what[3:], root / name)
            torch.save({"w": torch.tensor([2.0])}, root / path)
            out["cases"][case] = {"before": before, "path": path, "after": layout(root, load)}
    target = Path(__file__).with_name("save_links.json")
    target.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
