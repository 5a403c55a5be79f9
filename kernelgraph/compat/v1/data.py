"""``tf.data.Dataset``: TF1's input pipelines (the low-level guide's), run on the host.

A dataset is a description: where its elements come from (arrays, or graph tensors such as
placeholders, read when an iterator is initialised) and the steps after (``map``, ``batch``,
``shuffle``, ``repeat`` ...). An element is a tensor, a tuple or a dict of them (a Python
list is one tensor, as in TF). ``map`` and ``filter`` functions build graph ops on the
element's components: they are traced once into a small graph of their own (as a
``tf.cond`` branch is) and that graph runs for each element. Iterators
(:mod:`.iterators`) turn a dataset into graph nodes whose ``Session.run`` gives the next
element.

>>> import numpy as np
>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     ds = tf.data.Dataset.from_tensor_slices((np.arange(5), np.arange(5) * 10.0))
...     ds = ds.map(lambda x, y: (x * 2, y + 1.0)).batch(2)
...     x, y = ds.make_one_shot_iterator().get_next()
...     with tf.Session() as sess:
...         print(sess.run([x, y]))
...         print(sess.run(x), sess.run(x))
...         try:
...             sess.run(x)
...         except tf.errors.OutOfRangeError:
...             print("end")
[array([0, 2]), array([ 1., 11.])]
[4 6] [8]
end
"""

from __future__ import annotations

import itertools

import numpy as np

from ...dtypes import as_dtype, bool_, int64
from ...errors import shown
from ...graph import Node, get_default_graph, user_location
from ...ops.random import _generator, _seed_attrs
from ...static.control_flow import Subgraph
from ...static.control_flow.tracing import inner, trace_function
from .dtype import DType
from .structure import Spec, dims, flat, flat_up_to, is_structure, pack
from .tensor_shape import TensorShape


def _as_array(value) -> np.ndarray:
    """TF's conversion of a Python value: floats become float32, ints int32; NumPy arrays
    keep their dtype."""
    if isinstance(value, np.ndarray | np.generic):
        return np.asarray(value)
    arr = np.asarray(value)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64:
        return arr.astype(np.int32)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"tf.data: cannot make a tensor of {shown(value)}; kernelgraph's "
                        "datasets hold numbers and bools")
    return arr


class Dataset:
    """A pipeline of elements (see the module docstring). Subclasses say where elements come
    from (:meth:`_iterate`) and what they are (``_spec``: a structure of ``(dtype, shape)``).
    """

    _spec = None

    # -- what it holds -----------------------------------------------------------------
    @property
    def output_types(self):
        return pack(self._spec, [DType(d) for d, _ in flat(self._spec)])

    @property
    def output_shapes(self):
        return pack(self._spec, [TensorShape(s) for _, s in flat(self._spec)])

    @property
    def output_classes(self):
        return pack(self._spec, [Node for _ in flat(self._spec)])

    element_spec = output_shapes

    def _inputs(self) -> list:
        """The graph tensors the pipeline reads (sources and what map functions capture)."""
        return []

    def _iterate(self, env):
        """The elements, as structures of arrays; ``env`` maps id(tensor) to its value."""
        raise NotImplementedError

    # -- sources -----------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors) -> Dataset:
        """One element per row of ``tensors`` (all of one length)."""
        return _Slices(tensors, sliced=True)

    @staticmethod
    def from_tensors(tensors) -> Dataset:
        """One element: ``tensors``."""
        return _Slices(tensors, sliced=False)

    @staticmethod
    def range(*args, output_type=int64) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])``: int64 scalars."""
        return _Range(args, as_dtype(output_type))

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None) -> Dataset:
        """The elements ``generator()`` yields, converted to ``output_types``."""
        return _Generated(generator, output_types, output_shapes, args)

    @staticmethod
    def zip(datasets) -> Dataset:
        """Tuples (or dicts) of the datasets' elements, as long as the shortest."""
        return _Zip(datasets)

    # -- steps -------------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None) -> Dataset:
        """``map_func`` applied to each element (a tuple element is passed as arguments)."""
        return _Map(self, map_func)

    def filter(self, predicate) -> Dataset:
        """The elements for which ``predicate`` (a bool scalar tensor) holds."""
        return _Filter(self, predicate)

    def batch(self, batch_size, drop_remainder=False) -> Dataset:
        """Consecutive elements stacked ``batch_size`` at a time (the last batch may be
        smaller unless ``drop_remainder``)."""
        return _Batch(self, int(batch_size), bool(drop_remainder))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False) -> Dataset:
        """``batch``, each component padded at the end to ``padded_shapes`` (None or -1 in
        a shape: the longest in the batch; no ``padded_shapes``: all of them) with
        ``padding_values`` (default 0)."""
        return _Batch(self, int(batch_size), bool(drop_remainder),
                      padding=(padded_shapes, padding_values))

    def unbatch(self) -> Dataset:
        """Each row of each element (the inverse of ``batch``)."""
        return _Unbatch(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None) -> Dataset:
        """TF's buffered shuffle: fill a buffer of ``buffer_size`` elements, then repeatedly
        hand out a random one and refill its place. ``buffer_size=1`` keeps the order; any
        other order is not TF's (its draws come from TF's own generator)."""
        return _Shuffle(self, int(buffer_size), seed,
                        True if reshuffle_each_iteration is None else reshuffle_each_iteration)

    def repeat(self, count=None) -> Dataset:
        """The dataset ``count`` times (None or -1: forever)."""
        return _Repeat(self, None if count is None or count == -1 else int(count))

    def take(self, count) -> Dataset:
        """The first ``count`` elements (-1: all)."""
        return _Slice(self, 0, None if count == -1 else int(count))

    def skip(self, count) -> Dataset:
        """All but the first ``count`` elements (-1: none)."""
        return _Slice(self, None if count == -1 else int(count), None)

    def concatenate(self, dataset) -> Dataset:
        """This dataset's elements, then ``dataset``'s."""
        return _Concat(self, dataset)

    def enumerate(self, start=0) -> Dataset:
        """``(index, element)`` pairs, the index an int64 from ``start``."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def prefetch(self, buffer_size) -> Dataset:
        """The same elements (kernelgraph computes them when asked: nothing to prefetch)."""
        return self

    def cache(self, filename="") -> Dataset:
        """The same elements."""
        return self

    def apply(self, transformation_func) -> Dataset:
        return transformation_func(self)

    # -- iterators ---------------------------------------------------------------------
    # The iterator class, which :mod:`.iterators` (importing this module) installs here.
    _iterator_class = None

    def make_one_shot_iterator(self):
        """An iterator that needs no initialisation (the dataset may read constants only)."""
        return self._iterator_class.one_shot(self)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator started (and restarted) by running its ``initializer``; the dataset
        may read placeholders, fed to that run."""
        return self._iterator_class.initializable(self)

    def __iter__(self):
        raise RuntimeError("`tf.data.Dataset` only supports Python-style iteration in eager "
                           "mode or within tf.function; use an iterator's get_next()")

    def __repr__(self):
        return f"<{type(self).__name__.strip('_')}Dataset shapes: {self.output_shapes}, " \
               f"types: {self.output_types}>"


class _Slices(Dataset):
    def __init__(self, tensors, sliced: bool):
        self.structure = tensors
        leaves = flat(tensors)
        if not leaves:
            raise ValueError("tf.data: from_tensor_slices needs at least one tensor")
        self.leaves = [x if isinstance(x, Node) else _as_array(x) for x in leaves]
        self.sliced = sliced
        specs = []
        for x in self.leaves:
            shape = x.shape if isinstance(x, Node) else tuple(x.shape)
            if sliced:
                if shape is not None and len(shape) == 0:
                    raise ValueError("Unbatching a tensor is only supported for rank >= 1")
                shape = None if shape is None else tuple(shape[1:])
            specs.append(Spec(x.dtype, shape))
        sizes = {x.shape[0] for x in self.leaves if x.shape is not None and len(x.shape) and
                 x.shape[0] is not None}
        if sliced and len(sizes) > 1:
            raise ValueError(f"Dimensions {' and '.join(map(str, sorted(sizes)))} are not "
                             "compatible: from_tensor_slices needs one length for all tensors")
        self._spec = pack(tensors, specs)

    def _inputs(self):
        return [x for x in self.leaves if isinstance(x, Node)]

    def _iterate(self, env):
        values = [np.asarray(env[id(x)]) if isinstance(x, Node) else x for x in self.leaves]
        if not self.sliced:
            yield pack(self.structure, [np.array(v) for v in values])
            return
        lengths = {len(v) for v in values}
        if len(lengths) > 1:
            raise ValueError(f"from_tensor_slices: the tensors have lengths "
                             f"{sorted(lengths)}; they must have one")
        for i in range(lengths.pop()):
            yield pack(self.structure, [np.array(v[i]) for v in values])


class _Range(Dataset):
    def __init__(self, args, dtype):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to Dataset.range: {shown(args)}")
        self.args, self.dtype = args, dtype
        self._spec = Spec(dtype, ())

    def _inputs(self):
        return [a for a in self.args if isinstance(a, Node)]

    def _iterate(self, env):
        args = [int(np.asarray(env[id(a)])) if isinstance(a, Node) else int(a)
                for a in self.args]
        for k in range(*args):
            yield np.array(k, self.dtype)


class _Generated(Dataset):
    def __init__(self, generator, output_types, output_shapes, args):
        self.generator, self.args = generator, tuple(args or ())
        types = flat(output_types)
        shapes = flat_up_to(output_types, output_shapes) if output_shapes is not None else \
            [None] * len(types)
        self._spec = pack(output_types, [Spec(as_dtype(t), s)
                                         for t, s in zip(types, shapes)])

    def _iterate(self, env):
        for value in self.generator(*self.args):
            leaves = flat(value) if is_structure(self._spec) else [value]
            specs = flat(self._spec)
            if len(leaves) != len(specs):
                raise ValueError(f"from_generator: the generator yielded {shown(value)}, not "
                                 f"{len(specs)} values as output_types says")
            yield pack(self._spec, [np.asarray(v, as_dtype(d)) for v, (d, _) in
                                    zip(leaves, specs)])


class _Zip(Dataset):
    def __init__(self, datasets):
        self.datasets = datasets
        parts = flat(datasets)
        self._spec = pack(datasets, [d._spec for d in parts])

    def _inputs(self):
        return [x for d in flat(self.datasets) for x in d._inputs()]

    def _iterate(self, env):
        parts = flat(self.datasets)
        for items in zip(*(d._iterate(env) for d in parts)):
            yield pack(self.datasets, list(items))


class _Traced:
    """A map or filter function traced once on placeholders shaped like the element."""

    def __init__(self, fn, spec, what):
        graph = get_default_graph()
        location = user_location(3)
        leaves = flat(spec)
        params = [(f"arg{k}", shape, dtype) for k, (dtype, shape) in enumerate(leaves)]
        self.spec = spec

        def call(*args):
            element = pack(spec, list(args))
            return fn(*element) if isinstance(element, tuple) else fn(element)

        self.graph, placeholders, out = trace_function(call, graph, what, location, params,
                                                       [None] * len(params))
        if isinstance(out, list):
            out = tuple(out)  # as TF: a list a map function returns is a tuple
        self.structure = out
        nodes = [inner(self.graph, v, None, what, k) for k, v in enumerate(flat(out))]
        self.outputs = nodes
        self.captured = [outer for outer, _ in self.graph.captures]
        self.sub = Subgraph(self.graph, placeholders + [p for _, p in self.graph.captures],
                            nodes, [], what)
        self.graph.sealed = True

    def __call__(self, element, env) -> list:
        values = flat(element) + [env[id(c)] for c in self.captured]
        return self.sub.run(values, lambda: "in a tf.data function")


class _Map(Dataset):
    def __init__(self, source, fn):
        self.source = source
        self.fn = _Traced(fn, source._spec, "map function of tf.data")
        self._spec = pack(self.fn.structure, [Spec(n.dtype, n.shape) for n in self.fn.outputs])

    def _inputs(self):
        return self.source._inputs() + self.fn.captured

    def _iterate(self, env):
        for element in self.source._iterate(env):
            yield pack(self._spec, self.fn(element, env))


class _Filter(Dataset):
    def __init__(self, source, predicate):
        self.source = source
        self.fn = _Traced(predicate, source._spec, "filter predicate of tf.data")
        if len(self.fn.outputs) != 1 or self.fn.outputs[0].dtype != bool_:
            raise ValueError("`predicate` return type must be convertible to a scalar boolean "
                             "tensor.")
        self._spec = source._spec

    def _inputs(self):
        return self.source._inputs() + self.fn.captured

    def _iterate(self, env):
        for element in self.source._iterate(env):
            if bool(np.asarray(self.fn(element, env)[0])):
                yield element


class _Batch(Dataset):
    def __init__(self, source, size, drop, padding=None):
        if size <= 0:
            raise ValueError(f"batch_size must be greater than zero, got {size}")
        self.source, self.size, self.drop = source, size, drop
        specs = flat(source._spec)
        self.pads = None
        if padding is not None:
            shapes, values = padding
            shapes = [s.shape for s in specs] if shapes is None else \
                [dims(s) for s in flat_up_to(source._spec, shapes)]
            values = [0] * len(specs) if values is None else flat_up_to(source._spec, values)
            self.pads = list(zip(shapes, values))
            specs = [Spec(sp.dtype, shape) for sp, (shape, _) in zip(specs, self.pads)]
        self._spec = pack(source._spec, [Spec(d, None if s is None else
                                              (size if drop else None, *s))
                                         for d, s in specs])

    def _inputs(self):
        return self.source._inputs()

    def _iterate(self, env):
        items = self.source._iterate(env)
        while True:
            chunk = list(itertools.islice(items, self.size))
            if not chunk or (self.drop and len(chunk) < self.size):
                return
            columns = list(zip(*(flat(e) for e in chunk)))
            if self.pads is not None:
                columns = [_padded(c, shape, value) for c, (shape, value) in
                           zip(columns, self.pads)]
            try:
                stacked = [np.stack(c) for c in columns]
            except ValueError:
                raise ValueError("Cannot batch tensors with different shapes in one "
                                 "component; use padded_batch") from None
            yield pack(self._spec, stacked)


def _padded(column, shape, value):
    """The arrays of one component of a batch, padded at the end to ``shape`` (None dims:
    the batch's longest)."""
    rank = np.ndim(column[0])
    target = [max(np.shape(a)[i] for a in column) for i in range(rank)]
    if shape is not None:
        target = [t if d is None else d for t, d in zip(target, shape)]
    out = []
    for a in column:
        if any(n > t for n, t in zip(np.shape(a), target)):
            raise ValueError(f"padded_batch: an element of shape {np.shape(a)} does not fit "
                             f"the padded shape {tuple(target)}")
        pad = [(0, t - n) for n, t in zip(np.shape(a), target)]
        out.append(np.pad(a, pad, constant_values=np.asarray(value, a.dtype)) if pad else a)
    return out


class _Unbatch(Dataset):
    def __init__(self, source):
        self.source = source
        self._spec = pack(source._spec, [Spec(d, None if s is None else tuple(s[1:]))
                                         for d, s in flat(source._spec)])

    def _inputs(self):
        return self.source._inputs()

    def _iterate(self, env):
        for element in self.source._iterate(env):
            leaves = flat(element)
            for i in range(len(leaves[0])):
                yield pack(self._spec, [np.array(v[i]) for v in leaves])


class _Shuffle(Dataset):
    def __init__(self, source, buffer_size, seed, reshuffle):
        if buffer_size <= 0:
            raise ValueError("buffer_size must be greater than zero.")
        self.source, self.buffer_size, self.reshuffle = source, buffer_size, reshuffle
        self.seed_attrs = _seed_attrs(seed, True)
        self._spec = source._spec

    def _inputs(self):
        return self.source._inputs()

    def _iterate(self, env):
        a = self.seed_attrs
        if not self.reshuffle:
            a["stream"].replaying = a["stream"].last is not None
        rng = _generator(a["global_seed"], a["seed"], a["stream"])
        a["stream"].replaying = False
        buffer = []
        items = self.source._iterate(env)
        for element in items:
            buffer.append(element)
            if len(buffer) == self.buffer_size:
                break
        while buffer:
            i = int(rng.integers(len(buffer)))
            out = buffer[i]
            nxt = next(items, _END)
            if nxt is _END:
                buffer.pop(i)
            else:
                buffer[i] = nxt
            yield out


_END = object()


class _Repeat(Dataset):
    def __init__(self, source, count):
        self.source, self.count = source, count
        self._spec = source._spec

    def _inputs(self):
        return self.source._inputs()

    def _iterate(self, env):
        rounds = itertools.count() if self.count is None else range(self.count)
        for _ in rounds:
            empty = True
            for element in self.source._iterate(env):
                empty = False
                yield element
            if empty:
                return


class _Slice(Dataset):
    def __init__(self, source, start, stop):
        self.source, self.start, self.stop = source, start, stop
        self._spec = source._spec

    def _inputs(self):
        return self.source._inputs()

    def _iterate(self, env):
        if self.start is None:  # skip(-1): nothing
            return
        stop = None if self.stop is None else self.start + self.stop
        yield from itertools.islice(self.source._iterate(env), self.start, stop)


class _Concat(Dataset):
    def __init__(self, first, second):
        a, b = flat(first._spec), flat(second._spec)
        if len(a) != len(b) or any(x.dtype != y.dtype for x, y in zip(a, b)):
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{first.output_types} and {second.output_types}")
        self.first, self.second = first, second
        self._spec = pack(first._spec, [Spec(x.dtype, _common(x.shape, y.shape))
                                        for x, y in zip(a, b)])

    def _inputs(self):
        return self.first._inputs() + self.second._inputs()

    def _iterate(self, env):
        yield from self.first._iterate(env)
        yield from self.second._iterate(env)


def _common(a, b):
    """The shape both ``a`` and ``b`` fit: the dims they agree on."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(p if p == q else None for p, q in zip(a, b))


DatasetV1 = Dataset

__all__ = ["Dataset", "DatasetV1"]
