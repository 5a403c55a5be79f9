"""TF1's queues and the threads that fill them: ``tf.FIFOQueue``, ``tf.RandomShuffleQueue``,
``tf.train.QueueRunner``, ``tf.train.Coordinator`` and ``tf.train.start_queue_runners``.

A queue is state of the graph, kept per Session as TF keeps it: ``q.enqueue(...)``,
``q.enqueue_many``, ``q.dequeue()``, ``q.dequeue_many(n)``, ``q.dequeue_up_to(n)``,
``q.size()`` and ``q.close()`` are graph ops (stateful host ops of the TF1 face, on the CPU)
that change or read the queue of the Session running them. A dequeue waits while the queue
is empty (a RandomShuffleQueue: while it holds no more than ``min_after_dequeue``), an
enqueue while it is full; after ``close()`` an enqueue raises ``tf.errors.CancelledError``
and a dequeue that cannot be served ``tf.errors.OutOfRangeError``, as in TF.

A :class:`QueueRunner` holds enqueue ops that threads run in a loop (``sess.run(op)``) until
one raises OutOfRangeError (an input producer ran out of epochs: the queue is closed) or the
:class:`Coordinator` asks them to stop; an error is reported to the coordinator, whose
``join`` raises it in the main thread. ``tf.train.start_queue_runners`` starts the runners of
the graph's ``QUEUE_RUNNERS`` collection.

One deliberate difference: where TF waits forever on an empty queue that nothing fills (the
classic missing ``start_queue_runners``), kernelgraph raises
``tf.errors.DeadlineExceededError`` once no thread has changed the queue for
:data:`STALLED_AFTER` seconds and no queue runner is filling it, with a message that says so.

>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     q = tf.FIFOQueue(3, [tf.int32], shapes=[[]])
...     with tf.Session() as sess:
...         sess.run(q.enqueue_many([[1, 2, 3]]))
...         sess.run(q.close())
...         print(sess.run(q.dequeue_many(2)), sess.run(q.dequeue()), sess.run(q.size()))
[1 2] 3 0
"""

from __future__ import annotations

import collections
import contextlib
import sys
import threading
import time
import weakref

import numpy as np

from ... import dtypes as D
from ...devices import device
from ...errors import CancelledError, DeadlineExceededError, OpError, OutOfRangeError
from ...graph import Node, get_default_graph, user_location
from ...ops.control import OBJECT, Results
from ...ops.registry import FRONTENDS, define
from ...static.control_flow.tracing import tuple_outputs
from ...static.session import get_default_session, running_session
from .face import operation_of
from .graph_collections import add_to_collection, get_collection
from .tensor_shape import TensorShape
from .tensors import constant

#: seconds a dequeue waits on a queue that nothing changes and no runner fills
STALLED_AFTER = 10.0
QUEUE_RUNNERS = "queue_runners"  # tf.GraphKeys.QUEUE_RUNNERS

_TRAITS = ("stateful", "host_only")


def _session_key():
    session = running_session()
    return _NO_SESSION if session is None else session


class _NoSession:
    """The key of a queue used outside any Session (a plan called directly)."""


_NO_SESSION = _NoSession()


# -- the ops ----------------------------------------------------------------------------------
def _enqueue_forward(*values, spec, many):
    spec._put(values, many)


def _dequeue_forward(*, spec, count, up_to):
    return Results(spec._take(count, up_to))


def _close_forward(*, spec, cancel):
    spec._close(cancel)


queue_enqueue_op = define(
    "queue_enqueue", _enqueue_forward, lambda s, d, a: ((), D.bool_), None, traits=_TRAITS,
    doc="Puts one element (or, many=True, a batch of them) into a queue; its value is None.")
queue_dequeue_op = define(
    "queue_dequeue", _dequeue_forward, lambda s, d, a: (None, OBJECT), None, traits=_TRAITS,
    doc="Takes one element (or count of them, stacked) from a queue (a tuple value).")
queue_size_op = define(
    "queue_size", lambda *, spec: np.int32(spec._size()), lambda s, d, a: ((), D.int32), None,
    traits=_TRAITS, doc="How many elements a queue holds now.")
queue_close_op = define(
    "queue_close", _close_forward, lambda s, d, a: ((), D.bool_), None, traits=_TRAITS,
    doc="Closes a queue (cancel=True: pending enqueues fail); its value is None.")

QUEUE_OPS = ("queue_enqueue", "queue_dequeue", "queue_size", "queue_close")


def _op_node(op, inputs, attrs, name):
    with device("cpu"):  # a host op: made on the CPU whatever the device scope
        node = FRONTENDS[Node](op, tuple(inputs), {**attrs, "name": name})
    return node, operation_of


# -- queues -----------------------------------------------------------------------------------
class _State:
    """One Session's queue: its elements, the condition its waiters wait on, whether it is
    closed (and pending enqueues cancelled), when it last changed, who fills it."""

    def __init__(self, seed, session):
        self.session = weakref.ref(session)
        self.items: collections.deque = collections.deque()
        self.cond = threading.Condition()
        self.closed = self.cancelled = False
        self.changed = time.monotonic()
        self.runners = 0
        self.rng = np.random.default_rng(seed)

    def session_closed(self) -> bool:
        """Whether the Session this state belongs to is closed (or gone): a thread still
        waiting on it then ends, as TF cancels a closed session's pending ops."""
        session = self.session()
        return session is None or getattr(session, "_closed", False)


class QueueBase:
    """What TF1's queues share (see the module docstring)."""

    _kind = "FIFOQueue"

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name=None, seed=None):
        if names is not None:
            raise NotImplementedError("queues with names= (dict elements) are not supported; "
                                      "enqueue lists or tuples")
        types_ = list(dtypes) if isinstance(dtypes, list | tuple) else [dtypes]
        self._dtypes = [D.as_dtype(t) for t in types_]
        if shapes is None:
            self._shapes = [None] * len(self._dtypes)
        else:
            shapes = list(shapes)
            if len(shapes) != len(self._dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes: "
                                 f"{len(shapes)} shapes for {len(self._dtypes)} dtypes")
            self._shapes = [tuple(TensorShape(s).as_list()) for s in shapes]
        self._capacity = int(capacity)
        self._seed = seed
        graph = get_default_graph()
        self._name = graph.unique_name(name or self._kind.lower())
        self._short = self._name.rpartition("/")[2]  # its ops' names start so, as TF's
        self._states: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    # -- what it is ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtypes(self) -> list:
        return list(self._dtypes)

    @property
    def shapes(self) -> list:
        return [TensorShape(s) for s in self._shapes]

    @property
    def names(self):
        return None

    def __repr__(self):
        return f"<tf.{self._kind} '{self._name}' dtypes={[d.name for d in self._dtypes]}>"

    # -- graph ops ---------------------------------------------------------------------------
    def _components(self, vals, many):
        vals = list(vals) if isinstance(vals, list | tuple) else [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"{self._kind} {self._name!r} holds {len(self._dtypes)} "
                             f"components, got {len(vals)} values to enqueue")
        nodes = []
        for v, dt, shape in zip(vals, self._dtypes, self._shapes):
            node = v if isinstance(v, Node) else constant(v, dtype=dt)
            if node.dtype != dt:
                raise ValueError(f"{self._kind} {self._name!r}: a value of dtype "
                                 f"{node.dtype.name} for a component of dtype {dt.name}")
            got = node.shape
            if shape is not None and got is not None:
                got = got[1:] if many else got
                if len(got) != len(shape) or any(a is not None and b is not None and a != b
                                                 for a, b in zip(got, shape)):
                    raise ValueError(f"Shapes {list(shape)} and {list(got)} are incompatible: "
                                     f"a value enqueued into {self._name!r}")
            nodes.append(node)
        return nodes

    def enqueue(self, vals, name=None):
        """An Operation that puts one element (a value per component) into the queue."""
        node, op = _op_node(queue_enqueue_op, self._components(vals, False),
                            {"spec": self, "many": False}, name or f"{self._short}_enqueue")
        return op(node)

    def enqueue_many(self, vals, name=None):
        """An Operation that puts the rows of ``vals`` (one batch per component) in."""
        node, op = _op_node(queue_enqueue_op, self._components(vals, True),
                            {"spec": self, "many": True}, name or f"{self._short}_EnqueueMany")
        return op(node)

    def _dequeue(self, count, up_to, name):
        node, _ = _op_node(queue_dequeue_op, (), {"spec": self, "count": count,
                                                  "up_to": up_to}, name)
        lead = () if count is None else ((None if up_to else count),)
        shapes = [None if s is None else lead + s for s in self._shapes]
        outs = tuple_outputs(node, shapes, self._dtypes, user_location(3))
        return outs[0] if len(outs) == 1 else outs

    def dequeue(self, name=None):
        """One element (a tensor, or a list of one per component); waits while empty."""
        return self._dequeue(None, False, name or f"{self._short}_Dequeue")

    def dequeue_many(self, n, name=None):
        """``n`` elements stacked; OutOfRangeError if the queue closes with fewer."""
        return self._dequeue(_count(n), False, name or f"{self._short}_DequeueMany")

    def dequeue_up_to(self, n, name=None):
        """Up to ``n`` elements stacked: all that are left once the queue is closed."""
        return self._dequeue(_count(n), True, name or f"{self._short}_DequeueUpTo")

    def size(self, name=None):
        """A scalar int32 tensor: the elements the queue holds now."""
        node, _ = _op_node(queue_size_op, (), {"spec": self}, name or f"{self._short}_Size")
        return node

    def close(self, cancel_pending_enqueues=False, name=None):
        """An Operation that closes the queue (and cancels waiting enqueues if asked)."""
        node, op = _op_node(queue_close_op, (), {"spec": self,
                                                 "cancel": bool(cancel_pending_enqueues)},
                            name or f"{self._short}_Close")
        return op(node)

    def is_closed(self, name=None):
        raise NotImplementedError("queue.is_closed() is not implemented; a dequeue raises "
                                  "tf.errors.OutOfRangeError once a closed queue is empty")

    # -- the state of the running Session ---------------------------------------------------
    def _state(self, key=None) -> _State:
        key = _session_key() if key is None else key
        state = self._states.get(key)
        if state is None:
            with self._lock:
                state = self._states.get(key)
                if state is None:
                    state = self._states[key] = _State(self._seed, key)
        return state

    def _put(self, values, many):
        state = self._state()
        if many:
            arrays = [np.asarray(v, dtype=dt) for v, dt in zip(values, self._dtypes)]
            rows = {len(a) for a in arrays}
            if len(rows) > 1:
                raise ValueError(f"enqueue_many into {self._name!r}: the components have "
                                 f"{sorted(rows)} rows; they need one number of rows")
            elements = [tuple(np.asarray(a[i], dtype=a.dtype) for a in arrays)
                        for i in range(rows.pop() if rows else 0)]
        else:
            elements = [tuple(np.asarray(v, dtype=dt) for v, dt in zip(values, self._dtypes))]
        for element in elements:
            self._check_shapes(element)
        with state.cond:
            for element in elements:
                while True:
                    if state.closed:
                        raise CancelledError(f"{self._kind} '{self._name}' is closed.")
                    if len(state.items) < self._capacity:
                        break
                    if state.session_closed():
                        # a runner left running when its Session closed: end its thread
                        raise CancelledError(f"Session closed while enqueueing into "
                                             f"{self._kind} '{self._name}'")
                    state.cond.wait(1.0)
                state.items.append(element)
                state.changed = time.monotonic()
                state.cond.notify_all()

    def _check_shapes(self, element):
        for value, shape in zip(element, self._shapes):
            if shape is not None and (value.ndim != len(shape) or any(
                    s is not None and s != v for s, v in zip(shape, value.shape))):
                raise ValueError(f"Shape mismatch in tuple component: expected {list(shape)}"
                                 f", got {list(value.shape)} (queue {self._name!r})")

    def _ready(self, state, count) -> bool:
        return len(state.items) >= count

    def _pick(self, state):
        return state.items.popleft()

    def _take(self, count, up_to):
        state = self._state()
        want = 1 if count is None else count
        with state.cond:
            while not self._ready(state, want):
                if state.closed:
                    if up_to and state.items:
                        want = len(state.items)
                        break
                    raise OutOfRangeError(
                        f"{self._kind} '{self._name}' is closed and has insufficient elements "
                        f"(requested {want}, current size {len(state.items)})")
                if state.session_closed():
                    raise CancelledError(f"Session closed while dequeueing from "
                                         f"{self._kind} '{self._name}'")
                if not state.cond.wait(1.0):
                    self._check_stalled(state)
            elements = [self._pick(state) for _ in range(want)]
            state.changed = time.monotonic()
            state.cond.notify_all()
        if count is None:
            return list(elements[0])
        return [np.stack([e[k] for e in elements]) if elements else
                np.empty((0,), dtype=self._dtypes[k]) for k in range(len(self._dtypes))]

    def _check_stalled(self, state):
        if state.runners == 0 and time.monotonic() - state.changed > STALLED_AFTER:
            raise DeadlineExceededError(
                f"{self._kind} '{self._name}' stayed empty for {STALLED_AFTER:g} s with no "
                "queue runner filling it (TF would wait forever): call "
                "tf.train.start_queue_runners(sess=sess, coord=coord) before reading it")

    def _size(self) -> int:
        return len(self._state().items)

    def _close(self, cancel):
        state = self._state()
        with state.cond:
            state.closed = True
            state.cancelled = state.cancelled or cancel
            state.changed = time.monotonic()
            state.cond.notify_all()


def _count(n) -> int:
    if isinstance(n, Node):
        if n.op.name != "const":
            raise TypeError("dequeue_many: kernelgraph needs n as a number or a constant")
        n = n.attrs["value"]
    n = int(np.asarray(n))
    if n < 0:
        raise ValueError(f"dequeue_many: n must be >= 0, got {n}")
    return n


class FIFOQueue(QueueBase):
    """TF1's ``tf.FIFOQueue(capacity, dtypes, shapes=None)``: elements in the order put."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class RandomShuffleQueue(QueueBase):
    """TF1's ``tf.RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes)``: a
    dequeue takes a random element, and waits until more than ``min_after_dequeue`` remain
    (unless the queue is closed), so what comes out is well mixed."""

    _kind = "RandomShuffleQueue"

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name="random_shuffle_queue"):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name, seed=seed)
        self._min_after_dequeue = int(min_after_dequeue)

    def _ready(self, state, count) -> bool:
        need = count + (0 if state.closed else self._min_after_dequeue)
        return len(state.items) >= need

    def _pick(self, state):
        i = int(state.rng.integers(len(state.items)))
        state.items.rotate(-i)
        return state.items.popleft()


# -- coordinator and runners ------------------------------------------------------------------
class Coordinator:
    """TF1's ``tf.train.Coordinator``: threads poll ``should_stop()``; any thread may
    ``request_stop(ex)``; ``join(threads)`` waits for them and raises the first error
    reported (an OutOfRangeError only stops, as TF treats the end of the input)."""

    def __init__(self, clean_stop_exception_types=None):
        self._clean = tuple(clean_stop_exception_types or (OutOfRangeError,))
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._exc_info = None
        self._registered: list = []
        self._joined = False

    def should_stop(self) -> bool:
        return self._stop.is_set()

    def request_stop(self, ex=None) -> None:
        with self._lock:
            if ex is not None and self._exc_info is None:
                if isinstance(ex, tuple):
                    info = ex
                else:
                    info = sys.exc_info()
                    if info[1] is not ex:
                        raise TypeError("ex must be a tuple or sys.exc_info must return the "
                                        f"current exception: {info}")
                if not isinstance(info[1], self._clean):
                    self._exc_info = info
            self._stop.set()

    def clear_stop(self) -> None:
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop.clear()

    def wait_for_stop(self, timeout=None) -> bool:
        return self._stop.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Run the block; an exception in it asks the threads to stop (and is kept)."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - reported to the coordinator, as TF does
            self.request_stop(ex=sys.exc_info())

    def register_thread(self, thread) -> None:
        with self._lock:
            self._registered.append(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Wait for ``threads`` (and the registered ones) to end after a stop is requested,
        then raise the error a thread reported, if any."""
        threads = list(self._registered) + [t for t in (threads or [])
                                              if t not in self._registered]
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        self._joined = True
        with self._lock:
            self._registered = []
            if self._exc_info is not None:
                raise self._exc_info[1].with_traceback(self._exc_info[2])
        alive = [t.name for t in threads if t.is_alive()]
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: "
                               f"{' '.join(alive)}")

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        with self._lock:
            if self._exc_info is not None:
                raise self._exc_info[1].with_traceback(self._exc_info[2])


class QueueRunner:
    """TF1's ``tf.train.QueueRunner(queue, enqueue_ops)``: ``create_threads(sess, coord)``
    makes one thread per enqueue op, each running it until the coordinator stops it or it
    raises OutOfRangeError (the last to end closes the queue), and one more that cancels
    the queue's waiting enqueues once a stop is requested."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None):
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and a list of enqueue ops")
        self.queue = queue
        self.enqueue_ops = list(enqueue_ops)
        self.close_op = close_op if close_op is not None else queue.close()
        self.cancel_op = cancel_op if cancel_op is not None else \
            queue.close(cancel_pending_enqueues=True)
        self._closed_types = tuple(queue_closed_exception_types or
                                   (OutOfRangeError, CancelledError))
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.queue.name

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        state = _Running(len(self.enqueue_ops))
        threads = [threading.Thread(target=self._run, args=(sess, op, coord, state),
                                    daemon=daemon, name=f"QueueRunnerThread-{self.name}")
                   for op in self.enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, coord, state), daemon=daemon,
                                            name=f"QueueRunnerCloseOnStop-{self.name}"))
        queue_state = self.queue._state(sess)  # the key its ops see: running_session()
        with queue_state.cond:
            queue_state.runners += len(self.enqueue_ops)
        state.queue_state = queue_state
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if start:
                t.start()
        return threads

    def _run(self, sess, op, coord, state):
        try:
            while coord is None or not coord.should_stop():
                try:
                    with self._lock:  # one run of an op at a time: its plan is shared
                        sess.run(op)
                except self._closed_types:
                    if state.finish():
                        with contextlib.suppress(Exception):
                            sess.run(self.close_op)
                    return
                except RuntimeError as e:
                    if "closed Session" in str(e):
                        return
                    raise
        except Exception as e:  # noqa: BLE001 - reported to the coordinator, as TF does
            if coord is None:
                raise
            coord.request_stop(e)
        finally:
            state.done()

    def _close_on_stop(self, sess, coord, state):
        coord.wait_for_stop()
        with contextlib.suppress(Exception):
            sess.run(self.cancel_op)


class _Running:
    """What a runner's threads share: how many still run their op."""

    def __init__(self, count):
        self.left = count
        self.finished = 0
        self.lock = threading.Lock()
        self.queue_state = None

    def finish(self) -> bool:
        with self.lock:
            self.finished += 1
            return self.finished == self.left

    def done(self) -> None:
        qs = self.queue_state
        if qs is not None:
            with qs.cond:
                qs.runners -= 1
                qs.cond.notify_all()


def add_queue_runner(qr, collection=QUEUE_RUNNERS) -> None:
    """TF1's ``tf.train.add_queue_runner``: into the graph's QUEUE_RUNNERS collection."""
    add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=QUEUE_RUNNERS) -> list:
    """TF1's ``tf.train.start_queue_runners``: start the threads of every QueueRunner in
    the graph's collection, in ``sess`` (default: the default session); returns them."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    threads = []
    with sess.graph.as_default():
        runners = get_collection(collection)
    for qr in runners:
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


__all__ = ["Coordinator", "FIFOQueue", "QueueBase", "QueueRunner", "RandomShuffleQueue",
           "add_queue_runner", "start_queue_runners", "OpError"]
