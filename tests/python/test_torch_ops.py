# test_torch_ops.py — ffn's functions on torch tensors, against torch itself:
# - forward against torch.nn.functional (F.gelu tanh/none, F.silu, F.relu, torch.sigmoid,
#   x·σ(1.702x)) run in float64, and against the same ops in float32;
# - backward (ffn.torch.act / glu, through ffn's kernels) against torch autograd in float64;
# - bf16 / f16 tensors exhaustively against torch's own bf16 / f16 ops, and the parity mode of
#   the gated combine against PyTorch's eager rounding;
# - the C scalar reference (Context(isa="scalar")) on the same tensors;
# - strided tensors, in place, bad input (library messages, outputs untouched), other devices.
# - the one-pass path of dense operands against the general path (dtype= given): the same bits,
#   outputs, library errors and context choice (`with` blocks, set_defaults).
#
# Tolerances (ffntest.py has the table): ffn's contract in ulps of the f32 reference. torch's
# GeLUs are written 0.5x(1 + tanh u) and x·0.5(1 + erf(x/√2)): even in float64 they lose all
# relative accuracy for x < -5 (they return -0 where gelu(-7) = -4e-16), so the float64
# comparison runs on x ≥ -4 for the GeLUs (all x for the others), and the full range is covered
# by the stable float64 oracle in test_numpy.py. Their float32 versions have an absolute error of
# about |x|·ε32 there: against torch's float32 ops the bound is 8 ulp + 2·ε32·|x|.
import unittest

import ffntest

ffntest.require_torch()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F

from ffntest import (ACTS, BWD_ABS_EPS, BWD_ULP, EPS32, FWD_ULP, ref_act, ulp32)

import ffn
import ffn.torch as ft

SCALAR = ffn.Context(isa="scalar")

TORCH = {"gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "gelu_erf": F.gelu,
         "silu": F.silu, "relu": F.relu, "sigmoid": torch.sigmoid, "identity": lambda t: t * 1,
         "quick_gelu": lambda t: t * torch.sigmoid(1.702 * t)}
# Where torch's float64 formula is accurate to better than an f32 ulp.
TORCH64_DOMAIN = {"gelu_tanh": -4.0, "gelu_erf": -4.0}
TORCH32_ABS = 2.0  # × ε32 · |x|: torch's float32 error from the 1 + tanh / 1 + erf cancellation
TORCH16_MISMATCH_MAX = 0.05  # share of bf16/f16 results torch's own kernels round differently


def t32(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


def bf16_tensor(bits):
    return torch.from_numpy(np.asarray(bits, dtype=np.uint16).view(np.int16)).view(torch.bfloat16)


def bits_of(t):
    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


class TestAgainstTorchF32(ffntest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = ffntest.rng(11)
        cls.x = np.concatenate([r.standard_normal(80000) * 3, r.uniform(-20, 20, 80000),
                                -1.2785 + r.uniform(-1e-3, 1e-3, 2000)]).astype(np.float32)
        cls.dy = r.standard_normal(cls.x.size).astype(np.float32)
        cls.up = r.standard_normal(cls.x.size).astype(np.float32)

    def dom(self, a):
        return self.x >= TORCH64_DOMAIN.get(a, -np.inf)

    def test_forward_vs_functional_f64(self):
        for a in ACTS:
            with self.subTest(act=a):
                y = ffn.act(t32(self.x), a)
                self.assertIsInstance(y, torch.Tensor)
                self.assertEqual(y.dtype, torch.float32)
                ref = TORCH[a](torch.from_numpy(self.x).double()).numpy()
                m = self.dom(a)
                self.assertWithin("%s vs torch f64" % a, y.numpy()[m], ref[m],
                                  FWD_ULP[a] * ulp32(ref[m]), show=self.x[m])

    def test_forward_vs_functional_f32(self):
        for a in ACTS:
            with self.subTest(act=a):
                xt = t32(self.x)
                y, ref = ffn.act(xt, a).numpy(), TORCH[a](xt).numpy()
                exact = ref_act(a, self.x)
                bound = 8 * ulp32(exact) + TORCH32_ABS * EPS32 * np.abs(self.x)
                self.assertWithin("%s vs torch f32" % a, y, ref, bound, show=self.x)

    def test_backward_vs_autograd_f64(self):
        for a in ACTS:
            with self.subTest(act=a):
                x = t32(self.x).requires_grad_()
                y = ft.act(x, a)
                self.assertEqual(type(y.grad_fn).__name__, "ActFunctionBackward")
                y.backward(t32(self.dy))
                x64 = torch.from_numpy(self.x).double().requires_grad_()
                TORCH[a](x64).backward(torch.from_numpy(self.dy).double())
                ref = x64.grad.numpy()
                m = self.dom(a)
                bound = BWD_ULP * ulp32(ref[m]) + BWD_ABS_EPS * EPS32 * np.abs(self.dy[m])
                self.assertWithin("%s backward vs autograd" % a, x.grad.numpy()[m], ref[m],
                                  bound, show=self.x[m])

    def test_glu_forward_backward_vs_autograd_f64(self):
        for a in ACTS:
            with self.subTest(act=a):
                g, u = t32(self.x).requires_grad_(), t32(self.up).requires_grad_()
                h = ft.glu(g, u, a)
                h.backward(t32(self.dy))
                g64 = torch.from_numpy(self.x).double().requires_grad_()
                u64 = torch.from_numpy(self.up).double().requires_grad_()
                h64 = TORCH[a](g64) * u64
                h64.backward(torch.from_numpy(self.dy).double())
                m = self.dom(a)
                ref = h64.detach().numpy()[m]
                self.assertWithin("%s glu vs torch" % a, h.detach().numpy()[m], ref,
                                  (2 * FWD_ULP[a] + 1) * ulp32(ref), show=self.x[m])
                ref = g64.grad.numpy()[m]
                floor = BWD_ABS_EPS * EPS32 * np.abs(self.dy * self.up)[m]
                self.assertWithin("%s dgate vs autograd" % a, g.grad.numpy()[m], ref,
                                  (BWD_ULP + 1) * ulp32(ref) + floor, show=self.x[m])
                ref = u64.grad.numpy()[m]
                self.assertWithin("%s dup vs autograd" % a, u.grad.numpy()[m], ref,
                                  (2 * FWD_ULP[a] + 1) * ulp32(ref), show=self.x[m])

    def test_scalar_reference_on_tensors(self):
        # The C reference kernels through the same tensor path, and the fast ones against it.
        xt = t32(self.x)
        for a in ACTS:
            ys = ffn.act(xt, a, ctx=SCALAR)
            np.testing.assert_array_equal(ys.numpy(), ffn.act(self.x, a, ctx=SCALAR))
            self.assertWithin("%s simd vs scalar" % a, ffn.act(xt, a).numpy(), ys.numpy(),
                              2 * FWD_ULP[a] * ulp32(ys.numpy()), show=self.x)
            dxs = ffn.act_backward(xt, t32(self.dy), a, ctx=SCALAR).numpy()
            dx = ffn.act_backward(xt, t32(self.dy), a).numpy()
            self.assertWithin("%s backward simd vs scalar" % a, dx, dxs,
                              2 * BWD_ULP * ulp32(dxs) + 2 * BWD_ABS_EPS * EPS32 *
                              np.abs(self.dy), show=self.x)

    def test_ffn_act_routes_autograd(self):
        x = t32(self.x[:100]).requires_grad_()
        y = ffn.act(x, "silu")
        self.assertEqual(type(y.grad_fn).__name__, "ActFunctionBackward")
        h = ffn.glu(x, x.detach(), "silu")
        self.assertEqual(type(h.grad_fn).__name__, "GluFunctionBackward")
        with torch.no_grad():
            self.assertIsNone(ffn.act(x, "silu").grad_fn)


class TestAgainstTorch16(unittest.TestCase):
    """bf16 and f16 tensors, every input, against torch's own ops in that dtype."""

    def compare(self, what, got_bits, torch_bits, ref64, to_bits, finite):
        # Where torch's result is within 1 ulp of the correctly rounded value, ffn's must be
        # within 1 ulp of torch's; elsewhere torch is wrong (its tails) and test_numpy.py holds
        # ffn to the oracle.
        torch_ok = finite & (ffntest.storage_ulps(torch_bits, to_bits(ref64), "") <= 1)
        d = ffntest.storage_ulps(got_bits, torch_bits, "")[torch_ok]
        self.assertLessEqual(int(d.max()), 1, what)
        self.assertLessEqual(float(np.mean(d > 0)), TORCH16_MISMATCH_MAX, what)
        return int((~torch_ok & finite).sum())

    def test_bf16_all_inputs(self):
        bits = ffntest.all_bits16()
        xb = bf16_tensor(bits)
        x = ffntest.bf16_to_f32(bits)
        for a in ACTS:
            with self.subTest(act=a):
                y = ffn.act(xb, a)
                self.assertEqual(y.dtype, torch.bfloat16)
                ref = ref_act(a, x)
                fin = np.isfinite(x) & np.isfinite(ref)
                self.compare("bf16 %s" % a, bits_of(y), bits_of(TORCH[a](xb)), ref,
                             ffntest.f64_to_bf16, fin)
                ys = ffn.act(xb, a, ctx=SCALAR)
                d = ffntest.storage_ulps(bits_of(ys), bits_of(y), "")[fin]
                self.assertLessEqual(int(d.max()), 1, "bf16 %s simd vs scalar" % a)

    def test_f16_all_inputs(self):
        x = ffntest.all_bits16().view(np.float16)
        xh = torch.from_numpy(x.copy())
        for a in ACTS:
            with self.subTest(act=a):
                y = ffn.act(xh, a)
                self.assertEqual(y.dtype, torch.float16)
                ref = ref_act(a, x.astype(np.float64))
                with np.errstate(over="ignore", invalid="ignore"):
                    fin = np.isfinite(x) & np.isfinite(ref.astype(np.float16))
                    try:
                        th = TORCH[a](xh)
                    except RuntimeError:  # torch 1.13 has no f16 CPU kernels: f32 and round
                        th = TORCH[a](xh.float()).half()
                    self.compare("f16 %s" % a, bits_of(y), bits_of(th), ref,
                                 lambda r: r.astype(np.float16).view(np.uint16), fin)

    def test_glu_bf16_parity_rounds_like_eager_torch(self):
        # PyTorch eager code rounds act(gate) to bf16 before multiplying by up; ffn does so with
        # Context(bf16_parity=True), and otherwise rounds once. Each mode is checked against its
        # own float64 model: bf16(bf16(act(g)) · u) or bf16(act(g) · u).
        r = ffntest.rng(12)
        gbits = ffntest.all_bits16()
        g = ffntest.bf16_to_f32(gbits)
        ubits = ffntest.f32_to_bf16(r.standard_normal(gbits.size).astype(np.float32))
        u = ffntest.bf16_to_f32(ubits).astype(np.float64)
        parity = ffn.Context(bf16_parity=True)
        for a in ACTS:
            with self.subTest(act=a):
                act64 = ref_act(a, g)
                fin = np.isfinite(g) & np.isfinite(act64)
                eager = ffntest.f64_to_bf16(ffntest.bf16_to_f32(ffntest.f64_to_bf16(act64)) * u)
                once = ffntest.f64_to_bf16(act64 * u)
                hp = bits_of(ffn.glu(bf16_tensor(gbits), bf16_tensor(ubits), a, ctx=parity))
                h1 = bits_of(ffn.glu(bf16_tensor(gbits), bf16_tensor(ubits), a))
                dp = ffntest.storage_ulps(hp, eager, "")[fin]
                d1 = ffntest.storage_ulps(h1, once, "")[fin]
                self.assertLessEqual(int(dp.max()), 1, "parity %s" % a)
                self.assertLessEqual(int(d1.max()), 1, "default %s" % a)
                self.assertLessEqual(float(np.mean(dp > 0)), 0.01, "parity %s" % a)
                self.assertLessEqual(float(np.mean(d1 > 0)), 0.01, "default %s" % a)


def _bits(x):
    """The stored bits of a tensor or array, as a NumPy integer array."""
    if isinstance(x, torch.Tensor):
        return x.view(torch.int32 if x.element_size() == 4 else torch.int16).numpy()
    return x.view(np.uint32 if x.itemsize == 4 else np.uint16)


class TestFastPath(unittest.TestCase):
    """The one-pass path of dense operands (_ops._fast) against the general path, which a call
    takes when dtype= is given: the same bits, the same errors, the same context."""

    def setUp(self):
        g = torch.Generator().manual_seed(7)
        self.t = {d: (torch.randn(3, 5, 8, generator=g).to(d),
                      torch.randn(3, 5, 8, generator=g).to(d),
                      torch.randn(3, 5, 8, generator=g).to(d))
                  for d in (torch.float32, torch.bfloat16, torch.float16)}

    @staticmethod
    def calls(a, b, c, **kw):
        yield "act", lambda out: ffn.act(a, "silu", out=out, **kw), (a,)
        yield "act_backward", lambda out: ffn.act_backward(a, b, "gelu_tanh", out=out, **kw), (a,)
        yield "glu", lambda out: ffn.glu(a, b, "gelu", out=out, **kw), (a,)
        yield "glu_backward", lambda out: ffn.glu_backward(a, b, c, "swiglu", out=out, **kw), \
            (a, a)

    def check_same(self, a, b, c, dname):
        for op, call, like in self.calls(a, b, c):
            with self.subTest(op=op, dtype=dname):
                fast = call(None)
                general = [f for n, f, _ in self.calls(a, b, c, dtype=dname) if n == op]
                slow = general[0](None)
                fast, slow = (fast, slow) if isinstance(fast, tuple) else ((fast,), (slow,))
                for x, y in zip(fast, slow):
                    self.assertEqual(type(x), type(y))
                    self.assertEqual((x.shape, x.dtype), (y.shape, y.dtype))
                    self.assertTrue(np.array_equal(_bits(x), _bits(y)))
                # out= (given outputs are written, and returned as they are)
                outs = tuple(torch.empty_like(t) if isinstance(t, torch.Tensor) else
                             np.empty_like(t) for t in like)
                r = call(outs if len(outs) == 2 else outs[0])
                r = r if isinstance(r, tuple) else (r,)
                for o, x, y in zip(outs, r, slow):
                    self.assertIs(x, o)
                    self.assertTrue(np.array_equal(_bits(o), _bits(y)))

    def test_same_bits_torch(self):
        for d, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16"), (torch.float16, "f16")):
            self.check_same(*self.t[d], name)

    def test_same_bits_numpy(self):
        for d, name in ((np.float32, "f32"), (np.float16, "f16")):
            a, b, c = (t.float().numpy().astype(d) for t in self.t[torch.float32])
            self.check_same(a, b, c, name)

    def test_same_errors(self):
        for mk in (lambda n: torch.zeros(n), lambda n: np.zeros(n, np.float32)):
            buf = mk(40)
            g, u, h = buf[0:16], buf[20:36], buf[1:17]  # h overlaps gate: the library refuses
            msgs = []
            for kw in ({}, {"dtype": "f32"}):
                with self.assertRaises(ffn.InvalidArgumentError) as cm:
                    ffn.glu(g, u, "silu", out=h, **kw)
                msgs.append((str(cm.exception), cm.exception.library_message))
            self.assertEqual(msgs[0], msgs[1])
            self.assertIn("[ffn.glu: h (16,) f32, gate (16,) f32, up (16,) f32]", msgs[0][0])
            self.assertTrue(np.array_equal(_bits(buf), _bits(mk(40))))
            # Operands the one-pass path does not take get the general path's messages.
            for bad, says in (([0.0] * 16, "h is a list"), ("h", "h is a str")):
                with self.assertRaisesRegex(ffn.InvalidArgumentError, says):
                    ffn.glu(g, u, "silu", out=bad)

    def test_context_choice(self):
        # A failing call leaves the library's message on the context it ran on: the one of the
        # innermost `with` block, else the thread's default (remade after set_defaults).
        buf = np.zeros(40, np.float32)

        def fail():
            with self.assertRaises(ffn.InvalidArgumentError):
                ffn.act(buf[0:16], "silu", out=buf[1:17])

        ok = np.zeros(16, np.float32)
        ffn.act(ok, "relu", out=ok)  # the default is cached for this thread now
        c = ffn.Context(isa="scalar")
        self.assertEqual(c.last_error, "")
        with c:
            fail()
        self.assertIn("ffn_act_forward", c.last_error)
        old = ffn.set_defaults(isa="scalar")
        try:
            d = ffn.get_context()
            self.assertEqual(d.last_error, "")
            fail()
            self.assertIn("ffn_act_forward", d.last_error)
            self.assertIs(ffn.get_context(), d)
        finally:
            ffn.set_defaults(**old)
        self.assertIsNot(ffn.get_context(), d)
        e = ffn.Context()
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.act(buf[0:16], "silu", out=buf[1:17], ctx=e)
        self.assertIn("ffn_act_forward", e.last_error)


class TestTorchLayouts(unittest.TestCase):
    def setUp(self):
        g = torch.Generator().manual_seed(ffntest.SEED)
        self.fused = torch.randn(7, 66, generator=g)
        self.x3 = torch.randn(3, 5, 16, generator=g)

    def test_strided_match_contiguous(self):
        cases = {"column slice": self.fused[:, 3:40], "every other column": self.fused[:, ::2],
                 "rows step": self.fused[::3], "3-D": self.x3[:, :, 4:],
                 "select": self.x3[:, 2], "bf16 slice": self.fused.bfloat16()[:, 5:9]}
        for name, x in cases.items():
            with self.subTest(case=name):
                self.assertFalse(x.is_contiguous())
                torch.testing.assert_close(ffn.act(x, "gelu_tanh"),
                                           ffn.act(x.contiguous(), "gelu_tanh"), rtol=0, atol=0)

    def test_split_and_gated_activation(self):
        g, u = ffn.gate_up_split(self.fused)
        self.assertEqual(g.data_ptr(), self.fused.data_ptr())
        self.assertEqual(u.data_ptr(), self.fused.data_ptr() + 33 * 4)
        fused = self.fused.clone().requires_grad_()
        mod = ft.GatedActivation("silu")
        h = mod(fused)
        h.backward(torch.ones_like(h))
        f64 = self.fused.double().requires_grad_()
        gg, uu = f64.chunk(2, dim=-1)
        (F.silu(gg) * uu).backward(torch.ones(7, 33, dtype=torch.float64))
        torch.testing.assert_close(h.detach(), (F.silu(gg) * uu).detach().float(),
                                   rtol=4e-7, atol=1e-7)
        torch.testing.assert_close(fused.grad, f64.grad.float(), rtol=2e-6, atol=1e-6)
        act = ft.Activation("gelu_erf")
        torch.testing.assert_close(act(self.fused), F.gelu(self.fused), rtol=1e-6, atol=1e-6)

    def test_refused_and_copy(self):
        for name, x in {"transposed": self.fused.t(), "expanded": self.fused[:1].expand(7, 66),
                        "3-D permuted": self.x3.permute(2, 0, 1)}.items():
            with self.subTest(case=name):
                with self.assertRaises(ffn.InvalidArgumentError) as cm:
                    ffn.act(x, "silu")
                self.assertIn("copy=True", str(cm.exception))
                torch.testing.assert_close(ffn.act(x, "silu", copy=True), F.silu(x),
                                           rtol=3e-7, atol=1e-7)
        # autograd: dy from .sum() is an expanded scalar; the backward copies it.
        x = self.fused.t().requires_grad_()
        ft.act(x, "silu", copy=True).sum().backward()
        self.assertEqual(x.grad.shape, x.shape)

    def test_in_place(self):
        x = self.fused.clone()
        ref = ffn.act(x, "silu")
        self.assertIs(ffn.act(x, "silu", out=x), x)
        torch.testing.assert_close(x, ref, rtol=0, atol=0)

    def test_errors(self):
        out = torch.full((7, 66), 5.0)
        for bad in (self.fused.double(), self.fused.int()):
            with self.assertRaises(ffn.InvalidArgumentError) as cm:
                ffn.act(bad, "silu", out=out)
            self.assertIn(str(bad.dtype), str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.glu(self.fused, self.fused[:, :65], "silu", out=out)
        self.assertTrue(str(cm.exception).startswith("ffn_glu_forward: up has shape [7, 65]"))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.gate_up_split(self.fused[:, :65])
        self.assertIn("fused has 65 columns; a fused gate/up needs an even count",
                      str(cm.exception))
        torch.testing.assert_close(out, torch.full((7, 66), 5.0), rtol=0, atol=0)
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(self.fused.requires_grad_(), "silu", out=out)
        self.assertIn("autograd", str(cm.exception))
        self.fused.requires_grad_(False)

    def test_other_devices(self):
        # Tensors neither on the CPU nor on a CUDA device are refused with a message (CUDA
        # tensors: test_cuda.py, test_cuda_nogpu.py).
        meta = torch.empty(4, 4, device="meta")
        with self.assertRaises(ffn.UnsupportedError) as cm:
            ffn.act(meta, "silu")
        self.assertIn("meta", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
