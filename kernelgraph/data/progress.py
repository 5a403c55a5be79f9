"""Progress bars: the one place kernelgraph makes them, with tqdm.

``tqdm.auto`` picks the notebook widget in Jupyter and a text bar in a terminal. It is
imported on first use, so ``import kernelgraph`` stays fast and the choice is made where the
loop runs. Set ``TQDM_DISABLE=1`` to silence every bar (tqdm reads ``TQDM_*`` variables).
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def progress(iterable: Iterable | None = None, desc: str | None = None,
             total: int | None = None, disable: bool | None = None, leave: bool = True,
             **kwargs):
    """``iterable`` wrapped in a progress bar (a ``tqdm.auto.tqdm``): iterate it as usual.

    ``disable=None`` (the default) follows tqdm's convention: in a terminal the bar shows
    only when the output is a TTY (so logs and CI stay clean); in Jupyter the widget shows.
    ``True`` hides it, ``False`` forces it. Other keyword arguments go to tqdm
    (``unit=``, ``position=``, ...); ``bar.set_postfix(loss=...)`` shows a running value.

    >>> import kernelgraph as kg
    >>> sum(kg.data.progress(range(5), desc="epochs"))    # no TTY here: no bar
    10
    """
    from tqdm.auto import tqdm  # chooses the notebook variant inside Jupyter

    if disable is None and os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true", "yes"):
        disable = True  # tqdm applies its TQDM_* defaults only to arguments not passed
    return tqdm(iterable, desc=desc, total=total, disable=disable, leave=leave, **kwargs)
