"""``tf.data`` iterators: one-shot, initializable and reinitializable (``from_structure``).

``iterator.get_next()`` is one ``iterator_get_next`` node (stateful, on the host: the
compiler never folds, merges or skips it) whose value is the next element, and one
``output`` node per component, arranged as the element: those are what you fetch. Every
``Session.run`` that computes it advances the iterator once, whichever components it
fetches; at the end it raises ``tf.errors.OutOfRangeError``, as TF does.
``iterator.initializer`` (an ``iterator_init`` node) starts the pipeline again on the
current values of the tensors the dataset reads (placeholders fed to that run).

As in TF, each Session has its own position in the iterator (two sessions on one graph
each start from the first element).
"""

from __future__ import annotations

import types
import weakref

from ... import errors
from ...dtypes import as_dtype
from ...errors import FailedPreconditionError, where
from ...graph import Node, get_default_graph, user_location
from ...static.control_flow import iterator_get_next_op, iterator_init_op
from ...static.control_flow.tracing import CPU, tuple_outputs
from ...static.session import running_session
from .data import Dataset
from .structure import Spec, flat, flat_up_to, pack
from .tensor_shape import TensorShape

OutOfRangeError = errors.OutOfRangeError  # tf.errors.OutOfRangeError: the end of a dataset


def _running_session():
    """The Session whose ``run`` is computing the node calling this (the key of its
    per-Session state)."""
    session = running_session()
    return _NO_SESSION if session is None else session


class _NoSession:
    """The key of a pipeline run outside any Session (a plan called directly)."""


_NO_SESSION = _NoSession()


class _Start:
    """The spec of an ``iterator_init`` node: start ``iterator`` on ``dataset``."""

    def __init__(self, iterator, dataset, inputs):
        self.iterator, self.dataset, self.inputs = iterator, dataset, inputs

    def start(self, values):
        env = {id(n): v for n, v in zip(self.inputs, values)}
        self.iterator._elements[_running_session()] = self.dataset._iterate(env)

    def __repr__(self):
        return f"<start of {self.iterator!r}>"


class _Next:
    """The spec of an ``iterator_get_next`` node: the iterator's next element."""

    def __init__(self, iterator):
        self.iterator = iterator
        self.node = None

    def next(self, values):
        it = self.iterator
        session = _running_session()
        if session not in it._elements:
            if it._one_shot is None:
                raise FailedPreconditionError(
                    "GetNext() failed because the iterator has not been initialized. Ensure "
                    "that you have run the initializer operation for this iterator before "
                    f"getting the next element.{where(self.node.location)}", node=self.node)
            it._one_shot.start([n.attrs["value"] for n in it._one_shot.inputs])
        try:
            element = next(it._elements[session])
        except StopIteration:
            raise OutOfRangeError(f"End of sequence\n  [[node {self.node.name}]]"
                                  f"{where(self.node.location)}", node=self.node) from None
        return flat(element)

    def __repr__(self):
        return f"<next of {self.iterator!r}>"


class Iterator:
    """A ``tf.data.Iterator`` (see the module docstring)."""

    def __init__(self, spec, graph):
        self._spec = spec
        self._graph = graph
        # The running pipeline (a generator of elements) of each Session, as TF keeps an
        # iterator's position per session.
        self._elements: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._one_shot = None  # the _Start of a one-shot iterator
        self._initializer = None

    # -- making one ------------------------------------------------------------------
    @classmethod
    def one_shot(cls, dataset: Dataset) -> Iterator:
        inputs = dataset._inputs()
        for n in inputs:
            if n.op.name != "const":
                raise ValueError(
                    "Failed to create a one-shot iterator for a dataset. "
                    "`Dataset.make_one_shot_iterator()` does not support datasets that "
                    f"capture stateful objects, such as a `Variable` or `LookupTable` (it "
                    f"reads '{n.name}', op {n.op.name}). In these cases, use "
                    "`Dataset.make_initializable_iterator()`.")
        it = cls(dataset._spec, get_default_graph())
        it._one_shot = _Start(it, dataset, inputs)
        return it

    @classmethod
    def initializable(cls, dataset: Dataset) -> Iterator:
        it = cls(dataset._spec, get_default_graph())
        it._initializer = it.make_initializer(dataset, name="MakeIterator")
        return it

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None) -> Iterator:
        """An iterator of elements of this structure, for any dataset of it (each started
        by its own ``iterator.make_initializer(dataset)``)."""
        types_ = flat(output_types)
        shapes = flat_up_to(output_types, output_shapes) if output_shapes is not None else \
            [None] * len(types_)
        spec = pack(output_types, [Spec(as_dtype(t), s) for t, s in zip(types_, shapes)])
        return Iterator(spec, get_default_graph())

    # -- using one -------------------------------------------------------------------
    @property
    def initializer(self) -> Node:
        """The node that (re)starts this iterator."""
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset: Dataset, name=None) -> Node:
        """A node that starts this iterator on ``dataset`` (of this iterator's structure)."""
        mine, theirs = flat(self._spec), flat(dataset._spec)
        if len(mine) != len(theirs) or any(a.dtype != b.dtype for a, b in zip(mine, theirs)):
            raise TypeError(f"Expected output types {self.output_types} but got dataset with "
                            f"output types {dataset.output_types}.")
        inputs = dataset._inputs()
        spec = _Start(self, dataset, inputs)
        return self._graph.add_node(iterator_init_op, tuple(inputs), {"spec": spec}, (),
                                    iterator_init_op.infer(None, None, None)[1],
                                    name or "make_initializer", user_location(2), device=CPU)

    def get_next(self, name=None):
        """Graph tensors arranged as the element: each run computing them gives the next
        element (``tf.errors.OutOfRangeError`` after the last)."""
        spec = _Next(self)
        location = user_location(2)
        graph = get_default_graph()  # a loop body's: one element per iteration, as in TF
        if getattr(graph, "root", None) is not self._graph:
            graph = self._graph
        node = graph.add_node(iterator_get_next_op, (), {"spec": spec}, None,
                                    iterator_get_next_op.infer(None, None, None)[1],
                                    name or "IteratorGetNext", location, device=CPU)
        spec.node = node
        leaves = flat(self._spec)
        outs = tuple_outputs(node, [s.shape for s in leaves], [s.dtype for s in leaves],
                             location)
        return pack(self._spec, outs)

    @property
    def output_types(self):
        return pack(self._spec, [as_dtype(s.dtype) for s in flat(self._spec)])

    @property
    def output_shapes(self):
        return pack(self._spec, [TensorShape(s.shape) for s in flat(self._spec)])

    @property
    def output_classes(self):
        return pack(self._spec, [Node for _ in flat(self._spec)])

    element_spec = output_shapes

    def string_handle(self, name=None):
        raise NotImplementedError("feedable iterators (string_handle) are not implemented; "
                                  "use Iterator.from_structure and make_initializer")

    def __repr__(self):
        return f"<tf.data.Iterator types: {self.output_types}>"


Dataset._iterator_class = Iterator


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """``tf.data.make_one_shot_iterator(dataset)``."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Dataset, shared_name=None) -> Iterator:
    """``tf.data.make_initializable_iterator(dataset)``."""
    return dataset.make_initializable_iterator()


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    return dataset_or_iterator.output_classes


data = types.SimpleNamespace(
    Dataset=Dataset, Iterator=Iterator, make_one_shot_iterator=make_one_shot_iterator,
    make_initializable_iterator=make_initializable_iterator,
    get_output_types=get_output_types, get_output_shapes=get_output_shapes,
    get_output_classes=get_output_classes,
)
"""The ``tf.data`` namespace."""

__all__ = ["OutOfRangeError", "data"]
