"""Random arithmetic expression trees with their exact values (for tree-structured models).

A tree is an :class:`Expr`: a leaf holding a digit 0..9, or an operator (``+``, ``-``,
``*``, ``max``) over two sub-trees. Every tree has its own shape, which is what dynamic
graphs (one graph per sample) handle naturally and what a static graph cannot.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..errors import shown

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "max": max}


@dataclass(frozen=True)
class Expr:
    """One node of an expression tree: ``Expr(leaf=3)`` or ``Expr("+", (a, b))``.

    >>> import kernelgraph as kg
    >>> e = kg.data.Expr("*", (kg.data.Expr(leaf=3),
    ...                        kg.data.Expr("max", (kg.data.Expr(leaf=2), kg.data.Expr(leaf=5)))))
    >>> str(e), e.value, e.depth, e.size
    ('3 * max(2, 5)', 15, 3, 5)
    """

    op: str | None = None
    children: tuple[Expr, ...] = ()
    leaf: int | None = None
    _value: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self):
        if self.op is None:
            if self.leaf is None or self.children:
                raise ValueError("a leaf Expr needs leaf=<int> and no children")
            object.__setattr__(self, "_value", int(self.leaf))
            return
        if self.op not in OPS:
            raise ValueError(f"op must be one of {tuple(OPS)}, got {shown(self.op)}")
        if len(self.children) != 2 or not all(isinstance(c, Expr) for c in self.children):
            raise ValueError(f"operator {shown(self.op)} needs two Expr children")
        if self.leaf is not None:
            raise ValueError("an operator Expr has no leaf value")
        a, b = self.children
        object.__setattr__(self, "_value", OPS[self.op](a.value, b.value))

    @property
    def is_leaf(self) -> bool:
        """Whether this node is a digit (no operator, no children)."""
        return self.op is None

    @property
    def value(self) -> int:
        """The exact (integer) value of the expression."""
        return self._value

    @cached_property
    def depth(self) -> int:
        """Levels of the tree: 1 for a leaf."""
        return 1 + max((c.depth for c in self.children), default=0)

    @cached_property
    def size(self) -> int:
        """Number of nodes (leaves and operators)."""
        return 1 + sum(c.size for c in self.children)

    def postorder(self) -> Iterator[Expr]:
        """Every node, children before parents (the order a tree model evaluates them).

        >>> e = Expr("+", (Expr(leaf=1), Expr(leaf=2)))
        >>> [n.value for n in e.postorder()]
        [1, 2, 3]
        """
        for c in self.children:
            yield from c.postorder()
        yield self

    def tokens(self) -> list[str]:
        """The infix text as tokens, fully parenthesised, for a sequence model.

        >>> Expr("+", (Expr(leaf=1), Expr(leaf=2))).tokens()
        ['(', '1', '+', '2', ')']
        """
        if self.is_leaf:
            return [str(self.leaf)]
        a, b = (c.tokens() for c in self.children)
        if self.op == "max":
            return ["max", "(", *a, ",", *b, ")"]
        return ["(", *a, self.op, *b, ")"]

    def __str__(self) -> str:
        return self._text(top=True)

    def _text(self, top: bool = False) -> str:
        if self.is_leaf:
            return str(self.leaf)
        a, b = (c._text() for c in self.children)
        if self.op == "max":
            return f"max({a}, {b})"
        text = f"{a} {self.op} {b}"
        return text if top else f"({text})"


def _random_tree(rng: np.random.Generator, depth: int, ops: tuple[str, ...],
                 leaf_prob: float) -> Expr:
    if depth <= 1 or rng.random() < leaf_prob:
        return Expr(leaf=int(rng.integers(0, 10)))
    op = ops[int(rng.integers(len(ops)))]
    return Expr(op, (_random_tree(rng, depth - 1, ops, leaf_prob),
                     _random_tree(rng, depth - 1, ops, leaf_prob)))


def expression_trees(n: int, max_depth: int = 4, ops: tuple[str, ...] = ("+", "-", "*"),
                     max_abs_value: int = 100, min_depth: int = 2, seed: int | None = 0
                     ) -> list[Expr]:
    """``n`` random trees of ``ops`` over digit leaves, of depth ``min_depth..max_depth``
    and with ``|value| <= max_abs_value`` (trees outside are drawn again), so that the
    values stay in a range a model can learn.

    >>> import kernelgraph as kg
    >>> trees = kg.data.expression_trees(3, max_depth=3, seed=0)
    >>> [(str(t), t.value) for t in trees]
    [('2 - 1', 1), ('(0 + 5) * 4', 20), ('(9 + 5) + (2 - 3)', 13)]
    >>> all(2 <= t.depth <= 3 and abs(t.value) <= 100 for t in trees)
    True
    >>> all(eval(str(t)) == t.value for t in trees)     # str() is valid Python
    True
    """
    ops = tuple(ops)
    if not ops or any(o not in OPS for o in ops):
        raise ValueError(f"ops must be a non-empty subset of {tuple(OPS)}, got {shown(ops)}")
    if not 1 <= min_depth <= max_depth:
        raise ValueError(f"need 1 <= min_depth <= max_depth, got {min_depth}, {max_depth}")
    if max_abs_value < 9:
        raise ValueError(f"max_abs_value must be >= 9 (a digit), got {max_abs_value}")
    rng = np.random.default_rng(seed)
    trees: list[Expr] = []
    while len(trees) < n:
        t = _random_tree(rng, max_depth, ops, leaf_prob=0.3)
        if t.depth >= min_depth and abs(t.value) <= max_abs_value:
            trees.append(t)
    return trees
