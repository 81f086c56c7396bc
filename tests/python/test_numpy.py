# test_numpy.py — ffn's functions on NumPy arrays: every op against the float64 oracle of
# ffntest.py (tolerances there), through the default context and through the C scalar reference
# (Context(isa="scalar")); bf16 and f16 exhaustively (all 65,536 inputs); strided and
# non-contiguous layouts; in place; bad input raising the library's message with outputs left
# untouched; contexts; conversions; the checkpoint reader. No torch here.
import os
import subprocess
import sys
import threading
import unittest

import numpy as np

import ffntest
from ffntest import (ACTS, BWD_ABS_EPS, BWD_ULP, EPS32, FWD_ULP, STORAGE_MISMATCH_MAX,
                     STORAGE_ULP, ref_act, ref_grad, ulp32)

import ffn

SCALAR = ffn.Context(isa="scalar")
CONTEXTS = [("default", None), ("scalar", SCALAR)]


def f32_inputs(n=60000, offset=0):
    """Normal, wide uniform and the hard regions (the derivatives' zeros, tiny and large
    values): finite f32."""
    r = ffntest.rng(offset)
    parts = [r.standard_normal(n) * 3, r.uniform(-20, 20, n),
             -1.2785 + r.uniform(-1e-3, 1e-3, 2000), -0.7518 + r.uniform(-1e-3, 1e-3, 2000),
             r.uniform(-1e-6, 1e-6, 2000), r.uniform(-150, 150, 2000),
             np.array([0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0, 92.0, -92.0, 1e4, -1e4])]
    return np.concatenate(parts).astype(np.float32)


class TestLibrary(unittest.TestCase):
    def test_loaded_from_env(self):
        env = os.environ.get("FFN_LIBRARY")
        if not env:
            self.skipTest("FFN_LIBRARY not set")
        self.assertIn("FFN_LIBRARY", ffn.library_source)
        self.assertEqual(os.path.realpath(ffn.library_path), os.path.realpath(env))

    def test_info(self):
        i = ffn.info()
        self.assertIn(i["isa"], ("scalar", "avx2", "avx512"))
        self.assertIn("scalar", i["isas_supported"])
        self.assertGreaterEqual(i["threads"], 1)

    def test_python_m_ffn(self):
        r = subprocess.run([sys.executable, "-m", "ffn"], capture_output=True, text=True,
                           env=ffntest.subprocess_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("library", r.stdout)
        self.assertIn(os.path.realpath(ffn.library_path), r.stdout)


class TestF32(ffntest.TestCase):
    """f32 forward and backward against the float64 oracle, all finite inputs."""

    @classmethod
    def setUpClass(cls):
        cls.x = f32_inputs()
        r = ffntest.rng(1)
        cls.dy = r.standard_normal(cls.x.size).astype(np.float32)
        cls.up = r.standard_normal(cls.x.size).astype(np.float32)

    def test_act_forward(self):
        for cname, ctx in CONTEXTS:
            for a in ACTS:
                with self.subTest(ctx=cname, act=a):
                    y = ffn.act(self.x, a, ctx=ctx)
                    self.assertEqual(y.dtype, np.float32)
                    ref = ref_act(a, self.x)
                    self.assertWithin("%s %s forward" % (cname, a), y, ref,
                                      FWD_ULP[a] * ulp32(ref), show=self.x)

    def test_act_backward(self):
        for cname, ctx in CONTEXTS:
            for a in ACTS:
                with self.subTest(ctx=cname, act=a):
                    dx = ffn.act_backward(self.x, self.dy, a, ctx=ctx)
                    ref = self.dy.astype(np.float64) * ref_grad(a, self.x)
                    bound = BWD_ULP * ulp32(ref) + BWD_ABS_EPS * EPS32 * np.abs(self.dy)
                    self.assertWithin("%s %s backward" % (cname, a), dx, ref, bound, show=self.x)

    def test_glu_forward(self):
        for cname, ctx in CONTEXTS:
            for a in ACTS:
                with self.subTest(ctx=cname, act=a):
                    h = ffn.glu(self.x, self.up, a, ctx=ctx)
                    ref = ref_act(a, self.x) * self.up
                    self.assertWithin("%s %s glu" % (cname, a), h, ref,
                                      (2 * FWD_ULP[a] + 1) * ulp32(ref), show=self.x)

    def test_glu_backward(self):
        for cname, ctx in CONTEXTS:
            for a in ACTS:
                with self.subTest(ctx=cname, act=a):
                    dg, du = ffn.glu_backward(self.x, self.up, self.dy, a, ctx=ctx)
                    dup = self.dy.astype(np.float64) * self.up
                    ref_g = dup * ref_grad(a, self.x)
                    ref_u = self.dy.astype(np.float64) * ref_act(a, self.x)
                    self.assertWithin("%s %s dgate" % (cname, a), dg, ref_g,
                                      (BWD_ULP + 1) * ulp32(ref_g) +
                                      BWD_ABS_EPS * EPS32 * np.abs(dup), show=self.x)
                    self.assertWithin("%s %s dup" % (cname, a), du, ref_u,
                                      (2 * FWD_ULP[a] + 1) * ulp32(ref_u), show=self.x)

    def test_simd_against_scalar_reference(self):
        # The fast kernels and the C reference on the same inputs: both within their bounds of
        # the exact value, so within the sum of the bounds of each other.
        for a in ACTS:
            with self.subTest(act=a):
                y, ys = ffn.act(self.x, a), ffn.act(self.x, a, ctx=SCALAR)
                self.assertWithin("%s simd vs scalar" % a, y, ys,
                                  2 * FWD_ULP[a] * ulp32(ys), show=self.x)

    def test_special_values(self):
        x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], dtype=np.float32)
        y = {a: ffn.act(x, a) for a in ACTS}
        for a in ("gelu_tanh", "gelu_erf", "silu", "quick_gelu"):
            self.assertEqual(y[a][0], np.inf, a)
            self.assertEqual(y[a][1], 0.0, a)
            self.assertTrue(np.signbit(y[a][1]), "%s(-inf) must be -0" % a)
            self.assertTrue(np.isnan(y[a][2]), a)
        self.assertEqual(list(y["sigmoid"][:2]), [1.0, 0.0])
        self.assertEqual(list(y["relu"][:2]), [np.inf, 0.0])
        for a in ACTS:
            self.assertTrue(np.isnan(y[a][2]), "%s(NaN) must be NaN" % a)
        # No input clamp: gelu(1000) = 1000 (a classic WGSL kernel returns 100).
        self.assertEqual(ffn.act(np.float32([1000.0]), "gelu_tanh")[0], 1000.0)

    def test_accuracy_high(self):
        ctx = ffn.Context(accuracy="high")
        self.assertEqual(ctx.accuracy, "high")
        for a in ("gelu_tanh", "gelu_erf"):
            y = ffn.act(self.x, a, ctx=ctx)
            ref = ref_act(a, self.x)
            self.assertWithin("%s high accuracy" % a, y, ref, 2.5 * ulp32(ref), show=self.x)


def bf16_ulps_ok(case, what, got_bits, ref_bits, finite):
    d = ffntest.storage_ulps(got_bits, ref_bits, "bf16")[finite]
    case.assertLessEqual(int(d.max()), STORAGE_ULP, "%s: %d bf16 ulps" % (what, int(d.max())))
    share = float(np.mean(d > 0))
    case.assertLessEqual(share, STORAGE_MISMATCH_MAX, "%s: %.4f of the results differ" % (
        what, share))


class TestExhaustive16(ffntest.TestCase):
    """bf16 (as uint16 bits with dtype="bf16") and f16 (numpy.float16): every input."""

    def test_bf16_forward_all_inputs(self):
        bits = ffntest.all_bits16()
        x = ffntest.bf16_to_f32(bits)
        fin = np.isfinite(x)
        for cname, ctx in CONTEXTS:
            for a in ACTS:
                with self.subTest(ctx=cname, act=a):
                    y = ffn.act(bits, a, dtype="bf16", ctx=ctx)
                    self.assertEqual(y.dtype, np.uint16)  # bits in, bits out
                    ref = ref_act(a, x)
                    ok = fin & np.isfinite(ref)
                    bf16_ulps_ok(self, "%s bf16 %s" % (cname, a), y, ffntest.f64_to_bf16(ref), ok)
                    self.assertTrue(np.all(np.isnan(ffntest.bf16_to_f32(y))[np.isnan(x)]))

    def test_bf16_in_f32_out(self):
        bits = ffntest.all_bits16()
        x = ffntest.bf16_to_f32(bits)
        fin = np.isfinite(x)
        for a in ACTS:
            y = ffn.act(bits, a, dtype="bf16", out_dtype="f32")
            self.assertEqual(y.dtype, np.float32)
            ref = ref_act(a, x)
            self.assertWithin("bf16->f32 %s" % a, y[fin], ref[fin],
                              FWD_ULP[a] * ulp32(ref[fin]), show=x[fin])

    def test_bf16_backward_and_glu(self):
        bits = ffntest.all_bits16()
        x = ffntest.bf16_to_f32(bits)
        r = ffntest.rng(7)
        dy_bits = ffntest.f32_to_bf16(r.standard_normal(bits.size).astype(np.float32))
        dy = ffntest.bf16_to_f32(dy_bits).astype(np.float64)
        fin = np.isfinite(x)
        for a in ACTS:
            with self.subTest(act=a):
                dx = ffn.act_backward(bits, dy_bits, a, dtype="bf16")
                ref = dy * ref_grad(a, x)
                ok = fin & np.isfinite(ref) & (np.abs(ref) > 1e-30)
                # Near the derivative's zero the f32 result's absolute error can move the bf16
                # rounding: allow it where |ref| is within the absolute floor.
                ok &= np.abs(ref) > 64 * BWD_ABS_EPS * EPS32 * np.abs(dy)
                bf16_ulps_ok(self, "bf16 %s backward" % a, dx, ffntest.f64_to_bf16(ref), ok)
                h = ffn.glu(bits, dy_bits, a, dtype="bf16")
                ref = ref_act(a, x) * dy
                ok = fin & np.isfinite(ref)
                bf16_ulps_ok(self, "bf16 %s glu" % a, h, ffntest.f64_to_bf16(ref), ok)

    def test_f16_forward_all_inputs(self):
        x = ffntest.all_bits16().view(np.float16)
        fin = np.isfinite(x)
        for cname, ctx in CONTEXTS:
            for a in ACTS:
                with self.subTest(ctx=cname, act=a):
                    y = ffn.act(x, a, ctx=ctx)
                    self.assertEqual(y.dtype, np.float16)
                    ref = ref_act(a, x.astype(np.float64))
                    with np.errstate(over="ignore"):
                        # f64 -> f16 in one rounding: numpy rounds float64 to float16 directly.
                        ref16 = ref.astype(np.float16)
                    ok = fin & np.isfinite(ref16)
                    d = ffntest.storage_ulps(y.view(np.uint16), ref16.view(np.uint16), "f16")[ok]
                    self.assertLessEqual(int(d.max()), STORAGE_ULP, "%s f16 %s" % (cname, a))
                    self.assertLessEqual(float(np.mean(d > 0)), STORAGE_MISMATCH_MAX)

    def test_ml_dtypes_bfloat16(self):
        try:
            import ml_dtypes
        except ImportError:
            self.skipTest("ml_dtypes is not installed (bf16 arrays are passed as uint16 bits)")
        x = ffntest.all_bits16().view(ml_dtypes.bfloat16)
        y = ffn.act(x, "silu")
        self.assertEqual(y.dtype, x.dtype)
        np.testing.assert_array_equal(y.view(np.uint16),
                                      ffn.act(x.view(np.uint16), "silu", dtype="bf16"))


class TestLayouts(ffntest.TestCase):
    def setUp(self):
        r = ffntest.rng(3)
        self.fused = r.standard_normal((7, 2 * 33)).astype(np.float32)
        self.x3 = r.standard_normal((3, 5, 16)).astype(np.float32)

    def test_fused_halves_without_copy(self):
        gate, up = ffn.gate_up_split(self.fused)
        self.assertTrue(np.shares_memory(gate, self.fused) and np.shares_memory(up, self.fused))
        np.testing.assert_array_equal(gate, self.fused[:, :33])
        np.testing.assert_array_equal(up, self.fused[:, 33:])
        ug, uu = ffn.gate_up_split(self.fused, "up_first")
        np.testing.assert_array_equal(ug, self.fused[:, 33:])
        np.testing.assert_array_equal(uu, self.fused[:, :33])
        h = ffn.glu(gate, up, "silu")
        np.testing.assert_array_equal(h, ffn.glu(gate.copy(), up.copy(), "silu"))
        # gate/up split of a 3-D fused buffer: along the last dimension
        f3 = np.concatenate([self.x3, -self.x3], axis=-1)
        g3, u3 = ffn.gate_up_split(f3)
        np.testing.assert_array_equal(g3, self.x3)
        np.testing.assert_array_equal(u3, -self.x3)

    def test_strided_views_match_contiguous(self):
        cases = {
            "column slice": self.fused[:, 3:40],
            "row step": self.fused[::2],
            "3-D slice": self.x3[:, :, 2:11],
            "1-D stride 2": self.fused.ravel()[::2],
            "column": self.fused[:, 5],
            "0-d": np.array(1.5, dtype=np.float32),
            "size-1 dims": self.x3[:, :1, :],
        }
        for name, x in cases.items():
            with self.subTest(case=name):
                ref = ffn.act(np.ascontiguousarray(x), "gelu_erf")
                np.testing.assert_array_equal(ffn.act(x, "gelu_erf"), ref)

    def test_out_strided_writes_only_its_elements(self):
        big = np.full((7, 50), 7.0, dtype=np.float32)
        x = self.fused[:, :20]
        out = big[:, 10:30]
        r = ffn.act(x, "relu", out=out)
        self.assertIs(r, out)
        np.testing.assert_array_equal(big[:, 10:30], np.maximum(x, 0))
        np.testing.assert_array_equal(big[:, :10], 7.0)
        np.testing.assert_array_equal(big[:, 30:], 7.0)

    def test_refused_without_copy(self):
        cases = {"transposed": self.fused.T, "reversed": self.fused[:, ::-1],
                 "broadcast": np.broadcast_to(self.fused[:1], (7, 66)),
                 "3-D transposed": self.x3.transpose(0, 2, 1),
                 "3-D slice of rows and columns": self.x3[:, 1:4, 2:11]}
        for name, x in cases.items():
            with self.subTest(case=name):
                with self.assertRaises(ffn.InvalidArgumentError) as cm:
                    ffn.act(x, "silu")
                self.assertIn("copy=True", str(cm.exception))
                self.assertIn("strides", str(cm.exception))
                y = ffn.act(x, "silu", copy=True)
                np.testing.assert_array_equal(y, ffn.act(np.ascontiguousarray(x), "silu"))

    def test_out_copy_back(self):
        x = np.ascontiguousarray(self.fused.T)
        out = np.zeros((7, 66), dtype=np.float32).T  # a transposed output
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.act(x, "silu", out=out)
        np.testing.assert_array_equal(out, 0.0)  # refused: untouched
        ffn.act(x, "silu", out=out, copy=True)
        np.testing.assert_array_equal(out, ffn.act(x, "silu"))

    def test_in_place(self):
        x = self.fused.copy()
        ref = ffn.act(x, "gelu_tanh")
        y = ffn.act(x, "gelu_tanh", out=x)
        self.assertIs(y, x)
        np.testing.assert_array_equal(x, ref)
        # h over gate, inside the fused buffer
        f = self.fused.copy()
        g, u = ffn.gate_up_split(f)
        ref = ffn.glu(g, u, "silu")
        ffn.glu(g, u, "silu", out=g)
        np.testing.assert_array_equal(f[:, :33], ref)
        # gradients over the saved pre-activations
        f = self.fused.copy()
        g, u = ffn.gate_up_split(f)
        dh = np.ones_like(g)
        rg, ru = ffn.glu_backward(g, u, dh, "silu")
        dg, du = ffn.glu_backward(g, u, dh, "silu", out=(g, u))
        self.assertIs(dg, g)
        np.testing.assert_array_equal(f[:, :33], rg)
        np.testing.assert_array_equal(f[:, 33:], ru)
        # dx over dy
        x, dy = self.fused.copy(), np.full_like(self.fused, 0.5)
        ref = ffn.act_backward(x, dy, "gelu_erf")
        ffn.act_backward(x, dy, "gelu_erf", out=dy)
        np.testing.assert_array_equal(dy, ref)

    def test_empty(self):
        y = ffn.act(np.zeros((0, 5), np.float32), "silu")
        self.assertEqual(y.shape, (0, 5))
        g, u = ffn.gate_up_split(np.zeros((0, 4), np.float32))
        self.assertEqual((g.shape, u.shape), ((0, 2), (0, 2)))


class TestErrors(unittest.TestCase):
    def setUp(self):
        r = ffntest.rng(4)
        self.g = r.standard_normal((4, 5)).astype(np.float32)
        self.u = r.standard_normal((4, 5)).astype(np.float32)

    def sentinel(self, shape=(4, 5), dtype=np.float32):
        return np.full(shape, 12345.0, dtype=dtype)

    def test_wrong_dtype(self):
        for bad, word in ((self.g.astype(np.float64), "float64"), (np.arange(5), "int64"),
                          (self.g.astype(np.int32), "int32")):
            with self.assertRaises(ffn.InvalidArgumentError) as cm:
                ffn.act(bad, "silu")
            self.assertIn(word, str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(np.zeros(4, np.uint16), "silu")
        self.assertIn("dtype='bf16'", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.act([1.0, 2.0], "silu")
        out = self.sentinel()
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.glu(self.g, self.u.astype(np.float64), "silu", out=out)
        np.testing.assert_array_equal(out, 12345.0)

    def test_shape_mismatch_library_message(self):
        out = self.sentinel()
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.glu(self.g, self.u[:, :4], "silu", out=out)
        e = cm.exception
        self.assertTrue(e.library_message.startswith(
            "ffn_glu_forward: up has shape [4, 4], gate has [4, 5]; they must agree"),
            e.library_message)
        self.assertIn("up (4, 4) f32", str(e))
        self.assertEqual(e.status_name, "INVALID_ARG")
        self.assertIsInstance(e, ValueError)
        np.testing.assert_array_equal(out, 12345.0)
        outs = (self.sentinel(), self.sentinel())
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.glu_backward(self.g, self.u, self.g[:3], "silu", out=outs)
        self.assertIn("ffn_glu_backward: dh has shape [3, 5]", str(cm.exception))
        for o in outs:
            np.testing.assert_array_equal(o, 12345.0)
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(self.g, "silu", out=self.sentinel((5, 4)))
        self.assertIn("ffn_act_forward: y has shape [5, 4], x has [4, 5]", str(cm.exception))

    def test_odd_split_library_message(self):
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.gate_up_split(np.zeros((3, 343), np.float32))
        self.assertTrue(str(cm.exception).startswith(
            "ffn_gate_up_split: fused has 343 columns; a fused gate/up needs an even count"))

    def test_mixed_input_dtypes_library_message(self):
        out = self.sentinel()
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.glu(self.g, self.u.astype(np.float16), "silu", out=out)
        self.assertIn("ffn_glu_forward: up is f16 but gate is f32; inputs must share one dtype",
                      str(cm.exception))
        np.testing.assert_array_equal(out, 12345.0)

    def test_partial_overlap_library_message(self):
        buf = np.arange(21, dtype=np.float32)
        before = buf.copy()
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(buf[:20], "silu", out=buf[1:])
        self.assertIn("ffn_act_forward: y overlaps x without being the same view",
                      str(cm.exception))
        np.testing.assert_array_equal(buf, before)

    def test_read_only_and_bad_names(self):
        out = self.sentinel()
        out.flags.writeable = False
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(self.g, "silu", out=out)
        self.assertIn("read-only", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(self.g, "swishy")
        self.assertIn("gelu_tanh", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.gate_up_split(self.g, "middle")

    def test_bad_isa_environment_library_message(self):
        env = dict(ffntest.subprocess_env(), FFN_ISA="bogus")
        code = ("import ffn\ntry:\n    ffn.act(__import__('numpy').zeros(3, 'float32'), 'silu')\n"
                "except ffn.UnsupportedError as e:\n    print('raised:', e)\n")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertIn("raised: ffn_ctx_create: FFN_ISA=bogus is not one of scalar|avx2|avx512|auto",
                      r.stdout, r.stderr)

    def test_context_values(self):
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.Context(threads=-1)
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.Context(accuracy="highest")
        with self.assertRaises(ffn.UnsupportedError) as cm:
            ffn.Context(backend="cuda")
        self.assertIn("backend='cuda'", str(cm.exception))
        c = ffn.Context()
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            c.threads = -2
        self.assertIn("ffn_ctx_set_threads: n_threads=-2", str(cm.exception))


class TestContext(unittest.TestCase):
    def test_threads_bitwise_identical(self):
        x = f32_inputs(600000)
        outs = []
        for t in (1, 2, 3):
            c = ffn.Context(threads=t)
            self.assertEqual(c.threads, t)
            outs.append(ffn.act(x, "gelu_erf", ctx=c))
        for o in outs[1:]:
            np.testing.assert_array_equal(o, outs[0])

    def test_with_and_thread_defaults(self):
        c = ffn.Context(isa="scalar", threads=1)
        self.assertEqual(c.isa, "scalar")
        d = ffn.get_context()
        with c:
            self.assertIs(ffn.get_context(), c)
            with ffn.Context(threads=2) as c2:
                self.assertIs(ffn.get_context(), c2)
            self.assertIs(ffn.get_context(), c)
        self.assertIs(ffn.get_context(), d)
        seen = []
        th = threading.Thread(target=lambda: seen.append(ffn.get_context()))
        th.start()
        th.join()
        self.assertIsNot(seen[0], d)  # one default context per thread

    def test_set_defaults(self):
        old = ffn.set_defaults(threads=1, accuracy="high")
        try:
            c = ffn.get_context()
            self.assertEqual((c.threads, c.accuracy), (1, "high"))
        finally:
            ffn.set_defaults(**old)
        self.assertEqual(ffn.get_context().accuracy, old["accuracy"])
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.set_defaults(isa="avx9000")

    def test_concurrent_threads(self):
        x = f32_inputs(20000)
        ref = ffn.act(x, "silu")
        errs = []

        def work():
            for _ in range(20):
                if not np.array_equal(ffn.act(x, "silu"), ref):
                    errs.append(1)
        ts = [threading.Thread(target=work) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertFalse(errs)


class TestConvert(unittest.TestCase):
    def test_round_trips(self):
        x = f32_inputs(20000)
        x = np.concatenate([x, np.float32([np.nan, np.inf, -np.inf, 3.4e38])])
        b = ffn.convert(x, "bf16")
        np.testing.assert_array_equal(b.view(np.uint16) if b.dtype != np.uint16 else b,
                                      ffntest.f32_to_bf16(x))
        back = ffn.convert(b, "f32", in_dtype="bf16") if b.dtype == np.uint16 else \
            ffn.convert(b, "f32")
        np.testing.assert_array_equal(back, ffntest.bf16_to_f32(ffntest.f32_to_bf16(x)))
        h = ffn.convert(x, "f16")
        self.assertEqual(h.dtype, np.float16)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(h, x.astype(np.float16))


class TestModel(unittest.TestCase):
    def test_fixture_layers(self):
        for name in ("llama", "phi3", "gpt2"):
            d = os.path.join(ffntest.DATA, "hf", name)
            m = ffn.open_model(d)
            self.assertEqual(m.desc["format"], "safetensors")
            self.assertEqual(m.desc["d_model"], 64)
            L = m.layer(1)
            st = ffntest.read_safetensors(os.path.join(d, "model.safetensors"))
            for slot, ft in L.tensors.items():
                a = ft.numpy()
                self.assertFalse(a.flags.writeable)
                np.testing.assert_array_equal(a, st[ft.name])
                self.assertEqual(a.shape, ft.shape)
            if name == "phi3":
                self.assertEqual((L.layout, L.param_name("gate_up")), ("fused",
                                                                       "gate_up_proj.weight"))
            if name == "gpt2":
                self.assertEqual((L.orient, L.gated, L.act), ("in_out", False, "gelu_tanh"))

    def test_missing(self):
        with self.assertRaises(ffn.Error) as cm:
            ffn.open_model(os.path.join(ffntest.DATA, "no-such-model"))
        self.assertTrue(str(cm.exception))
        m = ffn.open_model(os.path.join(ffntest.DATA, "hf", "llama"))
        with self.assertRaises(ffn.InvalidArgumentError):
            m.layer(99)


if __name__ == "__main__":
    unittest.main(verbosity=2)
