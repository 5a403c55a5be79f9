"""The float32 Box-Muller of PyTorch's CPU ``normal_``, to the bit.

On an AVX2 (or AVX-512) CPU, ATen turns each block of 16 uniforms into normals with
vectorised Cephes approximations of ``log`` and ``sincos`` (``avx_mathfun.h``), compiled
with fused multiply-adds. This module evaluates the same Cephes polynomials, in the same
order and with the same fusions, in NumPy float32, so ``kg.randn(100)`` equals
``torch.randn(100)`` bit for bit. A float32 FMA is emulated exactly enough: the product of
two float32 values is exact in float64, and the sum is rounded once to float64 and then to
float32 (a double rounding that differs from one rounding only in rare ties).

>>> import numpy as np
>>> u = np.array([[0.5] * 16], np.float32)
>>> [round(float(v), 4) for v in box_muller16_f32(u, np.float32(0), np.float32(1))[0, :2]]
[-1.1774, -1.1774]
"""

from __future__ import annotations

import numpy as np

__all__ = ["box_muller16_f32"]

_F = np.float32
_D = np.float64

_LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
             1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
             3.3333331174e-1)
_LOG_Q1, _LOG_Q2 = -2.12194440e-4, 0.693359375
_SQRT_HALF = 0.707106781186547524
_FOUR_OVER_PI = 1.27323954473516
_DP = (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)
_COS_POLY = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
_SIN_POLY = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
_MIN_NORMAL = np.array([0x00800000], np.int32).view(_F)[0]


def _fma(a, b, c) -> np.ndarray:
    """float32 a * b + c with one rounding (see the module docstring)."""
    return (np.asarray(a, _F).astype(_D) * np.asarray(b, _F).astype(_D)
            + np.asarray(c, _F).astype(_D)).astype(_F)


def _horner(x, coefs) -> np.ndarray:
    y = np.full_like(x, _F(coefs[0]))
    for c in coefs[1:]:
        y = _fma(y, x, _F(c))
    return y


def _log(x: np.ndarray) -> np.ndarray:
    """Cephes' logf as avx_mathfun evaluates it (x > 0)."""
    x = np.maximum(x, _MIN_NORMAL)
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F) + _F(1)
    m = ((bits & ~0x7F800000) | np.array([0.5], _F).view(np.int32)[0]).view(_F)  # [0.5, 1)
    small = m < _F(_SQRT_HALF)
    x = (m - _F(1)) + np.where(small, m, _F(0))
    e = e - np.where(small, _F(1), _F(0))
    z = x * x
    y = _horner(x, _LOG_POLY) * x
    y = _fma(y, z, e * _F(_LOG_Q1))   # y * z + e * q1, the compiler fuses the first product
    y = _fma(z, _F(-0.5), y)          # y - z / 2
    return _fma(e, _F(_LOG_Q2), x + y)


def _sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cephes' sinf and cosf together, as avx_mathfun's sincos evaluates them."""
    sin_negative = np.signbit(x)
    x = np.abs(x)
    j = (x * _F(_FOUR_OVER_PI)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F)
    sin_negative ^= (j & 4) != 0
    cos_negative = (~(j - 2) & 4) != 0
    first = (j & 2) == 0  # which polynomial is the sine
    for dp in _DP:  # x - y * pi/4 in three parts ("extended precision modular arithmetic")
        x = _fma(y, _F(dp), x)
    z = x * x
    yc = _horner(z, _COS_POLY) * z
    yc = _fma(yc, z, -(z * _F(0.5)))
    yc = yc + _F(1)
    ys = _horner(z, _SIN_POLY) * z
    ys = _fma(ys, x, x)
    s = np.where(first, ys, yc)
    c = np.where(first, yc, ys)
    return np.where(sin_negative, -s, s), np.where(cos_negative, -c, c)


def box_muller16_f32(u: np.ndarray, mean, std) -> np.ndarray:
    """Blocks of 16 float32 uniforms (shape (k, 16)) to normals, as ATen's
    ``normal_fill_16_AVX2``: ``u1 = 1 - u[:8]``, ``u2 = u[8:]``, radius
    ``sqrt(-2 log u1)``, angle ``2 pi u2``; cosines first, then sines, ``* std + mean``."""
    u = np.asarray(u, _F)
    u1 = _F(1) - u[:, :8]
    u2 = u[:, 8:]
    radius = np.sqrt(_F(-2) * _log(u1))
    s, c = _sincos(_F(2.0 * np.pi) * u2)
    out = np.concatenate([_fma(radius * c, std, mean), _fma(radius * s, std, mean)], axis=1)
    return out.astype(_F)
