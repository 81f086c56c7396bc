# test_cuda.py — ffn's functions, autograd functions and modules on CUDA tensors (the library's
# CUDA backend), against torch's own ops on the GPU, the float64 oracle of ffntest.py, and ffn's
# CPU kernels on the same inputs:
# - every op x activation x dtype (f32 on 133,010 inputs; bf16 and f16 on all 65,536 patterns):
#   the f32 results (f32 outputs, and 16-bit inputs with out_dtype="f32") within the contract's
#   bound of the oracle and of the CPU's results; each CPU 16-bit output is the round-to-nearest-
#   even of the kernel's own f32 result, bit for bit (the contract), and each GPU one is that or
#   one ulp from it, on at most 1 % of the inputs (the GPU's 16-bit tier: math sized for a 16-bit
#   output), so the GPU's and the CPU's 16-bit outputs are one ulp apart at most;
#   against torch's float64 ops on the GPU, and its own bf16 / f16 ops; accuracy="high";
#   bf16_parity against PyTorch's eager rounding;
# - torch's current stream: work ordered on a non-default stream (a spin kernel keeps it busy
#   while ffn queues behind a copy, and a torch op reads ffn's output), the stream switched per
#   call, nothing waited for on the host; a context with its own stream; a CUDA graph capture;
# - strided and non-contiguous tensors (bitwise equal to contiguous copies), fused gate/up halves,
#   refused layouts and copy=True; in place; the accurate tier's 16-bit lookup-table path
#   (n >= 2^25) bitwise equal to the kernels; conversions against torch's;
# - autograd (ffn.torch.act / glu / GatedActivation) against torch autograd in float64 on the
#   GPU, also on a non-default stream;
# - errors: the library's messages, outputs untouched; CPU and CUDA operands mixed; contexts of
#   the wrong device; a device that does not exist; another thread's context;
# - FFN blocks on CUDA tensors: against the CPU module and a plain torch MLP where the library
#   runs blocks on CUDA, else its own FFN_STATUS_UNSUPPORTED message (reported as a skip).
#
# Without a CUDA device (or a libffn that cannot run CUDA) every test is skipped with the reason
# and the script exits 77 (ctest: skipped); FFN_TEST_REQUIRE_CUDA=1 makes that a failure (the GPU
# run). FFN_TEST_CUDA_DRYRUN=1 runs the device-independent tests with the CPU standing in for the
# GPU (torch CPU tensors, ffn's CPU context): a check of the tests themselves on a machine
# without a GPU.
import copy
import os
import sys
import threading
import unittest

import ffntest

ffntest.require_torch()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import ffn  # noqa: E402
import ffn.torch as ft  # noqa: E402
from ffntest import (ACTS, BWD_ABS_EPS, BWD_ULP, EPS32, FWD_ULP, ref_act, ref_grad,  # noqa: E402
                     ulp32)

DRY = os.environ.get("FFN_TEST_CUDA_DRYRUN") == "1"
REQUIRE = os.environ.get("FFN_TEST_REQUIRE_CUDA") == "1"
CUDA_OK, CUDA_WHY = ffn.backend_available("cuda")
if DRY:
    SKIP = None
    DEV = torch.device("cpu")
elif not torch.cuda.is_available():
    SKIP = "no CUDA device for torch %s (built for CUDA %s)" % (torch.__version__,
                                                               torch.version.cuda)
    DEV = None
elif not CUDA_OK:
    SKIP = "libffn cannot run CUDA: %s (%s)" % (CUDA_WHY, ffn.library_path)
    DEV = None
else:
    SKIP = None
    DEV = torch.device("cuda", torch.cuda.current_device())
GPU_ONLY = "FFN_TEST_CUDA_DRYRUN: needs a GPU"
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
TORCH = {"gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "gelu_erf": F.gelu,
         "silu": F.silu, "relu": F.relu, "sigmoid": torch.sigmoid, "identity": lambda t: t * 1,
         "quick_gelu": lambda t: t * torch.sigmoid(1.702 * t)}
TORCH64_DOMAIN = {"gelu_tanh": -4.0, "gelu_erf": -4.0}  # see test_torch_ops.py
TORCH16_MISMATCH_MAX = 0.05
# torch has no quick-GeLU op: its 16-bit x·σ(1.702x) rounds 1.702x and σ to the dtype before the
# product (three roundings), so where it still lands within 1 ulp it differs from the once-rounded
# value more often (16 % of the f16 inputs on an H200): only the 1-ulp agreement is asserted there.
TORCH16_COMPOSED = {"quick_gelu"}
# A spin kernel of this many cycles keeps a stream busy for ~50 ms (about 2 GHz): far longer
# than the host needs to queue the calls behind it.
SLEEP_CYCLES = 100_000_000
FLT_MAX = float(np.finfo(np.float32).max)


def f32_inputs(n=60000, offset=0):
    """Normal, wide uniform and the hard regions, as test_numpy.py: 133,010 finite f32."""
    r = ffntest.rng(offset)
    parts = [r.standard_normal(n) * 3, r.uniform(-20, 20, n),
             -1.2785 + r.uniform(-1e-3, 1e-3, 2000), -0.7518 + r.uniform(-1e-3, 1e-3, 2000),
             r.uniform(-1e-6, 1e-6, 2000), r.uniform(-150, 150, 2000),
             np.array([0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0, 92.0, -92.0, 1e4, -1e4])]
    return np.concatenate(parts).astype(np.float32)


def host(t):
    return t.detach().cpu()


def f64(t):
    """A tensor's values as a float64 NumPy array."""
    return host(t).double().numpy()


def bits(t):
    """The bit patterns of a 16-bit tensor as uint16."""
    return host(t).contiguous().view(torch.int16).numpy().view(np.uint16)


def dev(a, dtype=None):
    """A NumPy array (f32, or uint16 bits when dtype is 16-bit) as a tensor on DEV."""
    if dtype in (torch.bfloat16, torch.float16):
        return torch.from_numpy(np.asarray(a, dtype=np.uint16).view(np.int16)).view(dtype).to(DEV)
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(DEV)


def sync():
    if DEV.type == "cuda":
        torch.cuda.synchronize(DEV)


class CudaCase(ffntest.TestCase):
    def setUp(self):
        if SKIP:
            self.skipTest(SKIP)

    def gpu_only(self):
        if DEV.type != "cuda":
            self.skipTest(GPU_ONLY)

    def cuda_ctx(self, **kw):
        return ffn.Context(backend="cuda", device=DEV, **kw) if DEV.type == "cuda" else \
            ffn.Context(**{k: v for k, v in kw.items() if k != "stream"})


# --- every op, against the oracle and the CPU --------------------------------------------------

def _inputs(dt):
    """(x, other, dh) as NumPy (f32, or uint16 bits), the inputs' f64 values, and which are
    finite: f32 random + hard regions; 16-bit: every pattern, the second and third operands
    random normal in that dtype."""
    r = ffntest.rng(41)
    if dt == "f32":
        x = f32_inputs()
        o = r.standard_normal(x.size).astype(np.float32)
        d = r.standard_normal(x.size).astype(np.float32)
        return (x, o, d), (x.astype(np.float64), o.astype(np.float64), d.astype(np.float64))
    x = ffntest.all_bits16()
    n = x.size
    if dt == "bf16":
        o = ffntest.f32_to_bf16(r.standard_normal(n).astype(np.float32))
        d = ffntest.f32_to_bf16(r.standard_normal(n).astype(np.float32))
        vals = [ffntest.bf16_to_f32(v).astype(np.float64) for v in (x, o, d)]
    else:
        o = r.standard_normal(n).astype(np.float16).view(np.uint16)
        d = r.standard_normal(n).astype(np.float16).view(np.uint16)
        vals = [v.view(np.float16).astype(np.float64) for v in (x, o, d)]
    return (x, o, d), tuple(vals)


def _oracle(op, a, g, u, d):
    """The float64 reference of each output of op, with its bound (in the output's f32 units)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "act":
            ref = ref_act(a, g)
            return [(ref, FWD_ULP[a] * ulp32(ref))]
        if op == "act_backward":
            ref = u * ref_grad(a, g)  # u plays dy
            return [(ref, BWD_ULP * ulp32(ref) + BWD_ABS_EPS * EPS32 * np.abs(u))]
        if op == "glu":
            ref = ref_act(a, g) * u
            return [(ref, (2 * FWD_ULP[a] + 1) * ulp32(ref))]
        dup = d * u
        rg, ru = dup * ref_grad(a, g), d * ref_act(a, g)
        return [(rg, (BWD_ULP + 1) * ulp32(rg) + BWD_ABS_EPS * EPS32 * np.abs(dup)),
                (ru, (2 * FWD_ULP[a] + 1) * ulp32(ru))]


def _call(op, a, t, ctx=None, out_dtype=None):
    """op on tensors t = (x, other, dh): a list of outputs."""
    x, o, d = t
    if op == "act":
        return [ffn.act(x, a, ctx=ctx, out_dtype=out_dtype)]
    if op == "act_backward":
        return [ffn.act_backward(x, o, a, ctx=ctx, out_dtype=out_dtype)]
    if op == "glu":
        return [ffn.glu(x, o, a, ctx=ctx, out_dtype=out_dtype)]
    return list(ffn.glu_backward(x, o, d, a, ctx=ctx, out_dtype=out_dtype))


class TestOpsAgainstCpuAndOracle(CudaCase):
    def check(self, op, dt):
        tdt = DTYPES[dt]
        arrays, vals = _inputs(dt)
        tdev = [dev(v, tdt) for v in arrays]
        tcpu = [host(v) for v in tdev]
        finite = np.isfinite(vals[0]) & np.isfinite(vals[1]) & np.isfinite(vals[2])
        for a in ACTS:
            with self.subTest(op=op, dtype=dt, act=a):
                g32 = _call(op, a, tdev, out_dtype="f32")
                c32 = _call(op, a, tcpu, out_dtype="f32")
                oracle = _oracle(op, a, *vals)
                for k, (ref, bound) in enumerate(oracle):
                    self.assertEqual(g32[k].device, DEV)
                    self.assertEqual(g32[k].dtype, torch.float32)
                    with np.errstate(invalid="ignore"):
                        m = finite & (np.abs(ref) <= FLT_MAX)  # finite, and finite in f32
                    what = "%s %s %s out %d" % (op, a, dt, k)
                    gv, cv = f64(g32[k]), f64(c32[k])
                    self.assertWithin(what + " cuda vs oracle", gv[m], ref[m], bound[m],
                                      show=vals[0][m])
                    self.assertWithin(what + " cuda vs cpu", gv[m], cv[m], 2 * bound[m],
                                      show=vals[0][m])
                    # Special inputs (16-bit NaN / inf patterns): what the CPU gives.
                    s = ~m
                    np.testing.assert_array_equal(np.isnan(gv[s]), np.isnan(cv[s]), what)
                    nn_ = s & ~np.isnan(cv)
                    np.testing.assert_array_equal(gv[nn_], cv[nn_], what + " specials")
                if dt == "f32":
                    continue
                g16 = _call(op, a, tdev)
                c16 = _call(op, a, tcpu)
                for k in range(len(g16)):
                    self.assertEqual(g16[k].dtype, tdt)
                    with np.errstate(invalid="ignore"):
                        m = finite & (np.abs(oracle[k][0]) <= FLT_MAX)
                    self.check16("%s %s %s out %d" % (op, a, dt, k), g16[k], g32[k], c16[k],
                                 c32[k], oracle[k], m)

    def check16(self, what, g16, g32, c16, c32, oracle, m):
        """The contract for 16-bit outputs: round(own f32 result) on the CPU; on the GPU (the
        16-bit tier of the default accuracy) that, or on <= 1 % of elements another value within
        the contract's bound in ulps of the 16-bit type (oracle: the reference and its f32
        bound, m: where it applies)."""
        gb, cb = bits(g16), bits(c16)
        tier16 = np.zeros(gb.shape, dtype=bool)  # the GPU's own 16-bit values (checked apart)
        for side, r16, r32 in (("cuda", g16, g32), ("cpu", c16, c32)):
            rounded = r32.to(r16.dtype)  # torch's own RNE, on the tensor's device
            nan = np.isnan(f64(r16)) & np.isnan(f64(rounded))
            bad = (bits(r16) != bits(rounded)) & ~nan
            if side == "cuda" and bad.any():
                self.assertLessEqual(int(bad.sum()), bad.size // 100, "%s: cuda 16-bit output "
                                     "differs from the rounding of its f32 result at %d elements"
                                     % (what, int(bad.sum())))
                # The f32 bound (absolute, in ulps of f32 at the reference's scale) in ulps of the
                # 16-bit type: 2^16 (bf16) or 2^13 (f16) times larger, at least one subnormal ulp.
                bf = r16.dtype == torch.bfloat16
                ref, bound = oracle
                w = bad & m
                tol = np.maximum(bound[w] * (2.0**16 if bf else 2.0**13), 2.0**-133 if bf else
                                 2.0**-24)
                self.assertWithin(what + " cuda 16-bit vs oracle", f64(r16)[w], ref[w], tol,
                                  show=np.flatnonzero(w))
                tier16 = bad
                continue
            self.assertFalse(bad.any(), "%s: %s 16-bit output is not the rounding of its f32 "
                             "result at %d elements, first %s" % (
                                 what, side, int(bad.sum()), np.flatnonzero(bad)[:5]))
        nan = np.isnan(f64(g16)) & np.isnan(f64(c16))
        diff = (gb != cb) & ~nan & ~tier16
        if diff.any():
            self.assertLessEqual(int(ffntest.storage_ulps(gb[diff], cb[diff], "").max()), 1,
                                 what)

    def test_act(self):
        for dt in DTYPES:
            self.check("act", dt)

    def test_act_backward(self):
        for dt in DTYPES:
            self.check("act_backward", dt)

    def test_glu(self):
        for dt in DTYPES:
            self.check("glu", dt)

    def test_glu_backward(self):
        for dt in DTYPES:
            self.check("glu_backward", dt)

    def test_accuracy_high(self):
        x = f32_inputs(offset=3)
        c = self.cuda_ctx(accuracy="high")
        self.assertEqual(c.accuracy, "high")
        for a in ("gelu_tanh", "gelu_erf"):
            ref = ref_act(a, x)
            self.assertWithin("%s high" % a, f64(ffn.act(dev(x), a, ctx=c)), ref,
                              2.5 * ulp32(ref), show=x)

    def test_bf16_parity_like_eager_torch(self):
        # As test_torch_ops.py: parity rounds act(gate) to bf16 before the product; the default
        # mode rounds once. Each within 1 ulp of its float64 model, differing on <= 1 %.
        r = ffntest.rng(12)
        gb = ffntest.all_bits16()
        g = ffntest.bf16_to_f32(gb)
        ub = ffntest.f32_to_bf16(r.standard_normal(gb.size).astype(np.float32))
        u = ffntest.bf16_to_f32(ub).astype(np.float64)
        parity = self.cuda_ctx(bf16_parity=True)
        for a in ACTS:
            with self.subTest(act=a):
                act64 = ref_act(a, g)
                fin = np.isfinite(g) & np.isfinite(act64)
                eager = ffntest.f64_to_bf16(ffntest.bf16_to_f32(ffntest.f64_to_bf16(act64)) * u)
                once = ffntest.f64_to_bf16(act64 * u)
                gd, ud = dev(gb, torch.bfloat16), dev(ub, torch.bfloat16)
                hp = bits(ffn.glu(gd, ud, a, ctx=parity))
                h1 = bits(ffn.glu(gd, ud, a))
                for name, h, model in (("parity", hp, eager), ("default", h1, once)):
                    dd = ffntest.storage_ulps(h, model, "")[fin]
                    self.assertLessEqual(int(dd.max()), 1, "%s %s" % (name, a))
                    self.assertLessEqual(float(np.mean(dd > 0)), 0.01, "%s %s" % (name, a))


# --- against torch's own ops on the GPU ----------------------------------------------------------

class TestAgainstTorch(CudaCase):
    def test_f32_vs_torch_float64(self):
        x = f32_inputs(offset=5)
        x64 = torch.from_numpy(x).double().to(DEV)
        for a in ACTS:
            with self.subTest(act=a):
                y = ffn.act(dev(x), a)
                ref = f64(TORCH[a](x64))
                m = x >= TORCH64_DOMAIN.get(a, -np.inf)
                self.assertWithin("%s vs torch f64" % a, f64(y)[m], ref[m],
                                  FWD_ULP[a] * ulp32(ref[m]), show=x[m])

    def test_16bit_vs_torch_own_ops(self):
        # Where torch's own 16-bit result is within 1 ulp of the correctly rounded value, ffn's
        # is within 1 ulp of torch's (rounded differently on <= 5 %).
        b = ffntest.all_bits16()
        for dt, to_bits, value in (
                ("bf16", ffntest.f64_to_bf16, ffntest.bf16_to_f32),
                ("f16", lambda r: r.astype(np.float16).view(np.uint16),
                 lambda v: v.view(np.float16))):
            x = dev(b, DTYPES[dt])
            xv = f64(x)
            for a in ACTS:
                with self.subTest(dtype=dt, act=a):
                    with np.errstate(over="ignore", invalid="ignore"):
                        ref = to_bits(ref_act(a, xv))
                    fin = np.isfinite(xv) & np.isfinite(value(ref))
                    try:
                        tb = bits(TORCH[a](x))
                    except RuntimeError:  # the dry run's torch 1.13 has no f16 CPU kernels
                        tb = bits(TORCH[a](x.float()).to(x.dtype))
                    ok = fin & (ffntest.storage_ulps(tb, ref, "") <= 1)
                    d = ffntest.storage_ulps(bits(ffn.act(x, a)), tb, "")[ok]
                    self.assertLessEqual(int(d.max()), 1, "%s %s" % (dt, a))
                    if a not in TORCH16_COMPOSED:
                        self.assertLessEqual(float(np.mean(d > 0)), TORCH16_MISMATCH_MAX,
                                             "%s %s" % (dt, a))

    def test_convert_vs_torch(self):
        x = f32_inputs(offset=6)
        x = np.concatenate([x, np.float32([np.inf, -np.inf, 7e4, -7e4, 65504, 65520, 1e-8,
                                           3e-41, -3e-41])])
        xd = dev(x)
        for dt in ("bf16", "f16"):
            with self.subTest(dtype=dt):
                y = ffn.convert(xd, dt)
                self.assertEqual((y.dtype, y.device), (DTYPES[dt], DEV))
                np.testing.assert_array_equal(bits(y), bits(xd.to(DTYPES[dt])))
                back = ffn.convert(y, "f32")
                np.testing.assert_array_equal(host(back).numpy(), host(y.float()).numpy())


# --- streams --------------------------------------------------------------------------------------

def _spin(cycles=SLEEP_CYCLES):
    """Keeps torch's current stream busy (a spin kernel)."""
    torch.cuda._sleep(cycles)


class TestStreams(CudaCase):
    def setUp(self):
        super().setUp()
        self.gpu_only()
        self.src = torch.randn(1 << 20, device=DEV)
        self.ref = ffn.act(self.src, "silu")
        sync()

    def poisoned(self):
        """A tensor of NaN, written and finished before the test's streams start."""
        x = torch.full_like(self.src, float("nan"))
        sync()
        return x

    def test_queued_on_the_current_stream(self):
        x = self.poisoned()
        s = torch.cuda.Stream(DEV)
        with torch.cuda.stream(s):
            _spin()
            x.copy_(self.src)         # torch, on s, after the spin
            y = ffn.act(x, "silu")    # ffn must follow on s: reading NaN would mean it did not
            z = y * 2                 # torch, on s, reads ffn's output
            c = ffn.get_context(DEV)
            self.assertEqual(c.stream, s.cuda_stream)
            self.assertFalse(s.query(), "the host waited for the stream")
        s.synchronize()
        torch.testing.assert_close(z, 2 * self.ref, rtol=0, atol=0)
        # Back on the default stream: the context follows it again.
        ffn.act(self.src, "silu")
        self.assertEqual(c.stream, torch.cuda.current_stream(DEV).cuda_stream)

    def test_streams_switch_per_call(self):
        s1, s2 = torch.cuda.Stream(DEV), torch.cuda.Stream(DEV)
        outs = []
        for i in range(6):
            s = (s1, s2)[i % 2]
            s.wait_stream(torch.cuda.current_stream(DEV))
            with torch.cuda.stream(s):
                outs.append(ffn.glu(self.src, self.src, "silu"))
                self.assertEqual(ffn.get_context(DEV).stream, s.cuda_stream)
        sync()
        ref = ffn.glu(self.src, self.src, "silu")
        for o in outs:
            torch.testing.assert_close(o, ref, rtol=0, atol=0)

    def check_own_stream(self, stream, handle):
        c = ffn.Context(backend="cuda", device=DEV, stream=stream)
        self.assertFalse(c.follows_current_stream)
        self.assertEqual(c.stream, handle)
        x = self.poisoned()
        with torch.cuda.stream(torch.cuda.ExternalStream(handle, device=DEV)):
            _spin()
            x.copy_(self.src)
        y = ffn.act(x, "silu", ctx=c)  # called from the default stream, queued on the context's
        torch.cuda.current_stream(DEV).synchronize()
        self.assertFalse(torch.cuda.ExternalStream(handle, device=DEV).query())
        c.synchronize()
        torch.testing.assert_close(y, self.ref, rtol=0, atol=0)

    def test_context_with_its_own_stream(self):
        s = torch.cuda.Stream(DEV)
        self.check_own_stream(s, s.cuda_stream)
        self.check_own_stream(s.cuda_stream, s.cuda_stream)  # a cudaStream_t given as an int

    def test_autograd_on_a_stream(self):
        x = self.src.clone().requires_grad_()
        dy = torch.randn_like(self.src)
        s = torch.cuda.Stream(DEV)
        s.wait_stream(torch.cuda.current_stream(DEV))
        with torch.cuda.stream(s):
            _spin()
            y = ft.act(x, "silu")
            y.backward(dy)
        torch.cuda.current_stream(DEV).wait_stream(s)
        torch.testing.assert_close(y.detach(), self.ref, rtol=0, atol=0)
        torch.testing.assert_close(x.grad, ffn.act_backward(self.src, dy, "silu"), rtol=0,
                                   atol=0)

    def test_cuda_graph(self):
        x, y = self.src.clone(), torch.empty_like(self.src)
        s = torch.cuda.Stream(DEV)
        s.wait_stream(torch.cuda.current_stream(DEV))
        with torch.cuda.stream(s):  # warm-up on a side stream, as torch's graph docs do
            ffn.act(x, "gelu_tanh", out=y)
        torch.cuda.current_stream(DEV).wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            ffn.act(x, "gelu_tanh", out=y)
        x.copy_(torch.randn_like(x))
        g.replay()
        sync()
        torch.testing.assert_close(y, ffn.act(x, "gelu_tanh"), rtol=0, atol=0)

    def test_another_thread(self):
        seen = {}

        def work():
            seen["ctx"] = ffn.get_context(DEV)
            seen["y"] = ffn.act(self.src, "silu")
            torch.cuda.current_stream(DEV).synchronize()

        th = threading.Thread(target=work)
        th.start()
        th.join()
        self.assertIsNot(seen["ctx"], ffn.get_context(DEV))
        torch.testing.assert_close(seen["y"], self.ref, rtol=0, atol=0)


# --- layouts, in place ----------------------------------------------------------------------------

class TestLayouts(CudaCase):
    def setUp(self):
        super().setUp()
        g = torch.Generator().manual_seed(ffntest.SEED)
        self.fused = torch.randn(37, 130, generator=g).to(DEV)
        self.x3 = torch.randn(3, 5, 16, generator=g).to(DEV)

    def test_strided_equal_contiguous(self):
        cases = {"column slice": self.fused[:, 3:40], "every other column": self.fused[:, ::2],
                 "rows step": self.fused[::3], "3-D": self.x3[:, :, 4:],
                 "select": self.x3[:, 2], "bf16 slice": self.fused.bfloat16()[:, 5:9],
                 "f16 halves": self.fused.half()[:, 65:]}
        for name, x in cases.items():
            with self.subTest(case=name):
                self.assertFalse(x.is_contiguous())
                for a in ("gelu_tanh", "silu"):
                    y = ffn.act(x, a)
                    self.assertEqual(y.device, DEV)
                    torch.testing.assert_close(y, ffn.act(x.contiguous(), a), rtol=0, atol=0)
                dy = torch.randn_like(x)
                torch.testing.assert_close(ffn.act_backward(x, dy, "gelu_erf"),
                                           ffn.act_backward(x.contiguous(), dy, "gelu_erf"),
                                           rtol=0, atol=0)

    def test_fused_halves(self):
        for order in ("gate_first", "up_first"):
            with self.subTest(order=order):
                g, u = ffn.gate_up_split(self.fused, order)
                first = self.fused.data_ptr()
                second = first + 65 * 4
                self.assertEqual((g.data_ptr(), u.data_ptr()),
                                 (first, second) if order == "gate_first" else (second, first))
                h = ffn.glu(g, u, "silu")
                torch.testing.assert_close(h, ffn.glu(g.contiguous(), u.contiguous(), "silu"),
                                           rtol=0, atol=0)
                dh = torch.randn_like(h)
                dg, du = ffn.glu_backward(g, u, dh, "silu")
                rg, ru = ffn.glu_backward(g.contiguous(), u.contiguous(), dh, "silu")
                torch.testing.assert_close((dg, du), (rg, ru), rtol=0, atol=0)
        # The module over a fused input, forward and backward, against the CPU's.
        fused = self.fused.clone().requires_grad_()
        h = ft.GatedActivation("silu")(fused)
        h.backward(torch.ones_like(h))
        fc = host(self.fused).requires_grad_()
        hc = ft.GatedActivation("silu")(fc)
        hc.backward(torch.ones_like(hc))
        torch.testing.assert_close(host(h), hc.detach(), rtol=2e-6, atol=1e-6)
        torch.testing.assert_close(host(fused.grad), fc.grad, rtol=2e-6, atol=1e-6)

    def test_refused_and_copy(self):
        for name, x in {"transposed": self.fused.t(), "expanded": self.fused[:1].expand(37, 130),
                        "permuted": self.x3.permute(2, 0, 1)}.items():
            with self.subTest(case=name):
                with self.assertRaises(ffn.InvalidArgumentError) as cm:
                    ffn.act(x, "silu")
                self.assertIn("copy=True", str(cm.exception))
                y = ffn.act(x, "silu", copy=True)
                self.assertEqual(y.device, DEV)
                torch.testing.assert_close(y, ffn.act(x.contiguous(), "silu"), rtol=0, atol=0)
                out = torch.empty_like(self.fused).t()  # a transposed output: computed into a
                if out.shape == x.shape:                # copy and written back
                    ffn.act(x, "silu", out=out, copy=True)
                    torch.testing.assert_close(out, y, rtol=0, atol=0)

    def test_in_place(self):
        x = self.fused.clone()
        ref = ffn.act(x, "silu")
        self.assertIs(ffn.act(x, "silu", out=x), x)
        torch.testing.assert_close(x, ref, rtol=0, atol=0)
        g, u = self.fused.clone(), self.fused.flip(0).contiguous()
        h = ffn.glu(g, u, "gelu_tanh")
        self.assertIs(ffn.glu(g, u, "gelu_tanh", out=g), g)
        torch.testing.assert_close(g, h, rtol=0, atol=0)
        g, u = self.fused.clone(), self.fused.flip(0).contiguous()
        dh = torch.randn_like(g)
        rg, ru = ffn.glu_backward(g, u, dh, "silu")
        dg, du = ffn.glu_backward(g, u, dh, "silu", out=(g, u))
        self.assertTrue(dg is g and du is u)
        torch.testing.assert_close((g, u), (rg, ru), rtol=0, atol=0)
        # Part of a tensor, in place: the rest untouched.
        x = self.fused.clone()
        ffn.act(x[:, 10:20], "relu", out=x[:, 10:20])
        torch.testing.assert_close(x[:, :10], self.fused[:, :10], rtol=0, atol=0)
        torch.testing.assert_close(x[:, 10:20], F.relu(self.fused[:, 10:20]), rtol=0, atol=0)
        torch.testing.assert_close(x[:, 20:], self.fused[:, 20:], rtol=0, atol=0)

    def test_lookup_table_path(self):
        # A contiguous 16-bit forward of >= 2^23 elements with accuracy="high" goes through the
        # library's table of the kernel's own outputs: every pattern, 513 times, equals one pass
        # of the kernel.
        self.gpu_only()
        c = self.cuda_ctx(accuracy="high")
        for dt in (torch.bfloat16, torch.float16):
            small = dev(ffntest.all_bits16(), dt)
            big = small.repeat(513)
            self.assertGreaterEqual(big.numel(), 1 << 25)
            for a in ("silu", "gelu_tanh", "gelu_erf"):
                with self.subTest(dtype=dt, act=a):
                    yb = ffn.act(big, a, ctx=c).view(513, -1).view(torch.int16)
                    ys = ffn.act(small, a, ctx=c).view(torch.int16)
                    self.assertTrue(bool((yb == ys).all()))


# --- autograd -------------------------------------------------------------------------------------

class TestAutograd(CudaCase):
    @classmethod
    def setUpClass(cls):
        r = ffntest.rng(21)
        cls.x = np.concatenate([r.standard_normal(40000) * 3, r.uniform(-20, 20, 40000)]).astype(
            np.float32)
        cls.dy = r.standard_normal(cls.x.size).astype(np.float32)
        cls.up = r.standard_normal(cls.x.size).astype(np.float32)

    def dom(self, a):
        return self.x >= TORCH64_DOMAIN.get(a, -np.inf)

    def t64(self, a):
        return torch.from_numpy(a).double().to(DEV)

    def test_act_vs_autograd_f64(self):
        for a in ACTS:
            with self.subTest(act=a):
                x = dev(self.x).requires_grad_()
                y = ft.act(x, a)
                self.assertEqual(type(y.grad_fn).__name__, "ActFunctionBackward")
                y.backward(dev(self.dy))
                self.assertEqual(x.grad.device, DEV)
                x64 = self.t64(self.x).requires_grad_()
                TORCH[a](x64).backward(self.t64(self.dy))
                m, ref = self.dom(a), f64(x64.grad)
                bound = BWD_ULP * ulp32(ref[m]) + BWD_ABS_EPS * EPS32 * np.abs(self.dy[m])
                self.assertWithin("%s backward vs autograd" % a, f64(x.grad)[m], ref[m], bound,
                                  show=self.x[m])
                # The gradient is ffn's backward kernel, bit for bit.
                torch.testing.assert_close(x.grad, ffn.act_backward(dev(self.x), dev(self.dy),
                                                                    a), rtol=0, atol=0)

    def test_glu_vs_autograd_f64(self):
        for a in ACTS:
            with self.subTest(act=a):
                g, u = dev(self.x).requires_grad_(), dev(self.up).requires_grad_()
                h = ft.glu(g, u, a)
                h.backward(dev(self.dy))
                g64, u64 = self.t64(self.x).requires_grad_(), self.t64(self.up).requires_grad_()
                h64 = TORCH[a](g64) * u64
                h64.backward(self.t64(self.dy))
                m = self.dom(a)
                ref = f64(h64)[m]
                self.assertWithin("%s glu" % a, f64(h)[m], ref, (2 * FWD_ULP[a] + 1) * ulp32(ref),
                                  show=self.x[m])
                ref = f64(g64.grad)[m]
                floor = BWD_ABS_EPS * EPS32 * np.abs(self.dy * self.up)[m]
                self.assertWithin("%s dgate" % a, f64(g.grad)[m], ref,
                                  (BWD_ULP + 1) * ulp32(ref) + floor, show=self.x[m])
                ref = f64(u64.grad)[m]
                self.assertWithin("%s dup" % a, f64(u.grad)[m], ref,
                                  (2 * FWD_ULP[a] + 1) * ulp32(ref), show=self.x[m])

    def test_bf16_and_routing(self):
        g = dev(self.x).bfloat16().requires_grad_()
        u = dev(self.up).bfloat16().requires_grad_()
        dh = dev(self.dy).bfloat16()
        h = ffn.glu(g, u, "silu")  # a tensor that requires grad: through ffn.torch.glu
        self.assertEqual(type(h.grad_fn).__name__, "GluFunctionBackward")
        h.backward(dh)
        self.assertEqual((g.grad.dtype, g.grad.device), (torch.bfloat16, DEV))
        rg, ru = ffn.glu_backward(g.detach(), u.detach(), dh, "silu")
        torch.testing.assert_close((g.grad, u.grad), (rg, ru), rtol=0, atol=0)
        with torch.no_grad():
            self.assertIsNone(ffn.act(g, "silu").grad_fn)


# --- errors ---------------------------------------------------------------------------------------

class TestErrors(CudaCase):
    def setUp(self):
        super().setUp()
        self.x = torch.randn(7, 66).to(DEV)
        self.out = torch.full((7, 66), 5.0).to(DEV)

    def untouched(self):
        sync()
        self.assertTrue(bool((self.out == 5.0).all()))

    def test_library_messages(self):
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.glu(self.x, self.x[:, :65], "silu", out=self.out)
        self.assertTrue(str(cm.exception).startswith("ffn_glu_forward: up has shape [7, 65]"),
                        str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.gate_up_split(self.x[:, :65])
        self.assertIn("fused has 65 columns; a fused gate/up needs an even count",
                      str(cm.exception))
        for bad in (self.x.double(), self.x.int()):
            with self.assertRaises(ffn.InvalidArgumentError) as cm:
                ffn.act(bad, "silu", out=self.out)
            self.assertIn(str(bad.dtype), str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:  # a partial overlap
            ffn.act(self.out[:, 1:], "silu", out=self.out[:, :-1])
        self.untouched()

    def test_devices_mixed(self):
        self.gpu_only()
        cases = {"glu": (lambda: ffn.glu(self.x, host(self.x), "silu", out=self.out),
                         "gate is on cuda:%d, up is on cpu" % DEV.index),
                 "out on the cpu": (lambda: ffn.act(self.x, "silu", out=host(self.out)),
                                    "y is on cpu, x is on cuda:%d" % DEV.index),
                 "numpy": (lambda: ffn.act(host(self.x).numpy(), "silu", out=self.out),
                           "y is on cuda:%d, x is on host memory (NumPy)" % DEV.index),
                 "autograd": (lambda: ft.glu(self.x.clone().requires_grad_(), host(self.x),
                                             "silu"),
                              "gate is on cuda:%d, up is on cpu" % DEV.index)}
        for name, (call, text) in cases.items():
            with self.subTest(case=name):
                with self.assertRaises(ffn.InvalidArgumentError) as cm:
                    call()
                self.assertIn(text, str(cm.exception))
                self.assertIn("must lie on one device", str(cm.exception))
        self.untouched()

    def test_contexts_of_the_wrong_device(self):
        self.gpu_only()
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(self.x, "silu", out=self.out, ctx=ffn.Context())
        self.assertIn("the operands are on cuda:%d but ctx runs on cpu" % DEV.index,
                      str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(host(self.x), "silu", ctx=ffn.Context(backend="cuda", device=DEV))
        self.assertIn("in host memory but ctx runs on cuda:%d" % DEV.index, str(cm.exception))
        n = torch.cuda.device_count()
        with self.assertRaises(ffn.UnsupportedError) as cm:
            ffn.Context(backend="cuda", device=n)
        self.assertIn("CUDA device %d does not exist" % n, str(cm.exception))
        self.untouched()

    def test_two_devices(self):
        self.gpu_only()
        if torch.cuda.device_count() < 2:
            self.skipTest("one CUDA device")
        x1 = self.x.to("cuda:1")
        y1 = ffn.act(x1, "silu")
        self.assertEqual(y1.device, x1.device)
        self.assertEqual(ffn.get_context("cuda:1").device, 1)
        torch.testing.assert_close(host(y1), host(ffn.act(self.x, "silu")), rtol=0, atol=0)
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.glu(self.x, x1, "silu", out=self.out)
        self.assertIn("up is on cuda:1", str(cm.exception))
        self.untouched()


# --- FFN blocks -----------------------------------------------------------------------------------

class LlamaMLP(nn.Module):
    def __init__(self, d, m):
        super().__init__()
        self.gate_proj = nn.Linear(d, m, bias=False)
        self.up_proj = nn.Linear(d, m, bias=False)
        self.down_proj = nn.Linear(m, d, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class TestBlocks(CudaCase):
    """ffn.torch.GatedFFN on CUDA weights and activations. Where the library's blocks do not run
    on CUDA, its own message is what the module raises (and the test is reported skipped with
    it); where they do, forward and every gradient against the CPU module and torch's MLP."""

    def test_gated_ffn(self):
        torch.manual_seed(0)
        d, m, T = 64, 176, 37
        ref = LlamaMLP(d, m)
        cpu_mod = ft.from_hf_mlp(copy.deepcopy(ref))
        ref = ref.to(DEV)
        try:
            mod = ft.from_hf_mlp(ref)
        except ffn.UnsupportedError as e:
            self.assertTrue(str(e).startswith("ffn_block_create: "), str(e))  # the library's
            self.assertEqual(e.status_name, "UNSUPPORTED")
            moved = copy.deepcopy(cpu_mod).to(DEV)  # built on the CPU, moved: the same words
            with self.assertRaises(ffn.UnsupportedError) as cm:
                moved(torch.randn(T, d, device=DEV))
            self.assertEqual(str(cm.exception), str(e))
            self.skipTest("blocks on CUDA: the library says: %s" % e)
        self.assertIs(mod.w_gate, ref.gate_proj.weight)
        x = torch.randn(T, d)
        dy = torch.randn(T, d)
        prev = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            xd = x.to(DEV).requires_grad_()
            y = mod(xd)
            self.assertEqual(y.device, DEV)
            y.backward(dy.to(DEV))
            grads = {n: p.grad.clone() for n, p in ref.named_parameters()}
            ref.zero_grad(set_to_none=True)
            xr = x.to(DEV).requires_grad_()
            yr = ref(xr)
            yr.backward(dy.to(DEV))
        finally:
            torch.backends.cuda.matmul.allow_tf32 = prev
        xc = x.clone().requires_grad_()
        yc = cpu_mod(xc)
        yc.backward(dy)
        tol = dict(rtol=1e-4, atol=2e-5 * float(yr.abs().max()))
        torch.testing.assert_close(host(y), host(yr), **tol)
        torch.testing.assert_close(host(y), yc.detach(), **tol)
        torch.testing.assert_close(host(xd.grad), host(xr.grad), rtol=1e-4,
                                   atol=2e-5 * float(xr.grad.abs().max()))
        for n, p in ref.named_parameters():
            torch.testing.assert_close(host(grads[n]), host(p.grad), rtol=1e-4,
                                       atol=2e-5 * float(p.grad.abs().max()), msg=n)


def main():
    if DEV is not None:
        print("test_cuda: device %s (%s), torch %s, libffn %s%s" % (
            DEV, torch.cuda.get_device_name(DEV) if DEV.type == "cuda" else "dry run",
            torch.__version__, ffn.library_path, "" if CUDA_OK else " (no CUDA: %s)" % CUDA_WHY),
            file=sys.stderr)
    prog = unittest.main(verbosity=2, exit=False)
    ok = prog.result.wasSuccessful()
    if SKIP and REQUIRE:
        print("test_cuda: FAIL: FFN_TEST_REQUIRE_CUDA=1, but every test was skipped: %s" % SKIP,
              file=sys.stderr)
        sys.exit(1)
    if SKIP:
        print("test_cuda: skipped: %s" % SKIP, file=sys.stderr)
        sys.exit(77)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
