# ffntest.py — shared helpers of the Python tests: the float64 oracle of every activation and
# derivative (stable textbook forms, NumPy + math.erfc; independent of libffn and of torch), ulp
# measurement, bf16 bit conversions done in NumPy, the tolerance table, and a safetensors reader
# written here (json + NumPy) to read the Hugging Face fixtures without going through ffn.
#
# The tests run from ctest (tests/python/CMakeLists.txt) with PYTHONPATH=python and FFN_LIBRARY
# set to the build's libffn.so; FFN_TEST_DATA points at tests/data.
import json
import math
import os
import struct
import sys
import unittest

try:
    import numpy as np
except ImportError:  # a missing dependency is a failure with a remedy, not a skip
    sys.exit("tests/python: NumPy is missing for %s: install python3-numpy (scripts/deps.sh)"
             % sys.executable)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
DATA = os.environ.get("FFN_TEST_DATA", os.path.join(ROOT, "tests", "data"))
sys.path.insert(0, os.path.join(ROOT, "python"))

SEED = int(os.environ.get("FFN_TEST_SEED", "20261202"))

ACTS = ["gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "identity", "quick_gelu"]

# --- the float64 oracle -------------------------------------------------------------------------

_erfc = np.frompyfunc(math.erfc, 1, 1)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def sigmoid(z):
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


def _u(x):
    return SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)


def ref_act(name, x):
    """act(x) in float64, stable forms (no 1 + tanh, no 1 + erf cancellation)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "gelu_tanh":
            return x * sigmoid(2.0 * _u(x))
        if name == "gelu_erf":
            return 0.5 * x * _erfc(-x / math.sqrt(2.0)).astype(np.float64)
        if name == "silu":
            return x * sigmoid(x)
        if name == "relu":
            return np.where(x > 0, x, 0.0)
        if name == "sigmoid":
            return sigmoid(x)
        if name == "identity":
            return x.copy()
        if name == "quick_gelu":
            return x * sigmoid(1.702 * x)
    raise KeyError(name)


def ref_grad(name, x):
    """act'(x) in float64, from σ and its complement (never 1 - σ)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if name == "gelu_tanh":
            s, c = sigmoid(2.0 * _u(x)), sigmoid(-2.0 * _u(x))
            du = SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * x * x)
            return s + x * s * c * 2.0 * du
        if name == "gelu_erf":
            return 0.5 * _erfc(-x / math.sqrt(2.0)).astype(np.float64) + \
                x * np.exp(-0.5 * x * x) * INV_SQRT_2PI
        if name == "silu":
            return sigmoid(x) * (1.0 + x * sigmoid(-x))
        if name == "relu":
            return np.where(x > 0, 1.0, 0.0)
        if name == "sigmoid":
            return sigmoid(x) * sigmoid(-x)
        if name == "identity":
            return np.ones_like(x)
        if name == "quick_gelu":
            return sigmoid(1.702 * x) * (1.0 + 1.702 * x * sigmoid(-1.702 * x))
    raise KeyError(name)


# --- tolerances ---------------------------------------------------------------------------------
# f32 results against the float64 oracle, in ulps of the float32 reference value: the library's
# contract (docs/numerics.md) plus 0.5 ulp for the distance from the exact value to the correctly
# rounded one. Backward: 8 ulp, plus an absolute floor of BWD_ABS_EPS · ε32 · |dy| for the
# zeros of the derivative (SiLU' at -1.2785, GeLU' at -0.7518), where only absolute accuracy is
# reachable. Gated ops: act and product errors add (2·bound + 1 ulp of h).
FWD_ULP = {"gelu_tanh": 4.5, "gelu_erf": 4.5, "silu": 2.5, "relu": 0.0, "sigmoid": 2.5,
           "identity": 0.0, "quick_gelu": 2.5}
BWD_ULP = 8.5
BWD_ABS_EPS = 4.0
EPS32 = 2.0 ** -24
# bf16 / f16 results: the f32 result rounded once; the oracle rounded once from float64. They
# differ by at most 1 ulp of the storage type, and only where the f32 result lies within a few
# f32 ulps of a rounding boundary: STORAGE_MISMATCH_MAX is the share of elements allowed to.
STORAGE_ULP = 1
STORAGE_MISMATCH_MAX = 0.01


def ulp32(ref):
    """The spacing of float32 at |ref| (ulp of the f32 value), as float64."""
    r = np.abs(np.asarray(ref, dtype=np.float64)).astype(np.float32)
    return np.spacing(r).astype(np.float64)


def ulps32(got, ref):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.abs(got - ref) / ulp32(ref)


# --- bf16 in NumPy (bits in uint16) -----------------------------------------------------------

def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """Round to nearest even, NaN kept quiet; the usual bit recipe, written here."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), r).astype(np.uint16)


def f64_to_bf16(x):
    """float64 -> bf16 with one rounding (via the two-step only where it is exact)."""
    x = np.asarray(x, dtype=np.float64)
    f = x.astype(np.float32)
    # f32 rounding can create a tie that the f64 value does not have: nudge those towards x.
    err = x - f.astype(np.float64)
    b = f.view(np.uint32)
    tie = (b & 0xFFFF) == 0x8000
    nudged = np.where(tie & (err > 0), np.nextafter(f, np.float32(np.inf)),
                      np.where(tie & (err < 0), np.nextafter(f, np.float32(-np.inf)), f))
    return f32_to_bf16(nudged)


def all_bits16():
    return np.arange(65536, dtype=np.uint32).astype(np.uint16)


def storage_ulps(got_bits, ref_bits, kind):
    """|difference| in ulps of the storage type between two arrays of bf16/f16 bits (finite,
    same sign): the distance between the bit patterns' orders."""
    g = np.asarray(got_bits, dtype=np.uint16).astype(np.int64)
    r = np.asarray(ref_bits, dtype=np.uint16).astype(np.int64)

    def order(v):
        mag = v & 0x7FFF
        return np.where(v & 0x8000, -mag, mag)
    return np.abs(order(g) - order(r))


# --- safetensors, read here ---------------------------------------------------------------------

def require_torch():
    try:
        import torch
    except ImportError:
        sys.exit("tests/python: PyTorch is missing for %s: install python3-torch "
                 "(scripts/deps.sh)" % sys.executable)
    return torch


def read_safetensors(path):
    """{name: float32/uint16 array}, plus {"__metadata__": dict}: the format read directly."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {"__metadata__": header.pop("__metadata__", {})}
    kinds = {"F32": np.float32, "BF16": np.uint16, "F16": np.float16}
    for name, h in header.items():
        a, b = h["data_offsets"]
        out[name] = np.frombuffer(raw[base + a:base + b], dtype=kinds[h["dtype"]]).reshape(
            h["shape"]).copy()
    return out


def fixture_dirs():
    """(group, name, path) of every Hugging Face fixture with an io.safetensors."""
    out = []
    for group in ("hf", "hf_more"):
        d = os.path.join(DATA, group)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if os.path.isfile(os.path.join(p, "io.safetensors")):
                out.append((group, name, p))
    return out


def subprocess_env():
    """The environment for a child Python that imports ffn from this source tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def rng(offset=0):
    return np.random.default_rng(SEED + offset)


class TestCase(unittest.TestCase):
    """unittest.TestCase with array helpers that print the first failing elements."""

    def assertWithin(self, what, got, ref, bound, ulps=None, show=None, max_show=10):
        got = np.asarray(got, dtype=np.float64)
        ref = np.asarray(ref, dtype=np.float64)
        err = np.abs(got - ref)
        bad = ~(err <= bound) & ~(np.isnan(got) & np.isnan(ref))
        if bad.any():
            idx = np.flatnonzero(bad)[:max_show]
            lines = ["%s: %d of %d elements outside the bound (seed %d)" % (
                what, int(bad.sum()), bad.size, SEED)]
            for i in idx:
                extra = "" if show is None else " input %r" % (show.ravel()[i],)
                lines.append("  [%d]%s got %.9g ref %.12g err %.3g bound %.3g" % (
                    i, extra, got.ravel()[i], ref.ravel()[i], err.ravel()[i],
                    np.broadcast_to(bound, err.shape).ravel()[i]))
            self.fail("\n".join(lines))
