"""``StepWidget``: a graph widget whose buttons drive a :class:`Stepper` in the kernel.

The view (``StepView`` in ``extension/src/widget.ts``) draws the ``graph`` trait like
``GraphView`` and adds Step / Run to end / Reset buttons; a click on a node runs up to it.
Each button sends a message (``{"action": "step"}``, ``"run"``, ``"reset"``, or
``{"action": "run_to", "node": id}``); the kernel runs the stepper and sends the new
document, in which the node that ran last is the highlighted step and the one to run next
is outlined.

>>> import kernelgraph as kg
>>> g = kg.Graph()
>>> with g.as_default():
...     a = kg.placeholder(kg.float32, name="a")
...     c = kg.multiply(a, 3.0, name="c")
>>> from kernelgraph.static.stepper import Stepper
>>> w = StepWidget(Stepper(kg.Session(g), c, {a: 2.0}))
>>> w.step_once(); w.graph["stepper"]["done"], w.graph["steps"][-1]["value"]
(True, '6')
"""

from __future__ import annotations

import traitlets

from ..errors import OpError
from ..static.stepper import Stepper, StepperError
from .document import node_id
from .stepper import stepper_document
from .widget import GraphWidget


class StepWidget(GraphWidget):
    """The live step-through view of ``stepper`` (see the module docstring).

    ``message`` holds the last thing the learner should read (an error at a node, or why a
    button did nothing); the document's ``stepper`` section holds the run's state.
    """

    _view_name = traitlets.Unicode("StepView").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)

    def __init__(self, stepper: Stepper, **kwargs):
        if not isinstance(stepper, Stepper):
            raise TypeError(f"StepWidget needs a kg Stepper (sess.step(fetches, feed_dict)), "
                            f"got {type(stepper).__name__}")
        super().__init__(stepper_document(stepper), **kwargs)
        self.stepper = stepper
        self.on_msg(self._on_message)

    # -- driving from Python (the buttons call the same) ---------------------------------------
    # (not ``step``: that is the synced animation position every graph widget has)
    def step_once(self) -> None:
        """Run the next node."""
        self._do(self.stepper.step)

    def run(self) -> None:
        """Run to the end."""
        self._do(self.stepper.run)

    def reset(self) -> None:
        """Start the run again."""
        self._do(self.stepper.reset)

    def run_to(self, target) -> None:
        """Run up to and including ``target`` (a node, its name, or its document id)."""
        if isinstance(target, str):
            by_id = {node_id(n): n for n in self.stepper.plan.order}
            target = by_id.get(target, target)
        self._do(lambda: self.stepper.run_to(target))

    def _do(self, action) -> None:
        message = ""
        try:
            action()
        except (OpError, StepperError, ValueError, TypeError) as e:
            # Shown in the view (and kept in the document): a button must never raise
            # into the kernel's log where the learner does not look.
            message = str(e)
        except Exception as e:  # noqa: BLE001 - an error a kernel raised, already explained
            message = f"{type(e).__name__}: {e}"
        self.message = message
        self.graph = stepper_document(self.stepper)
        self.step = -1  # follow the run: show its newest state

    def _on_message(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict):
            return
        action = content.get("action")
        if action == "step":
            self.step_once()
        elif action == "run":
            self.run()
        elif action == "reset":
            self.reset()
        elif action == "run_to" and isinstance(content.get("node"), str):
            self.run_to(content["node"])

    def __repr__(self):
        return f"StepWidget({self.stepper!r})"
