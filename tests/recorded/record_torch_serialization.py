"""Record ``torch.serialization``'s allow-list functions (``safe_globals``,
``add_safe_globals``, ``get_safe_globals``, ``clear_safe_globals``) and a ``torch.load``
inside ``safe_globals`` into ``torch_serialization.json`` (read by
tests/test_serialization_face.py). The same case runs on kernelgraph with ``S`` its
``kg.serialization``. PyTorch's list also holds classes of its own, which kernelgraph has
not: the case reports only the entries it added itself.

    python tests/recorded/record_torch_serialization.py
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


class Foo:
    pass


class Bar:
    pass


def mine(entries) -> list:
    names = []
    for e in entries:
        if e is Foo or e is Bar:
            names.append(e.__name__)
        elif isinstance(e, tuple) and e[0] in (Foo, Bar):
            names.append([e[0].__name__, e[1]])
    return names


def case(torch, S) -> dict:
    S.clear_safe_globals()
    rec = {}
    with S.safe_globals([Foo, (Bar, "mod.Bar")]):
        rec["inside"] = mine(S.get_safe_globals())
    rec["after"] = mine(S.get_safe_globals())
    S.add_safe_globals([Foo])
    rec["added"] = mine(S.get_safe_globals())
    S.clear_safe_globals()
    rec["cleared"] = S.get_safe_globals()
    try:
        with S.safe_globals(Foo):
            pass
    except TypeError as e:
        rec["not_a_list"] = str(e)
    path = os.path.join(tempfile.mkdtemp(), "m.pt")
    torch.save({"w": torch.ones(2)}, path)
    with S.safe_globals([Foo]):
        loaded = torch.load(path, weights_only=True)
    rec["loaded"] = {k: v.tolist() for k, v in loaded.items()}
    return rec


def main() -> None:
    import torch  # noqa: PLC0415 - only the recording environment has torch
    import torch.serialization  # noqa: PLC0415

    out = {"versions": {"torch": torch.__version__},
           "case": case(torch, torch.serialization)}
    path = Path(__file__).with_name("torch_serialization.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
