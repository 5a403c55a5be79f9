"""``torch.einsum``: Einstein summation composed of public ops (diagonals by an identity
mask, sums, transposes, reshapes, broadcasts and batched ``matmul``), so it runs in both
modes and has gradients with no kernel of its own.

The equation is parsed as PyTorch parses it (letters, ``,``, ``->``, ``...`` and spaces;
the implicit output is the ellipsis dims, then the letters used once, uppercase before
lowercase); the operands are then contracted two at a time, left to right: the labels both
share and still need become the batch of one ``matmul``, the labels both share and no
longer need its inner dimension.

>>> import kernelgraph as kg
>>> a, b = kg.ones(2, 3), kg.ones(3, 4)
>>> kg.einsum("ij,jk->ik", a, b).shape
torch.Size([2, 4])
>>> kg.einsum("ii", kg.eye(3)).item()            # the trace
3.0
>>> kg.einsum("i,j->ij", kg.tensor([1.0, 2.0]), kg.tensor([1.0, 10.0])).tolist()
[[1.0, 10.0], [2.0, 20.0]]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..graph import shape_str
from .indexing import getitem, normalize_index
from .linalg import matmul
from .reduce import sum as reduce_sum
from .shape import broadcast_to, reshape, transpose

__all__ = ["einsum"]

_ELLIPSIS = 52  # labels 0..51 are A-Z, a-z; the ellipsis' dims are 52, 53, ...


def _label(ch: str) -> int:
    return ord(ch) - ord("A") if ch <= "Z" else ord(ch) - ord("a") + 26


def _letter(label: int) -> str:
    return chr(ord("A") + label) if label < 26 else chr(ord("a") + label - 26)


def _parse_term(term: str, start: int, which: str) -> list:
    """A term's labels: ints, and None for its ellipsis."""
    out, i = [], 0
    while i < len(term):
        ch = term[i]
        if ch == ".":
            if term[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for {which} that is not part of any "
                                   f"ellipsis")
            if None in out:
                raise RuntimeError(f"einsum(): found '.' for {which} that is not part of any "
                                   f"ellipsis")
            out.append(None)
            i += 3
            continue
        if not (("a" <= ch <= "z") or ("A" <= ch <= "Z")):
            raise RuntimeError(f"einsum(): invalid subscript given at index {start + i} in the "
                               f"equation string, subscripts must be in [a-zA-Z]")
        out.append(_label(ch))
        i += 1
    return out


def parse(equation: str, n_operands: int) -> tuple[list, list | None]:
    """(the labels of each input term, the output's labels or None if implicit)."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a str, got {type(equation).__name__}")
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if "->" in rhs or "-" in rhs or "-" in lhs or ">" in lhs:
        at = eq.index("-", len(lhs) + 2) if "-" in rhs else eq.index("-" if "-" in lhs else ">")
        raise RuntimeError(f"einsum(): invalid subscript given at index {at} in the equation "
                           f"string, subscripts must be in [a-zA-Z]")
    terms, start = [], 0
    for k, term in enumerate(lhs.split(",")):
        terms.append(_parse_term(term, start, f"operand {k}"))
        start += len(term) + 1
    if len(terms) > n_operands:
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < n_operands:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    if not arrow:
        return terms, None
    out = _parse_term(rhs, len(lhs) + 2, "the output")
    seen = set()
    for lab in out:
        if lab in seen:
            what = "..." if lab is None else _letter(lab)
            raise RuntimeError(f"einsum(): output subscript {what} appears more than once in "
                               f"the output")
        seen.add(lab)
        if lab is not None and not any(lab in t for t in terms):
            raise RuntimeError(f"einsum(): output subscript {_letter(lab)} does not appear in "
                               f"the equation for any input operand")
    return terms, out


def _expand(terms: list, shapes: list) -> tuple[list, int]:
    """Each term with its ellipsis replaced by ellipsis labels (right-aligned), and how many
    ellipsis dims there are in all."""
    n_ell, full = 0, []
    for k, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
        letters = len(term) - (None in term)
        if None not in term and letters != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) "
                               f"does not match the number of dimensions ({len(shape)}) for "
                               f"operand {k} and no ellipsis was given")
        if None in term and letters > len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({letters}) "
                               f"is more than the number of dimensions ({len(shape)}) for "
                               f"operand {k}")
        n_ell = max(n_ell, len(shape) - letters)
    for term, shape in zip(terms, shapes, strict=True):
        k = len(shape) - (len(term) - (None in term))
        labels = []
        for lab in term:
            labels.extend(range(_ELLIPSIS + n_ell - k, _ELLIPSIS + n_ell) if lab is None
                          else [lab])
        full.append(labels)
    return full, n_ell


def _diagonal(x, labels: list, shape: list, k: int):
    """Repeated labels of one operand reduced to one axis each: the two axes moved last,
    merged, and every (n+1)-th element taken (a strided view, so the gradient is a
    scatter of the same view)."""
    while len(set(labels)) < len(labels):
        lab = next(lab for lab in labels if labels.count(lab) > 1)
        i = labels.index(lab)
        j = labels.index(lab, i + 1)
        n = shape[i]
        if shape[j] != n:
            raise RuntimeError(f"einsum(): subscript {_letter(lab)} is repeated for operand {k} "
                               f"but the sizes don't match, {shape[j]} != {n}")
        rest = [k for k in range(len(labels)) if k not in (i, j)]
        x = transpose(x, perm=(*rest, i, j))
        x = reshape(x, shape=(*[shape[k] for k in rest], n * n))
        x = getitem(x, index=normalize_index((Ellipsis, slice(None, None, n + 1))))
        labels[:] = [labels[k] for k in rest] + [lab]
        shape[:] = [shape[k] for k in rest] + [n]
    return x


def _sum_out(x, labels: list, shape: list, drop: set):
    axes = tuple(i for i, lab in enumerate(labels) if lab in drop)
    if not axes:
        return x
    for i in reversed(axes):
        del labels[i], shape[i]
    return reduce_sum(x, axis=axes)


def _arrange(x, labels, shape, order, sizes):
    """``x`` with its axes in ``order`` (labels it holds), each broadcast to ``sizes``."""
    perm = tuple(labels.index(lab) for lab in order)
    if perm != tuple(range(len(perm))):
        x = transpose(x, perm=perm)
    want = tuple(sizes[lab] for lab in order)
    if tuple(shape[i] for i in perm) != want:
        x = broadcast_to(x, shape=want)
    return x


def _check_sizes(labels: list, shapes: list) -> None:
    """Each label's sizes across the operands agree or are 1 (broadcast), as PyTorch asks."""
    seen: dict = {}
    for k, (labs, shape) in enumerate(zip(labels, shapes, strict=True)):
        mine: dict = {}
        for lab, n in zip(labs, shape, strict=True):
            mine.setdefault(lab, n)  # a repeated label's own sizes: _diagonal checks them
        for lab, n in mine.items():
            prev = seen.get(lab)
            if prev is not None and prev != n and 1 not in (prev, n):
                if lab >= _ELLIPSIS:
                    raise RuntimeError(f"einsum(): operands do not broadcast: the ellipsis "
                                       f"dims of operand {k} {shape_str(tuple(shape))} do not "
                                       f"broadcast with the earlier operands'")
                raise RuntimeError(f"einsum(): subscript {_letter(lab)} has size {n} for "
                                   f"operand {k} which does not broadcast with previously seen "
                                   f"size {prev}")
            seen[lab] = n if prev in (None, 1) else prev


def _contract(a, la, sa, b, lb, sb, keep: set):
    """Two operands with unique labels -> (result, its labels, its shape)."""
    sizes = {}
    for lab, n in [*zip(la, sa, strict=True), *zip(lb, sb, strict=True)]:
        sizes[lab] = n if sizes.get(lab) in (None, 1) else sizes[lab]  # (checked up front)
    batch = [lab for lab in la if lab in lb and lab in keep]
    inner = [lab for lab in la if lab in lb and lab not in keep]
    left = [lab for lab in la if lab not in lb]
    right = [lab for lab in lb if lab not in la]
    size = lambda labs: int(np.prod([sizes[lab] for lab in labs], dtype=np.int64))  # noqa: E731
    a = reshape(_arrange(a, la, sa, batch + left + inner, sizes),
                shape=(size(batch), size(left), size(inner)))
    b = reshape(_arrange(b, lb, sb, batch + inner + right, sizes),
                shape=(size(batch), size(inner), size(right)))
    labels = batch + left + right
    shape = [sizes[lab] for lab in labels]
    return reshape(matmul(a, b), shape=tuple(shape)), labels, shape


def einsum(equation, *operands):
    """Sum of products over the labels of ``equation`` (``torch.einsum``), e.g.
    ``"bij,bjk->bik"`` (batched matmul), ``"ii->i"`` (diagonal), ``"...ij->...ji"``; the
    operands may also be given as one list, or in PyTorch's sublist form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``.

    >>> import kernelgraph as kg
    >>> kg.einsum("ij->", kg.ones(2, 3)).item()
    6.0
    >>> kg.einsum("ij,jk", [kg.ones(2, 3), kg.ones(3, 1)]).tolist()
    [[3.0], [3.0]]
    """
    if not isinstance(equation, str):  # the sublist form: operand, labels, operand, labels...
        if not hasattr(equation, "shape"):
            raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                            f"{type(equation).__name__}")
        equation, operands = _from_sublists((equation, *operands))
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    terms, out = parse(equation, len(operands))
    shapes = []
    for k, x in enumerate(operands):
        shape = getattr(x, "shape", None)
        if shape is None or None in tuple(shape):
            raise ValueError(f"einsum(): operand {k}'s shape must be known, got "
                             f"{'unknown' if shape is None else shape_str(tuple(shape))}")
        if D.as_dtype(x.dtype) == D.bool_:
            raise RuntimeError("einsum(): bool operands are not supported")
        shapes.append(list(tuple(shape)))
    labels, n_ell = _expand(terms, shapes)
    _check_sizes(labels, shapes)
    ell = list(range(_ELLIPSIS, _ELLIPSIS + n_ell))
    if out is None:
        once = sorted(lab for lab in {lab for t in labels for lab in t}
                      if lab < _ELLIPSIS and sum(t.count(lab) for t in labels) == 1)
        out = ell + once
    elif None in out:
        i = out.index(None)
        out = out[:i] + ell + out[i + 1:]
    xs = [_diagonal(x, lab, shape, k)
          for k, (x, lab, shape) in enumerate(zip(operands, labels, shapes, strict=True))]
    # labels used by one operand only and not in the output are summed out at once
    for k in range(len(xs)):
        others = {lab for j, t in enumerate(labels) if j != k for lab in t}
        xs[k] = _sum_out(xs[k], labels[k], shapes[k], set(labels[k]) - others - set(out))
    x, la, sa = xs[0], labels[0], shapes[0]
    for k in range(1, len(xs)):
        keep = set(out) | {lab for t in labels[k + 1:] for lab in t}
        x, la, sa = _contract(x, la, sa, xs[k], labels[k], shapes[k], keep)
    x = _sum_out(x, la, sa, set(la) - set(out))
    if la != out:
        x = transpose(x, perm=tuple(la.index(lab) for lab in out))
    return x


def _from_sublists(args: tuple) -> tuple[str, tuple]:
    """PyTorch's sublist form as an equation and its operands."""
    out = None
    if len(args) % 2 == 1:  # a trailing list names the output
        out, args = args[-1], args[:-1]
    operands, terms = tuple(args[0::2]), list(args[1::2])

    def term(labels) -> str:
        chars = []
        for lab in labels if isinstance(labels, list | tuple) else [labels]:
            if lab is Ellipsis:
                chars.append("...")
            elif isinstance(lab, int | np.integer) and 0 <= lab < 52:
                chars.append(_letter(int(lab)))
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the "
                                 "valid range [0, 52)")
        return "".join(chars)

    eq = ",".join(term(t) for t in terms) + ("" if out is None else "->" + term(out))
    return eq, operands
