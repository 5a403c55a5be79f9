"""The op registry: each op is defined once, on a *card*, and every mode calls that one card.

An :class:`Op` card carries every fact about its op, so that nothing else keeps a table of
op names:

- ``infer(shapes, dtypes, attrs) -> (shape, dtype)``: the shape/dtype rule; shapes may hold
  ``None`` dims (or be ``None`` for unknown rank) and a mismatch raises ``ShapeError``;
- ``forward(*arrays, **attrs) -> array``: the CPU computation, calling numba kernels; it
  promotes dtypes and checks what the kernels assume first, so kernels stay leaves;
- ``grad(g, out, needs, attrs, *inputs) -> tuple``: the gradient rule, written with the
  public ops, so it computes on arrays/eager tensors and adds nodes on graph nodes;
- ``traits``: facts from the fixed vocabulary :data:`TRAITS` (fusable, fresh, random ...),
  which the compiler, the memory planner, fusion and autobatching read;
- for elementwise ops, ``scalar`` (the scalar body every backend is built from,
  :mod:`kernelgraph.kernels.cpu`), ``compute`` (the dtype rule applied after promotion,
  :mod:`kernelgraph.dtypes`) and ``loops`` (the CPU ufuncs built from the body);
- ``reference``: the NumPy oracle the tests compare it with (:mod:`kernelgraph.kernels.reference`);
- ``cuda``: how to build its CUDA forward from the :mod:`kernelgraph.kernels.cuda` package,
  which :meth:`Op.kernel` loads on first CUDA use (numba.cuda is slow to import);
- ``saves``: what the gradient rule reads of the forward's values (see :data:`SAVES`), so
  that eager mode knows which in-place changes invalidate a recorded node (PyTorch's
  "modified by an inplace operation" error) and which do not (``add``'s rule reads nothing).
  Every registered card with a gradient rule declares it (``define`` refuses one that does
  not); ``tests/test_op_saves.py`` checks each declaration against what the rule's code
  loads, so nothing at run time depends on reading a rule's bytecode;
- ``grad_fn``: PyTorch's name of its backward, which eager mode prints (``grad_fn=
  <MulBackward0>``): a str, or a function of the recorded node where the name depends on
  the call (``sum()`` is ``SumBackward0``, ``sum(dim)`` ``SumBackward1``); by default the
  op's name in CamelCase with ``Backward0`` (``sin``: ``SinBackward0``);
- ``batch``: how ``kg.autobatch`` runs a group of alike nodes of the op as one (a kind from
  :data:`BATCHING`; ``"elementwise"`` for every elementwise op), or None: node by node.

Calling an op dispatches on the types of its arguments to a *front-end*: eager tensors run at
once (:mod:`kernelgraph.eager`), graph nodes add a node (:mod:`kernelgraph.static.build`),
and plain NumPy arrays compute directly and return arrays (this is how eager ``backward()``
runs gradient rules without recording them); device arrays run the op's CUDA kernel. A
plain array of a dtype kernelgraph does not keep (float16, int16, big-endian ...) is
converted first, exactly as ``kg.tensor`` converts it (:func:`kernelgraph.dtypes.operand`),
and a computation the op's shape/dtype rule refuses raises that rule's error (a ShapeError
naming both shapes, not NumPy's words).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

import numpy as np

from .. import devices
from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str

ndarray = np.ndarray
_KEPT = D.KEPT  # a module global: one lookup on the hot path

# type -> apply(op, args, attrs); filled in by the front-end modules when they are imported.
FRONTENDS: dict[type, Callable] = {}
_ANY = 1 << 30  # the arity of an op that takes any number of inputs (concat)
DEFAULT_FRONTEND: list[Callable] = []  # for args with no tensor at all: eager

#: The traits an op may have, and what each one promises (an unknown trait is refused).
TRAITS: dict[str, str] = {
    "elementwise": "broadcasts its inputs like NumPy; the output has their broadcast shape",
    "fusable": "its scalar body (op.scalar) may run inside a fused kernel",
    "transcendental": "its body calls a math-library function (exp, tanh ...): a fused "
                      "group over many values holds at most one, so its loop still vectorises",
    "logical": "on bools it keeps bools (b + b is a logical or): never fused on bools, where "
               "a fused body would compute 1 + 1 = 2",
    "fresh": "always returns a new array (a ufunc's result, a product, a reduction): the "
             "memory planner may write its result in place",
    "view": "its output may share memory with input 0 (reshape, transpose ...)",
    "method": "also a Tensor method in eager mode (x.exp(), as in PyTorch)",
    "random": "draws random numbers: never folded, merged or deferred",
    "stateful": "run by the session, not by a kernel: reads or writes a variable, or takes a "
                "feed (placeholder) or only orders others (no_op); never folded or merged",
    "host_only": "runs on the host whatever the device scope (control flow)",
    "shape_only": "reads only the shape and dtype of the inputs op.shape_inputs names",
    "control": "runs sub-graphs; its value is a tuple",
    "transfer": "moves a value between devices",
    "run_records": "reads what its forward recorded in the same compiled run "
                   "(kernels/records.py), so a plan holding it scopes each run for that",
}


#: How ``kg.autobatch`` may run a group of alike nodes of an op as one (``Op.batch``;
#: :mod:`kernelgraph.autobatching.batchers` has one batcher per kind).
BATCHING: dict[str, str] = {
    "elementwise": "one input shape kept, broadcasting: the members' rows joined (FLAT) or "
                   "stacked, per-sample dims aligned right (add, exp ... and clip, identity)",
    "matmul": "x_i @ W joined by rows into one product, or the members stacked (batched)",
    "reduce": "the reduced axes moved past the stacking axis, or kept apart by rows",
    "softmax": "its axis moved past the stacking axis",
    "transpose": "its perm moved past the stacking axis",
    "reshape": "each member's shape behind the stacking axis",
    "getitem": "its index behind a full slice of the stacking axis",
    "join": "concat / stack of per-sample inputs along their axis, moved past the stacking "
            "axis or kept by rows",
    "gather": "a shared table's rows picked by all members' ids at once (embedding)",
    "broadcast_to": "each member's target shape behind the stacking axis",
    "cell": "an RNN / LSTM cell step on all members' rows, the four weights shared",
    "split_piece": "one piece of each member, its axis moved past the stacking axis",
    "argmax": "its axis moved past the stacking axis (not over a whole member)",
    "one_hot": "all members' ids at once, the classes along a new last axis",
    "images": "conv2d and the pools: the members' images joined along N, filters shared",
    "row_by_row": "a loss per row over all members' rows (shared inputs repeated)",
}


#: What ``Op.saves`` holds: a tuple of the values the gradient rule reads (PyTorch's "saved
#: variables"): ``i`` (input ``i``, always), ``"out"`` (the output), or ``(what, j)``
#: (``what`` is read only when input ``j`` needs a gradient: ``mul`` reads y for x's
#: gradient); ``()``: the rule reads no value, only shapes (add, sum, reshape ...);
#: ``"all"``: it may read every input and the output (a rule over any number of inputs,
#: ``concat_slice``'s); None (an unregistered card that does not say, such as a user's
#: ``autograd.Function``): as ``"all"``.
SAVES = "what the gradient rule reads: a tuple of i, 'out', (what, j); or 'all'"


class Op:
    """One operation's card: shape rule, forward, gradient rule, traits, scalar body, dtype
    rule, reference and CUDA kernel (see the module docstring)."""

    __slots__ = ("name", "forward", "infer", "grad", "doc", "attr_names", "arity", "traits",
                 "scalar", "compute", "loops", "reference", "cuda", "shape_inputs", "module",
                 "saves", "grad_fn", "batch", "_cuda_kernel")

    # Facts of the ops the compiler makes for one device (:class:`FusedOp`); None here.
    members = source = ufunc = updates = device_type = None

    def __init__(self, name: str, forward: Callable, infer: Callable, grad: Callable | None,
                 *, traits=(), scalar: Callable | None = None, compute: Callable | None = None,
                 loops=None, reference: Callable | None = None, cuda: Callable | None = None,
                 shape_inputs: tuple = (), view: bool = False, elementwise: bool = False,
                 doc: str = "", attr_names: tuple = (), inputs: int | None = None,
                 module: str | None = None, saves: tuple | str | None = None,
                 grad_fn: str | Callable | None = None, batch: str | None = None):
        traits = frozenset(traits) | {t for t, on in (("view", view),
                                                      ("elementwise", elementwise)) if on}
        if shape_inputs:
            traits |= {"shape_only"}
        batch = batch or ("elementwise" if "elementwise" in traits else None)
        _check_card(name, traits, scalar, shape_inputs, batch)
        self.name = name
        self.forward = forward
        self.infer = infer
        self.grad = grad  # None: not differentiable (comparisons, argmax ...)
        self.traits = traits
        self.scalar = scalar  # the scalar body (kernels/cpu.py) of an elementwise op
        self.compute = compute  # its dtype rule after promotion (kernelgraph.dtypes)
        # Its CPU ufuncs, one per dtype (kernels.cpu.UfuncKernel), where the forward only
        # promotes and calls them: the eager hot path and compiled plans call them directly.
        self.loops = loops
        self.reference = reference  # the NumPy oracle of the tests
        self.cuda = cuda  # kernelgraph.kernels.cuda -> the CUDA forward (see kernel())
        self.shape_inputs = tuple(shape_inputs)  # inputs read for their shape alone
        self.module = module  # the module that defined the op (its family)
        self.saves = saves if saves is None or saves == "all" else tuple(saves)  # see SAVES
        self.grad_fn = grad_fn or _backward_name(name)  # PyTorch's name of its backward
        self.batch = batch  # how kg.autobatch runs alike nodes of it as one (BATCHING)
        self.doc = doc
        # Attributes that may also be passed by position after the ``inputs`` tensors, as in
        # ``kg.sum(x, 1)`` or ``kg.reshape(x, (2, 3))``; ops without any take any arity.
        self.attr_names = tuple(attr_names)
        # ``inputs`` given without attributes fixes the arity too (kg.exp(x, 3) is refused
        # by name, not deep in the kernel); ops that take any number (concat) leave it out.
        self.arity = inputs or 1 if attr_names else inputs or _ANY
        self._cuda_kernel = None

    def reads(self, inputs: int) -> tuple:
        """What the gradient rule reads, as :data:`SAVES` items, for a node of ``inputs``
        inputs: the card's ``saves``; every input and the output where it says ``"all"``
        (or, an unregistered card, says nothing).

        >>> import kernelgraph as kg
        >>> kg.ops.exp.reads(1), kg.ops.add.reads(2), kg.ops.OPS["concat_slice"].reads(2)
        (('out',), (), (0, 1, 'out'))
        """
        saves = self.saves
        if saves is None or saves == "all":
            return (*range(inputs), "out")
        return saves

    @property
    def view(self) -> bool:
        """Whether the output may share memory with input 0 (reshape, transpose ...)."""
        return "view" in self.traits

    @property
    def elementwise(self) -> bool:
        """Whether the op broadcasts its inputs like NumPy."""
        return "elementwise" in self.traits

    def kernel(self, device) -> Callable:
        """The function that runs this op on ``device`` (a :class:`kernelgraph.devices.Device`):
        the CPU forward, or the CUDA forward built from the card's ``cuda`` on first use;
        a DeviceError where this process cannot run ``device``, NotImplementedError where
        the op has no kernel for it.

        >>> import kernelgraph as kg
        >>> kg.ops.exp.kernel(kg.device("cpu")) is kg.ops.exp.forward
        True
        """
        if device.type == "cpu":
            return self.forward
        devices.require(device)
        found = self._cuda_kernel
        if found is None:
            if self.cuda is None:
                raise NotImplementedError(f"op '{self.name}' has no CUDA kernel")
            found = self._cuda_kernel = self.cuda(cuda_package())
        return found

    def __call__(self, *args, **attrs):
        if len(args) > self.arity:
            args, attrs = self._bind(args, attrs)
        elif len(args) < self.arity < _ANY:
            raise TypeError(f"{self.name}() takes {self.arity} tensor input(s), got "
                            f"{len(args)}")
        # A tensor or graph node anywhere decides the mode; plain arrays only when there is
        # neither (kg.mul(np_array, tensor) is eager, not an array computation).
        raw = foreign = False
        for a in args:
            t = type(a)
            if t is ndarray:
                raw = True
                if a.dtype not in _KEPT:
                    foreign = True
                continue
            apply = FRONTENDS.get(t)
            if apply is not None:
                return apply(self, args, attrs)
        if raw:
            if attrs and "name" in attrs:
                attrs = {k: v for k, v in attrs.items() if k != "name"}
            if foreign:
                args = tuple(D.operand(a, self.name, i) if type(a) is ndarray else a
                             for i, a in enumerate(args))
            try:
                return self.forward(*args, **attrs)
            except Exception as e:
                better = self.explain(args, attrs, e)
                if better is e:
                    raise
                raise better from None
        for a in args:  # a device array made before the CUDA kernels were first loaded
            if devices.is_cuda_array(a):
                cuda_package()
                return apply_device_arrays(self, args, attrs)
        return DEFAULT_FRONTEND[0](self, args, attrs)

    def explain(self, values, attrs, error: Exception) -> Exception:
        """The error to raise for ``error``, which this op's forward raised on ``values``
        (arrays of kept dtypes, device arrays, Python numbers): a Python int the tensor's
        integer dtype cannot hold is a ConversionError naming both; inputs the op's
        shape/dtype rule refuses get that rule's error (naming the op, the shapes and
        dtypes); anything else names the op and its inputs around the kernel's message. An
        error the forward raised itself in the framework's words (``checked``) stays."""
        if getattr(error, "checked", False):
            return error
        shapes_ = [np.shape(v) for v in values]
        dts = [getattr(v, "dtype", None) for v in values]
        if isinstance(error, OverflowError):  # NumPy's, reading a Python int as the dtype
            ints = [d for d in dts if d is not None and np.dtype(d).kind in "iu"]
            big = D.int_beyond(values, ints[0]) if ints else None
            if big is not None:
                return D.scalar_overflow(big, ints[0], self.name)
        try:
            infer_dts = [D.as_dtype(d) if d is not None else D.scalar_dtype(v)
                         for d, v in zip(dts, values)]
            self.infer(shapes_, infer_dts, attrs)
        except (ShapeError, TypeError) as e:
            return type(e)(str(e) if str(e).startswith(self.name) else f"{self.name}: {e}")
        except Exception:  # noqa: BLE001 - fall through to the kernel's own message
            pass
        described = ", ".join(f"{shape_str(s)} {np.dtype(d).name if d is not None else 'scalar'}"
                              for s, d in zip(shapes_, dts))
        try:
            return type(error)(f"{self.name} failed on inputs {described}: {error}")
        except Exception:  # noqa: BLE001 - an error class that takes other arguments
            return error

    def _bind(self, args, attrs):
        """Move positional attributes (after the tensor inputs) into ``attrs``. Without this
        a positional axis or shape would become a tensor input of the node."""
        extra = args[self.arity:]
        if len(extra) > len(self.attr_names):
            then = (f" and then at most ({', '.join(self.attr_names)})" if self.attr_names
                    else "")
            raise TypeError(f"{self.name}() takes {self.arity} tensor input(s){then}, got "
                            f"{len(args)} positional arguments")
        attrs = dict(attrs)
        for key, value in zip(self.attr_names, extra):
            if key in attrs:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            attrs[key] = value
        return args[:self.arity], attrs

    def __repr__(self):
        return f"<kg op {self.name}>"


OPS: dict[str, Op] = {}


def _backward_name(op_name: str) -> str:
    """The default ``grad_fn`` of a card: ``max_pool`` -> ``MaxPoolBackward0``; a name that
    is not an identifier (``function:loss_fn``, a kg.function's) stands as it is."""
    if not op_name.replace("_", "a").isalnum():
        return op_name
    return "".join(part.capitalize() for part in op_name.split("_")) + "Backward0"


def define(name: str, forward, infer, grad=None, **kw) -> Op:
    """Create and register an op card (names are unique); its ``module`` is the caller's. A
    card with a gradient rule must declare what the rule reads (``saves=``, see
    :data:`SAVES`)."""
    if name in OPS:
        raise ValueError(f"op {name!r} is already defined")
    if grad is not None and kw.get("saves") is None:
        raise ValueError(f"op {name!r} has a gradient rule but declares no saves= (what the "
                         "rule reads of the forward's values: a tuple, or 'all')")
    kw.setdefault("module", sys._getframe(1).f_globals.get("__name__"))
    op = Op(name, forward, infer, grad, **kw)
    OPS[name] = op
    return op


def _check_card(name: str, traits: frozenset, scalar, shape_inputs, batch) -> None:
    unknown = sorted(traits - TRAITS.keys())
    if unknown:
        raise ValueError(f"op {name!r}: unknown trait(s) {', '.join(map(repr, unknown))}; "
                         f"the traits are {', '.join(TRAITS)}")
    if "fusable" in traits and scalar is None:
        raise ValueError(f"op {name!r} is fusable but has no scalar body")
    if batch is not None and batch not in BATCHING:
        raise ValueError(f"op {name!r}: unknown batch kind {batch!r}; the kinds are "
                         f"{', '.join(BATCHING)}")
    if "shape_only" in traits and not shape_inputs:
        raise ValueError(f"op {name!r} is shape_only but names no shape_inputs")


class FusedOp(Op):
    """An op the compiler made for one device: a fused group's generated kernel
    (:mod:`kernelgraph.static.fusion`). Its forward is the compiled kernel; ``members``
    names the nodes computed inside, ``source`` is the generated module, ``ufunc`` the
    compiled NumPy ufunc (CPU), ``updates`` the assign it computes (``"assign_sub"``) or
    None. Its array is always a new one (trait ``fresh``)."""

    __slots__ = ("members", "source", "ufunc", "updates", "device_type", "key")

    def __init__(self, key: str, kernel, *, members: list, source: str, device_type: str,
                 ufunc=None, updates: str | None = None):
        super().__init__(f"fused_{key[:8]}", kernel, None, None, traits=("fresh",),
                         doc="A group of elementwise ops run as one generated kernel.")
        self.key = key
        self.members = members
        self.source = source
        self.ufunc = ufunc
        self.updates = updates
        self.device_type = device_type

    def kernel(self, device) -> Callable:
        """Its kernel, on the one device type it was generated for."""
        if device.type != self.device_type:
            raise NotImplementedError(f"op '{self.name}' was generated for "
                                      f"{self.device_type}, not {device.type}")
        if device.type != "cpu":
            devices.require(device)
        return self.forward


class DerivedOp(Op):
    """An op card made at run time and never registered (so the op-card tests and the
    compiler never meet it): the in-place variant of a card, which eager ``x.add_(y)``
    records (named ``add_``, with every fact of ``add``), or the card of a user's
    ``autograd.Function``. ``base`` is the card it varies (None for a Function),
    ``inplace`` whether its node wrote into its first input's array, and
    ``grad_fn_name`` PyTorch's name of its backward (``AddBackward0``, ``CopySlices``).

    >>> import kernelgraph as kg
    >>> add_ = DerivedOp.inplace_of(kg.ops.add, "AddBackward0")
    >>> add_.name, add_.inplace, add_.base is kg.ops.add, add_.saves
    ('add_', True, True, ())
    """

    __slots__ = ("base", "inplace")

    @property
    def grad_fn_name(self) -> str:
        """The card's ``grad_fn`` (a name given to the variant, such as ``CopySlices``)."""
        return self.grad_fn

    @grad_fn_name.setter
    def grad_fn_name(self, name: str) -> None:
        self.grad_fn = name

    @classmethod
    def inplace_of(cls, base: Op, grad_fn_name: str, name: str | None = None) -> DerivedOp:
        """The in-place variant of ``base``: ``base.name + "_"`` unless ``name``."""
        op = cls(name or base.name + "_", base.forward, base.infer, base.grad,
                 traits=base.traits - {"method"}, scalar=base.scalar, compute=base.compute,
                 loops=base.loops, reference=base.reference, cuda=base.cuda,
                 shape_inputs=base.shape_inputs, doc=f"In place: {base.doc}",
                 attr_names=base.attr_names, module=base.module, saves=base.saves,
                 grad_fn=grad_fn_name)
        op.arity = base.arity
        op.base, op.inplace = base, True
        op.batch = None  # an in-place write is never batched (kg.autobatch refuses it)
        return op


# -- CUDA: loaded on first use ---------------------------------------------------------------
_CUDA: list = []


def cuda_package():
    """:mod:`kernelgraph.kernels.cuda`, imported on first use; from then on, ops called on
    its device arrays run their CUDA kernels (:func:`apply_device_arrays`)."""
    if not _CUDA:
        # numba.cuda takes a while to import and claims the GPU: a process that never uses
        # CUDA never loads it, so this is the one place that imports the CUDA kernels.
        from ..kernels import cuda

        for t in devices.cuda_array_types():
            FRONTENDS[t] = apply_device_arrays
        _CUDA.append(cuda)
    return _CUDA[0]


devices.install_cuda_loader(cuda_package)


def apply_device_arrays(op: Op, args, attrs):
    """The plain-array front-end for device arrays (gradient rules in eager backward): the
    op's kernel for the device all of ``args`` live on."""
    if attrs and "name" in attrs:
        attrs = {k: v for k, v in attrs.items() if k != "name"}
    return op.kernel(devices.device_of_values(op, args))(*args, **attrs)


# -- read-only views of one fact of every card (for tests and docs) --------------------------
class CardView(Mapping):
    """Op name -> one fact of its card, for the registered ops that have it (and, given
    ``modules``, that those modules define), read from the cards at each lookup."""

    def __init__(self, fact: Callable, has: Callable, modules=()):
        self._fact, self._has = fact, has
        self._modules = frozenset(getattr(m, "__name__", m) for m in modules)

    def _wanted(self, op: Op) -> bool:
        return self._has(op) and (not self._modules or op.module in self._modules)

    def __getitem__(self, name: str):
        op = OPS.get(name)
        if op is None or not self._wanted(op):
            raise KeyError(name)
        return self._fact(op)

    def __iter__(self):
        return (name for name, op in list(OPS.items()) if self._wanted(op))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def cuda_kernels(*modules) -> CardView:
    """Op name -> CUDA forward (loading the CUDA kernels on first lookup), for every op with
    one, or only for the ops ``modules`` define (``cuda_kernels(kg.ops.indexing)``)."""
    return CardView(lambda op: op.kernel(devices.CUDA0), lambda op: op.cuda is not None,
                    modules)


#: Op name -> the NumPy reference implementation on its card.
REFERENCE = CardView(lambda op: op.reference, lambda op: op.reference is not None)
#: Op name -> its CUDA forward.
CUDA_KERNELS = cuda_kernels()
