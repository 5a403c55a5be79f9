"""``python -m kernelgraph.bench``: see :mod:`kernelgraph.bench.runner`."""

from .runner import main

if __name__ == "__main__":
    raise SystemExit(main())
