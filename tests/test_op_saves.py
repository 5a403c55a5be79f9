"""What each op's gradient rule saves: every card with a gradient rule declares it
(``saves=``, :data:`kernelgraph.ops.registry.SAVES`), and eager mode's in-place checks read
that declaration alone (``Op.reads``). Here, and only here, each declaration is checked
against what the rule's own code loads of its arguments, read from its bytecode: a rule that
names an argument reads it, so the declaration must cover it. The bytecode is CPython's, so a
rule the disassembly cannot tell about (``*inputs``, or code that is not Python) is skipped
by name, and a Python whose opcodes this does not know fails loudly instead of passing."""

from __future__ import annotations

import dis
import re

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.ops import OPS, registry
from kernelgraph.ops.rnn_scan import rnn_tanh_scan
from kernelgraph.ops.running_sum import running_sum

# The opcodes by which a function's code reads (or rebinds) one of its local names.
LOADS = frozenset(("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF",
                   "LOAD_CLOSURE", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW",
                   "LOAD_FAST_BORROW_LOAD_FAST_BORROW", "DELETE_FAST", "STORE_FAST",
                   "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"))

# The cards with a gradient rule: the registered ones and the unregistered ones of
# kernelgraph.ops that eager autobatching records (their nodes are checked the same way).
CARDS = {name: op for name, op in OPS.items() if op.grad is not None}
CARDS.update({op.name: op for op in (rnn_tanh_scan, running_sum)})

# Rules that name an input only for its shape or dtype (``sum_to_like(g, x)``,
# ``reshape(g, shape(x))``; ``concat``'s ``*inputs`` give the sizes of the slices): the
# disassembly sees a read (or cannot tell), the card rightly declares none.
# Each is checked by behaviour instead (:func:`test_a_shape_read_is_not_a_value_read`): the
# input changed in place after the op ran still gives the unchanged gradient.
SHAPE_READS = {
    "sum": lambda x: kg.ops.sum(x, axis=1),
    "mean": lambda x: kg.ops.mean(x, axis=0),
    "reshape": lambda x: kg.ops.reshape(x, (3, 2)),
    "broadcast_to": lambda x: kg.ops.broadcast_to(x, (4, 2, 3)),
    "cast": lambda x: kg.ops.cast(x, dtype=kg.float32),
    "getitem": lambda x: x[1],
    "concat": lambda x: kg.cat([x, x * 3.0], 1),
    "stack": lambda x: kg.stack([x, x * 3.0], 2),
}


def loaded(rule) -> tuple | None:
    """The :data:`SAVES` items ``rule(g, out, needs, attrs, *inputs)``'s code loads, or None
    where its code cannot tell (``*args``, not plain Python)."""
    code = getattr(rule, "__code__", None)
    if code is None or code.co_flags & 0x0C:  # not plain Python, or *args / **kwargs
        return None
    names = code.co_varnames[:code.co_argcount]
    seen = set(code.co_cellvars)  # an argument a nested function uses: read
    for ins in dis.get_instructions(code):
        if ins.opname in LOADS:
            seen.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
        elif ins.opname.startswith(("LOAD_FAST", "STORE_FAST")):
            raise AssertionError(f"opcode {ins.opname} of this Python is unknown to "
                                 "tests/test_op_saves.py: add it to LOADS")
    inputs = names[4:]
    return tuple(["out"] * (names[1] in seen) + [i for i, n in enumerate(inputs) if n in seen])


def declared(op) -> set:
    """The values ``op``'s ``saves=`` may read (a conditional ``(what, j)`` counts as
    ``what``)."""
    return {item[0] if type(item) is tuple else item for item in op.saves}


@pytest.mark.parametrize("name", sorted(CARDS))
def test_every_gradient_rule_declares_what_it_saves(name):
    op = CARDS[name]
    assert op.saves is not None, f"op {name!r} declares no saves="
    assert op.saves == "all" or type(op.saves) is tuple, op.saves
    if op.saves == "all":
        return
    code = op.grad.__code__
    inputs = code.co_argcount - 4 if not code.co_flags & 0x0C else None
    for item in op.saves:
        what, j = item if type(item) is tuple else (item, None)
        assert what == "out" or (type(what) is int and (inputs is None or what < inputs)), item
        assert j is None or (type(j) is int and (inputs is None or j < inputs)), item


@pytest.mark.parametrize("name", sorted(CARDS))
def test_the_declaration_covers_what_the_rule_reads(name):
    op = CARDS[name]
    reads = loaded(op.grad)
    if reads is None:
        assert op.saves == "all" or name in SHAPE_READS, (
            f"op {name!r}: its rule's code cannot be read for what it loads, so only "
            "saves='all' is safe (or a behaviour check in SHAPE_READS)")
        return  # a *inputs rule: its code cannot tell which it reads, so 'all' is the answer
    assert op.saves != "all", (f"op {name!r}: its rule reads {reads}; declare that, not 'all' "
                               "(which makes every in-place change of an input an error)")
    if name in SHAPE_READS:
        reads = tuple(r for r in reads if r != 0)
    missing = set(reads) - declared(op)
    assert not missing, (f"op {name!r}: its gradient rule reads {sorted(map(str, missing))} "
                         f"but saves={op.saves} does not say so; an in-place change of that "
                         "value would give a wrong gradient instead of PyTorch's error")


@pytest.mark.parametrize("name", sorted(SHAPE_READS))
def test_a_shape_read_is_not_a_value_read(name):
    def gradient(change: bool):
        x = kg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        a = x * 1.0
        y = SHAPE_READS[name](a)
        if change:
            a.mul_(5.0)
        (y * kg.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(y.shape))).sum().backward()
        return x.grad.numpy()

    assert OPS[name].saves == ()
    np.testing.assert_array_equal(gradient(True), gradient(False))


def test_a_card_with_a_gradient_must_declare_what_it_saves():
    rule = lambda g, out, needs, attrs, x: (g,)  # noqa: E731
    with pytest.raises(ValueError, match="declares no saves="):
        registry.define("test_undeclared", lambda x: x, lambda s, d, a: (s[0], d[0]), rule)
    assert "test_undeclared" not in OPS


def test_reads_is_the_declaration():
    """``Op.reads`` returns the card's declaration: ``mul`` reads y for x's gradient only;
    ``"all"`` (concat_slice) is every input and the output."""
    assert OPS["mul"].reads(2) == ((1, 0), (0, 1))
    assert OPS["concat_slice"].reads(3) == (0, 1, 2, "out")
    assert registry.Op("t", None, None, lambda *a: a).reads(2) == (0, 1, "out")


def test_nothing_in_the_package_reads_bytecode():
    """What a rule saves is declared, never disassembled at run time (a new CPython's
    opcodes must not switch the in-place check off)."""
    import pathlib

    root = pathlib.Path(kg.__file__).parent
    uses = re.compile(r"^\s*(import dis\b|from dis import)", re.M)
    users = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if uses.search(p.read_text(encoding="utf-8"))]
    assert users == []
