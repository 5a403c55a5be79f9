"""Scalar bodies of PyTorch's bitwise ops (``bitwise_and``, ``bitwise_or``, ``bitwise_xor``)
on integers and bools, and their CPU ufuncs (numba compiles one loop per dtype, as for
:mod:`.cpu`'s bodies; the CUDA map kernel is built from the same bodies)."""

from __future__ import annotations

from .cpu import UfuncKernel, _same


def _bitwise_and(a, b): return a & b
def _bitwise_or(a, b): return a | b
def _bitwise_xor(a, b): return a ^ b


bitwise_and = UfuncKernel("bitwise_and", _bitwise_and, _same(2))
bitwise_or = UfuncKernel("bitwise_or", _bitwise_or, _same(2))
bitwise_xor = UfuncKernel("bitwise_xor", _bitwise_xor, _same(2))
