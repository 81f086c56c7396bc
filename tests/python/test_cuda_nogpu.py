# test_cuda_nogpu.py — the CUDA paths of the package that can be checked without a GPU:
# - the library's own refusal where CUDA cannot run (a build without the backend, no device):
#   ffn.Context(backend="cuda"), CUDA operands and block weights raise ffn.UnsupportedError
#   carrying ffn_backend_available's reason;
# - which context a call picks (by where its operands lie), the per-thread default CUDA contexts,
#   `with` blocks, explicit contexts of the wrong device, operands on two devices;
# - following torch's current stream: ffn_ctx_set_stream is called when, and only when, the
#   stream read before a call differs from the one the context has.
#
# "CUDA tensors" here are CPU tensors of a subclass that says it lies on cuda:0 / cuda:1, and the
# library is a proxy of the real one whose CUDA contexts are CPU contexts underneath: it records
# the options each context was created with and every ffn_ctx_set_stream. The stream is a number
# handed out by a fake source (ffn._context.set_stream_source). On a GPU, test_cuda.py runs the
# same paths for real.
import ctypes
import threading
import unittest

import ffntest

ffntest.require_torch()

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ffn  # noqa: E402
import ffn.torch as ft  # noqa: E402
from ffn import _context, _lib  # noqa: E402

CUDA_OK, CUDA_WHY = ffn.backend_available("cuda")


class Cuda0(torch.Tensor):
    """A CPU tensor that reports cuda:0 (is_cuda, get_device): what the package reads."""
    DEV = 0

    @property
    def is_cuda(self):
        return True

    @property
    def is_cpu(self):
        return False

    def get_device(self):
        return self.DEV


class Cuda1(Cuda0):
    DEV = 1


def on(t, cls=Cuda0):
    return t.as_subclass(cls)


class FakeLib:
    """The real library, except: CUDA is available, a CUDA context is a CPU context whose
    creation options are recorded, and set_stream / stream are recorded per handle."""

    def __init__(self, real):
        self.real = real
        self.created = {}   # handle -> (backend, device, stream, accuracy)
        self.streams = {}   # handle -> current stream (int, 0 for NULL)
        self.set_calls = []  # (handle, stream)

    def __getattr__(self, name):
        return getattr(self.real, name)

    def ffn_backend_available(self, backend, why, n):
        return True

    def ffn_ctx_create(self, popts, phandle):
        o = popts._obj
        rec = (o.backend, o.device, o.stream or 0, o.accuracy)
        cpu = _lib.CtxOpts()
        ctypes.memmove(ctypes.byref(cpu), ctypes.byref(o), ctypes.sizeof(o))
        cpu.backend, cpu.device, cpu.stream = 0, 0, None
        st = self.real.ffn_ctx_create(ctypes.byref(cpu), phandle)
        if st == 0:
            h = phandle._obj.value
            self.created[h] = rec
            self.streams[h] = o.stream or 0
        return st

    def ffn_ctx_set_stream(self, h, stream):
        self.set_calls.append((h, stream or 0))
        self.streams[h] = stream or 0
        return 0

    def ffn_ctx_stream(self, h):
        return self.streams.get(h, 0) or None


class FakeCuda(unittest.TestCase):
    """Runs each test against FakeLib and a settable current stream per device."""

    def setUp(self):
        self.lib = FakeLib(_context.LIB)
        self.real_lib = _context.LIB
        _context.LIB = self.lib
        self.current = {0: 0, 1: 0}
        self.old_source = _context.set_stream_source(lambda d: self.current[d])
        self.old_defaults = ffn.set_defaults()  # a new generation: fresh per-thread defaults
        g = torch.Generator().manual_seed(ffntest.SEED)
        self.x = torch.randn(64, 48, generator=g)
        self.up = torch.randn(64, 48, generator=g)

    def tearDown(self):
        _context.LIB = self.real_lib
        _context.set_stream_source(self.old_source)
        ffn.set_defaults(**self.old_defaults)

    def sets_on(self, ctx):
        return [s for h, s in self.lib.set_calls if h == ctx.handle]

    def test_context_options(self):
        c = ffn.Context(backend="cuda", device=1, accuracy="high")
        self.assertEqual(self.lib.created[c.handle], (1, 1, 0, 1))
        self.assertEqual((c.backend, c.device, c.follows_current_stream), ("cuda", 1, True))
        self.assertIn("cuda:1", repr(c))
        c = ffn.Context(backend="cuda", device="cuda:0", stream=0x5000)
        self.assertEqual(self.lib.created[c.handle][:3], (1, 0, 0x5000))
        self.assertFalse(c.follows_current_stream)
        self.assertEqual(c.stream, 0x5000)
        for bad in (dict(device=-1), dict(device="gpu0"), dict(stream=-3), dict(stream="s")):
            with self.subTest(bad=bad), self.assertRaises(ffn.InvalidArgumentError):
                ffn.Context(backend="cuda", **bad)
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.Context(device=0)
        self.assertIn("backend='cuda' only", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.Context(backend="rocm")

    def test_follows_current_stream(self):
        xs, y = on(self.x), on(torch.empty(64, 48))
        ffn.act(xs, "silu", out=y)
        c = ffn.get_context(0)
        self.assertEqual(self.lib.created[c.handle][:2], (1, 0))
        self.assertEqual(self.sets_on(c), [])  # the default stream: the context's from the start
        torch.testing.assert_close(y.as_subclass(torch.Tensor), ffn.act(self.x, "silu"),
                                   rtol=0, atol=0)
        seq = [0x1000, 0x1000, 0x2000, 0x2000, 0, 0x1000]
        for s in seq:
            self.current[0] = s
            ffn.glu(xs, on(self.up), "silu", out=y)
        self.assertEqual(self.sets_on(c), [0x1000, 0x2000, 0, 0x1000])
        self.assertEqual(c.stream, 0x1000)
        # Another device's stream is read for a context of that device only.
        self.current[1] = 0x7000
        ffn.act(xs, "silu", out=y)
        self.assertEqual(self.sets_on(c), [0x1000, 0x2000, 0, 0x1000])
        ffn.act(on(self.x, Cuda1), "silu", out=on(torch.empty(64, 48), Cuda1))
        self.assertEqual(self.sets_on(ffn.get_context("cuda:1")), [0x7000])

    def test_fixed_stream(self):
        c = ffn.Context(backend="cuda", stream=0x5000)
        self.current[0] = 0x5000  # torch's current stream is the context's: no guard needed
        y = on(torch.empty(64, 48))
        for s in (0x5000, 0x5000):
            ffn.act(on(self.x), "gelu_tanh", out=y, ctx=c)
        self.assertEqual(self.sets_on(c), [])
        c.set_stream(0x6000)
        self.assertEqual((self.sets_on(c), c.stream, c.follows_current_stream),
                         ([0x6000], 0x6000, False))
        c.set_stream(None)
        self.assertTrue(c.follows_current_stream)
        self.current[0] = 0x9000
        ffn.act(on(self.x), "gelu_tanh", out=y, ctx=c)
        self.assertEqual(self.sets_on(c), [0x6000, 0x9000])
        c.synchronize()
        with self.assertRaises(ffn.InvalidArgumentError):
            ffn.Context().set_stream(0x1000)

    def test_defaults_per_thread_device_and_generation(self):
        c0, c1 = ffn.get_context(0), ffn.get_context("cuda:1")
        self.assertIs(ffn.get_context(torch.device("cuda", 0)), c0)
        self.assertIsNot(c0, c1)
        self.assertEqual((c0.device, c1.device), (0, 1))
        self.assertIs(ffn.get_context(), ffn.get_context("cpu"))
        self.assertIsNone(ffn.get_context().device)
        seen = []
        th = threading.Thread(target=lambda: seen.append(ffn.get_context(0)))
        th.start()
        th.join()
        self.assertIsNot(seen[0], c0)  # one default CUDA context per thread and device
        old = ffn.set_defaults(accuracy="high")
        try:
            c = ffn.get_context(0)
            self.assertIsNot(c, c0)
            self.assertEqual(self.lib.created[c.handle][3], 1)  # FFN_ACCURACY_HIGH
        finally:
            ffn.set_defaults(**old)

    def test_with_blocks_pick_by_device(self):
        cpu, cuda = ffn.Context(threads=1), ffn.Context(backend="cuda", device=0)
        with cuda:
            self.assertIs(ffn.get_context(0), cuda)
            self.assertIsNot(ffn.get_context(), cuda)  # host operands keep a CPU context
            with cpu:
                self.assertIs(ffn.get_context(), cpu)
                self.assertIs(ffn.get_context(0), cuda)  # the innermost of cuda:0
                self.current[0] = 0x3000
                ffn.act(on(self.x), "silu", out=on(torch.empty(64, 48)))
                self.assertEqual(self.sets_on(cuda), [0x3000])
                np.testing.assert_array_equal(ffn.act(self.x.numpy(), "silu"),
                                              ffn.act(self.x, "silu").numpy())
            self.assertIsNot(ffn.get_context(1), cuda)

    def test_wrong_context_and_mixed_devices(self):
        cpu, cuda = ffn.Context(), ffn.Context(backend="cuda", device=0)
        y = on(torch.full((64, 48), 5.0))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(self.x.numpy(), "silu", ctx=cuda)
        self.assertIn("the operands are in host memory but ctx runs on cuda:0", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(on(self.x), "silu", out=y, ctx=cpu)
        self.assertIn("the operands are on cuda:0 but ctx runs on cpu", str(cm.exception))
        self.assertIn("ffn.Context(backend='cuda', device=0)", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ffn.act(on(self.x, Cuda1), "silu", out=y, ctx=cuda)
        self.assertIn("on cuda:1 but ctx runs on cuda:0", str(cm.exception))
        cases = {"glu cuda+cpu": (lambda: ffn.glu(on(self.x), self.up, "silu", out=y),
                                  "gate is on cuda:0, up is on cpu"),
                 "glu cuda+numpy": (lambda: ffn.glu(on(self.x), self.up.numpy(), "silu", out=y),
                                    "up is on host memory (NumPy)"),
                 "act out on cuda:1": (lambda: ffn.act(on(self.x), "silu",
                                                       out=on(torch.empty(64, 48), Cuda1)),
                                       "y is on cuda:1, x is on cuda:0"),
                 "act out on cpu": (lambda: ffn.act(on(self.x), "silu", out=torch.empty(64, 48)),
                                    "y is on cpu, x is on cuda:0"),
                 "backward": (lambda: ffn.glu_backward(on(self.x), on(self.up), self.x, "silu",
                                                       out=(y, y.clone())),
                              "dh is on cpu"),
                 "autograd": (lambda: ft.glu(on(self.x).requires_grad_(), self.up, "silu"),
                              "gate is on cuda:0, up is on cpu")}
        for name, (call, text) in cases.items():
            with self.subTest(case=name):
                with self.assertRaises(ffn.InvalidArgumentError) as cm:
                    call()
                self.assertIn(text, str(cm.exception))
                self.assertIn("must lie on one device", str(cm.exception))
                self.assertTrue(bool((y.as_subclass(torch.Tensor) == 5.0).all()))

    def test_block_devices(self):
        d, m = 16, 24
        g = torch.Generator().manual_seed(3)
        w = {k: torch.randn(*s, generator=g) for k, s in (("gate", (m, d)), ("up", (m, d)),
                                                          ("down", (d, m)))}
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ft.GatedFFN(gate=on(w["gate"]), up=w["up"], down=w["down"])
        self.assertIn("w_gate cuda:0, w_up cpu, w_down cpu", str(cm.exception))
        mod = ft.GatedFFN(**w)
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            mod(on(torch.randn(3, d)))
        self.assertIn("x is on cuda:0, the weights on cpu", str(cm.exception))


@unittest.skipIf(CUDA_OK, "this libffn can run CUDA here: test_cuda.py checks the real paths")
class NoCuda(unittest.TestCase):
    """The real library, which cannot run CUDA here: every CUDA path says why, in its words."""

    def check(self, e, *texts):
        self.assertIsInstance(e, ffn.UnsupportedError)
        self.assertIn(CUDA_WHY, str(e))
        self.assertIn(ffn.library_path, str(e))
        for t in texts:
            self.assertIn(t, str(e))

    def test_reason(self):
        # Either this build has no CUDA backend, or it has one and finds no usable device.
        self.assertTrue(CUDA_WHY.startswith("this build of ffn has no cuda backend") or
                        CUDA_WHY.startswith("no usable CUDA device") or
                        CUDA_WHY.startswith("no CUDA device"), CUDA_WHY)
        self.assertTrue(ffn.info()["cuda"].startswith("no: "))

    def test_context(self):
        with self.assertRaises(ffn.UnsupportedError) as cm:
            ffn.Context(backend="cuda", device=0)
        self.check(cm.exception, "ffn.Context: backend='cuda' cannot run")
        with self.assertRaises(ffn.UnsupportedError) as cm:
            ffn.get_context("cuda:0")
        self.check(cm.exception, "the operands are on cuda:0, but this libffn cannot run CUDA")

    def test_ops_and_modules(self):
        x = torch.randn(8, 6)
        y = on(torch.full((8, 6), 5.0))
        calls = {"act": lambda: ffn.act(on(x), "silu", out=y),
                 "glu": lambda: ffn.glu(on(x), on(x), "silu", out=y),
                 "split": lambda: ffn.gate_up_split(on(x)),
                 "convert": lambda: ffn.convert(on(x), "bf16",
                                                out=on(torch.empty(8, 6).bfloat16())),
                 "autograd": lambda: ft.act(on(x).requires_grad_(), "silu"),
                 "module": lambda: ft.GatedFFN(gate=on(torch.randn(6, 4)), up=on(torch.randn(6, 4)),
                                               down=on(torch.randn(4, 6)))}
        for name, call in calls.items():
            with self.subTest(call=name):
                with self.assertRaises(ffn.UnsupportedError) as cm:
                    call()
                self.check(cm.exception, "cuda:0")
                self.assertTrue(bool((y.as_subclass(torch.Tensor) == 5.0).all()))

    def test_other_devices(self):
        with self.assertRaises(ffn.UnsupportedError) as cm:
            ffn.act(torch.empty(4, device="meta"), "silu")
        self.assertIn("ffn runs on the CPU and on CUDA devices", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
