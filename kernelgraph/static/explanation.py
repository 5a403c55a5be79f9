"""What the static compiler did to one run, as ``Session.explain`` reports it: each pass's
result (:class:`PassResult`) and the whole story (:class:`Explanation`).

A notebook draws an Explanation as the compiler view. That view lives in
:mod:`kernelgraph.widgets.compiler`, floors above the compiler, so it registers its drawing
in :data:`DISPLAY` when imported (as ``import kernelgraph`` does) instead of being imported
from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

#: ``"explanation"`` -> ``(Explanation) -> MIME bundle``: filled by kernelgraph.widgets.compiler.
DISPLAY: dict[str, Callable] = {}


@dataclass
class PassResult:
    """What one pass did, for ``Session.explain``."""

    name: str
    before: int
    after: int
    changes: list = field(default_factory=list)  # short texts: "folded mul", "a -> b"
    seconds: float = 0.0
    nodes: list = field(default_factory=list, repr=False)  # the program after this pass
    fetches: list = field(default_factory=list, repr=False)


@dataclass
class Explanation:
    """``Session.explain``: the passes' results, the nodes before and after, the plan."""

    passes: list
    before: list
    after: list
    source: str
    compile_seconds: float
    memory: object = None  # the plan's memory.MemoryPlan (None for a traced plan)
    # One run of the plan (the best of three), measured when it has no side effects (no
    # assigns, no random draws) and the fed values were given; else None.
    run_seconds: float | None = None
    skipped: tuple = ()  # passes switched off (Session(skip_passes=...))
    # The plan's DevicePlan (kernelgraph.static.device_plan) when it has CUDA nodes: what
    # it records and replays, its buffers, segments and CUDA graphs; else None.
    device: object = None

    def device_summary(self) -> str:
        """How the plan runs on the GPU (empty for a plan with no CUDA node): launches
        bound once, buffers reused, segments around live nodes, captured or why not."""
        return self.device.summary() if self.device is not None else ""

    def summary(self) -> str:
        """One line per pass: node counts and (the first few) changes."""
        lines = []
        for r in self.passes:
            shown = ", ".join(r.changes[:4]) + (f", ... ({len(r.changes)})"
                                                if len(r.changes) > 4 else "")
            lines.append(f"{r.name:<16} {r.before} -> {r.after} nodes  {shown}".rstrip())
        return "\n".join(lines)

    def timing(self) -> str:
        """Compile time against run time: how many runs pay for the compilation."""
        text = f"compiled in {self.compile_seconds * 1e3:.2f} ms"
        if self.run_seconds:
            text += (f"; one run takes {self.run_seconds * 1e6:.1f} us (compiling costs "
                     f"{self.compile_seconds / self.run_seconds:.0f} runs)")
        return text

    @property
    def kernels(self) -> dict:
        """The generated source of each fused kernel, by the name of the node it computes."""
        return {n.name: n.op.source for n in self.after if n.op.members is not None}

    @property
    def origins(self) -> dict:
        """Where each fused kernel came from, by the name of the node it computes:
        ``"compiled"`` (numba compiled it and kept it on disk), ``"loaded from cache"``
        (compiled by an earlier process: see :func:`kernelgraph.static.fusion.cache_dir`),
        or ``"reused in this process (...)"``."""
        return {n.name: getattr(n.op.forward, "origin", "") or "compiled"
                for n in self.after if n.op.members is not None}

    def cache_summary(self) -> str:
        """One line per fused kernel: ``fused kernel fused_1a2b3c4d (w_update): compiled``."""
        ops = {n.name: n.op.name for n in self.after if n.op.members is not None}
        return "\n".join(f"fused kernel {ops[name]} ({name}): {origin}"
                         for name, origin in self.origins.items())

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict | None:
        """Notebooks draw the compiler view (kernelgraph.widgets.compiler registers it);
        without it, the text of :meth:`__str__`."""
        draw = DISPLAY.get("explanation")
        return draw(self) if draw is not None else {"text/plain": str(self)}

    def __str__(self):
        fused = "".join(f"\n# {name}\n{src}" for name, src in self.kernels.items())
        memory = f"\nmemory: {self.memory.summary()}" if self.memory is not None else ""
        device = f"\n{self.device_summary()}" if self.device is not None else ""
        cache = f"\n{self.cache_summary()}" if self.origins else ""
        return (f"{self.summary()}\n{self.timing()}{cache}{memory}{device}\n\n{self.source}"
                f"{fused}")
