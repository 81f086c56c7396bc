# test_torch_modules.py — ffn.torch.FFN / GatedFFN (forward and backward through ffn_block_*)
# against the Hugging Face fixtures of tests/data and against plain torch implementations of the
# same MLPs, written here as transformers writes them (LlamaMLP, GemmaMLP, Phi3MLP with its fused
# gate_up_proj, GPT2MLP with Conv1D [in, out] weights, T5DenseGatedActDense).
#
# The fixtures hold what transformers computed in float64 (stored as float32) for layer 1's MLP:
# y, dx and every parameter's gradient for dy. Tolerance as tests/block/test_block_hf.c:
# |got - ref| ≤ 2e-5 · max|ref| + 1e-4 · |ref| (f32 GEMMs of length ≤ 256 on O(1) values).
import copy
import io
import math
import os
import unittest

import ffntest

ffntest.require_torch()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F
from torch import nn  # noqa: E402

import ffn
import ffn.torch as ft

TOL_ABS, TOL_REL = 2e-5, 1e-4


# --- plain torch MLPs, as transformers defines them ---------------------------------------------

class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: weight [in, out], y = x·W + b."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (x + 0.044715 * torch.pow(x, 3.0))))


class PytorchGELUTanh(nn.Module):
    def forward(self, x):
        return F.gelu(x, approximate="tanh")


class LlamaMLP(nn.Module):
    def __init__(self, d, m, act=None, bias=False):
        super().__init__()
        self.gate_proj = nn.Linear(d, m, bias=bias)
        self.up_proj = nn.Linear(d, m, bias=bias)
        self.down_proj = nn.Linear(m, d, bias=bias)
        self.act_fn = act if act is not None else nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class GemmaMLP(LlamaMLP):
    def __init__(self, d, m):
        super().__init__(d, m, act=PytorchGELUTanh())


class Phi3MLP(nn.Module):
    def __init__(self, d, m):
        super().__init__()
        self.gate_up_proj = nn.Linear(d, 2 * m, bias=False)
        self.down_proj = nn.Linear(m, d, bias=False)
        self.activation_fn = nn.SiLU()

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(up * self.activation_fn(gate))


class GPT2MLP(nn.Module):
    def __init__(self, d, m):
        super().__init__()
        self.c_fc = Conv1D(m, d)
        self.c_proj = Conv1D(d, m)
        self.act = NewGELUActivation()

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class T5DenseGatedActDense(nn.Module):
    def __init__(self, d, m):
        super().__init__()
        self.wi_0 = nn.Linear(d, m, bias=False)
        self.wi_1 = nn.Linear(d, m, bias=False)
        self.wo = nn.Linear(m, d, bias=False)
        self.act = NewGELUActivation()

    def forward(self, x):
        return self.wo(self.act(self.wi_0(x)) * self.wi_1(x))


PLAIN = {"LlamaMLP": (LlamaMLP, "model.layers.1.mlp."),
         "GemmaMLP": (GemmaMLP, "model.layers.1.mlp."),
         "Phi3MLP": (Phi3MLP, "model.layers.1.mlp."),
         "GPT2MLP": (GPT2MLP, "transformer.h.1.mlp."),
         "T5DenseGatedActDense": (T5DenseGatedActDense,
                                  "encoder.block.1.layer.1.DenseReluDense.")}


def load_fixture(name):
    d = os.path.join(ffntest.DATA, "hf", name)
    return (d, ffntest.read_safetensors(os.path.join(d, "model.safetensors")),
            ffntest.read_safetensors(os.path.join(d, "io.safetensors")))


def plain_module(name, dtype=torch.float32):
    """The plain torch MLP of fixture `name`, with layer 1's weights from model.safetensors."""
    d, model, io = load_fixture(name)
    cls, prefix = PLAIN[io["__metadata__"]["module"]]
    dm = io["x"].shape[1]
    if prefix + "c_proj.weight" in model:
        m = model[prefix + "c_proj.weight"].shape[0]  # Conv1D [in = m, out = d]
    else:
        m = model[prefix + ("wo.weight" if prefix + "wo.weight" in model else
                            "down_proj.weight")].shape[1]  # nn.Linear [out = d, in = m]
    mod = cls(dm, m)
    sd = {k[len(prefix):]: torch.from_numpy(v) for k, v in model.items() if k.startswith(prefix)}
    mod.load_state_dict(sd)
    return mod.to(dtype), io


class Checks(unittest.TestCase):
    def close(self, what, got, ref):
        got = got.detach().double().numpy() if isinstance(got, torch.Tensor) else got
        ref = np.asarray(ref, dtype=np.float64)
        self.assertEqual(got.shape, ref.shape, what)
        err = np.abs(got - ref)
        bound = TOL_ABS * np.abs(ref).max() + TOL_REL * np.abs(ref)
        bad = ~(err <= bound)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            self.fail("%s: %d of %d outside; first [%d] got %.9g ref %.9g (max |err|/max|ref| "
                      "%.2e)" % (what, bad.sum(), bad.size, i, got.ravel()[i], ref.ravel()[i],
                                 err.max() / max(np.abs(ref).max(), 1e-30)))

    def run_block(self, mod, x, dy):
        x = x.clone().requires_grad_()
        y = mod(x)
        y.backward(dy)
        return y, x.grad


class TestFromHFMlp(Checks):
    """from_hf_mlp over the plain torch MLPs: shared Parameters, outputs and every gradient
    against the fixture and against the plain module's own autograd."""

    def test_fixtures(self):
        for name in ("llama", "gemma", "phi3", "gpt2", "t5gated"):
            for recompute in (False, True):
                with self.subTest(fixture=name, recompute=recompute):
                    self.check(name, recompute)

    def check(self, name, recompute):
        plain, io = plain_module(name)
        # The plain module itself reproduces the fixture (in float64): it is the same MLP.
        p64, _ = plain_module(name, torch.float64)
        x64 = torch.from_numpy(io["x"]).double().requires_grad_()
        y64 = p64(x64)
        y64.backward(torch.from_numpy(io["dy"]).double())
        self.close("%s plain y" % name, y64, io["y"])
        self.close("%s plain dx" % name, x64.grad, io["dx"])

        mod = ft.from_hf_mlp(plain, recompute=recompute)
        hf_params = dict(plain.named_parameters())
        for pname, src in mod.source_names.items():
            self.assertIs(getattr(mod, pname), hf_params[src], "%s is not shared" % pname)
        self.assertEqual(mod.block_info(7)["cache_bytes"], 0)  # f32 weights used in place

        x, dy = torch.from_numpy(io["x"]), torch.from_numpy(io["dy"])
        y, dx = self.run_block(mod, x, dy)
        self.close("%s y" % name, y, io["y"])
        self.close("%s dx" % name, dx, io["dx"])
        ours = {src: hf_params[src].grad.clone() for src in mod.source_names.values()}
        for src, g in ours.items():
            self.assertEqual(tuple(g.shape), tuple(hf_params[src].shape))  # weight's layout
            self.close("%s grad.%s" % (name, src), g, io["grad." + src])

        # The same module run by plain torch autograd in f32.
        plain.zero_grad()
        x2 = x.clone().requires_grad_()
        y2 = plain(x2)
        y2.backward(dy)
        self.close("%s y vs torch" % name, y, y2.detach().numpy())
        self.close("%s dx vs torch" % name, dx, x2.grad.numpy())
        for src, g in ours.items():
            self.close("%s grad.%s vs torch" % (name, src), g, hf_params[src].grad.numpy())

    def test_activation_detection(self):
        self.assertEqual(ft.from_hf_mlp(LlamaMLP(8, 12)).act, "silu")
        self.assertEqual(ft.from_hf_mlp(GemmaMLP(8, 12)).act, "gelu_tanh")
        self.assertEqual(ft.from_hf_mlp(LlamaMLP(8, 12, act=nn.GELU())).act, "gelu_erf")
        self.assertEqual(ft.from_hf_mlp(GPT2MLP(8, 12)).orient, "in_out")
        self.assertEqual(ft.from_hf_mlp(Phi3MLP(8, 12)).layout, "fused")
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ft.from_hf_mlp(LlamaMLP(8, 12, act=nn.Tanh()))
        self.assertIn("pass act=", str(cm.exception))
        self.assertEqual(ft.from_hf_mlp(LlamaMLP(8, 12, act=nn.Tanh()), act="relu").act, "relu")
        with self.assertRaises(ffn.InvalidArgumentError):
            ft.from_hf_mlp(nn.Linear(3, 3))

    def test_llama_bias(self):
        # LlamaMLP with mlp_bias=True and hidden_act "gelu" (the erf GeLU; fixture
        # hf_more/llama_bias): biases go to the block too.
        d = os.path.join(ffntest.DATA, "hf_more", "llama_bias")
        model = ffntest.read_safetensors(os.path.join(d, "model.safetensors"))
        io = ffntest.read_safetensors(os.path.join(d, "io.safetensors"))
        prefix = "model.layers.1.mlp."
        m = model[prefix + "down_proj.weight"].shape[1]
        plain = LlamaMLP(64, m, act=nn.GELU(), bias=True)
        plain.load_state_dict({k[len(prefix):]: torch.from_numpy(v) for k, v in model.items()
                               if k.startswith(prefix)})
        mod = ft.from_hf_mlp(plain)
        self.assertIn("b_gate", mod.source_names)
        y, dx = self.run_block(mod, torch.from_numpy(io["x"]), torch.from_numpy(io["dy"]))
        self.close("llama_bias y", y, io["y"])
        self.close("llama_bias dx", dx, io["dx"])
        for src in mod.source_names.values():
            self.close("llama_bias grad." + src, dict(plain.named_parameters())[src].grad,
                       io["grad." + src])


class TestFromHF(Checks):
    """from_hf(model_dir, layer): the library's readers and architecture maps, every fixture."""

    def test_every_fixture(self):
        for group, name, d in ffntest.fixture_dirs():
            with self.subTest(fixture="%s/%s" % (group, name)):
                io = ffntest.read_safetensors(os.path.join(d, "io.safetensors"))
                layer = int(io["__metadata__"].get("layer", 1))
                mod = ft.from_hf(d, layer)
                x, dy = torch.from_numpy(io["x"]), torch.from_numpy(io["dy"])
                y, dx = self.run_block(mod, x, dy)
                self.close("%s y" % name, y, io["y"])
                self.close("%s dx" % name, dx, io["dx"])
                for pname, src in mod.source_names.items():
                    self.close("%s grad.%s" % (name, src), getattr(mod, pname).grad,
                               io["grad." + src])

    def test_zero_copy_frozen(self):
        d = os.path.join(ffntest.DATA, "hf", "phi3")
        io = ffntest.read_safetensors(os.path.join(d, "io.safetensors"))
        mod = ft.from_hf(d, 1, copy=False)
        self.assertFalse(any(p.requires_grad for p in mod.parameters()))
        self.assertEqual(mod.block_info(7)["cache_bytes"], 0)
        x = torch.from_numpy(io["x"]).requires_grad_()
        y = mod(x)
        y.backward(torch.from_numpy(io["dy"]))
        self.close("phi3 mapped y", y, io["y"])
        self.close("phi3 mapped dx", x.grad, io["dx"])
        with torch.no_grad():
            self.close("phi3 mapped inference", mod(torch.from_numpy(io["x"])), io["y"])

    def test_mixture_of_experts(self):
        d = os.path.join(ffntest.DATA, "hf_more", "mixtral")
        mod = ft.from_hf(d, 1, expert=2)
        self.assertEqual(mod.source_names["w_gate"], "w1.weight")
        self.assertEqual(mod.expert_index, 2)
        with self.assertRaises(ffn.InvalidArgumentError):
            ft.from_hf(d, 1, expert=99)


class TestModuleBehaviour(Checks):
    def setUp(self):
        torch.manual_seed(ffntest.SEED)
        self.plain = LlamaMLP(32, 48)
        self.x = torch.randn(5, 32)
        self.dy = torch.randn(5, 32)

    def reference(self, x):
        self.plain.zero_grad()
        xr = x.detach().clone().requires_grad_()
        yr = self.plain(xr)
        yr.backward(self.dy.expand_as(yr) if yr.shape == self.dy.shape else torch.ones_like(yr))
        return yr.detach(), xr.grad, {n: p.grad.clone() for n, p in self.plain.named_parameters()}

    def test_pending_forwards_each_hold_a_block(self):
        mod = ft.from_hf_mlp(self.plain)
        x1, x2 = self.x, torch.randn(5, 32)
        a, b = x1.clone().requires_grad_(), x2.clone().requires_grad_()
        ya, yb = mod(a), mod(b)
        with torch.no_grad():
            mod(torch.randn(3, 32))  # an inference call in between
        yb.backward(self.dy)
        ya.backward(self.dy)
        _, ra, _ = self.reference(x1)
        _, rb, _ = self.reference(x2)
        self.close("first forward's dx", a.grad, ra.numpy())
        self.close("second forward's dx", b.grad, rb.numpy())

    def test_optimizer_step_is_seen(self):
        mod = ft.from_hf_mlp(self.plain)
        opt = torch.optim.SGD(mod.parameters(), lr=0.5)
        mod(self.x).square().sum().backward()
        opt.step()  # in place on the shared f32 weights
        with torch.no_grad():
            self.close("after a step", mod(self.x), self.plain(self.x).numpy())

    def close_bf16(self, what, mod, plain16, x):
        # The block multiplies in bf16 (x rounded to bf16, f32 accumulation, h rounded to bf16
        # for the down projection): the reference is torch's f32 MLP on the same bf16-rounded x
        # and weights, within bf16's relative rounding (2^-8) times a few.
        ref = copy.deepcopy(plain16).float()(x.bfloat16().float())
        torch.testing.assert_close(mod(x), ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item(),
                                   msg=what)

    def test_bf16_weights_cache_follows_updates(self):
        plain16 = LlamaMLP(32, 48).bfloat16()
        mod = ft.from_hf_mlp(plain16)
        self.assertEqual(mod.block_info(5)["cache_bytes"], 0)  # bf16 used where it lies
        x = self.x
        with torch.no_grad():
            self.close_bf16("bf16 weights", mod, plain16, x)
            plain16.up_proj.weight.mul_(2)  # in place: seen by the next call (no copy)
            self.close_bf16("after an in-place update", mod, plain16, x)
        y = mod(x.bfloat16().requires_grad_())
        self.assertEqual(y.dtype, torch.bfloat16)
        y.float().sum().backward()
        self.assertEqual(plain16.gate_proj.weight.grad.dtype, torch.bfloat16)

    def test_pack_weights_follows_updates(self):
        # opts.pack_weights: the library keeps a packed copy of each weight; the module keys its
        # blocks on the weights' versions, so an in-place update is seen (repacked) at the next
        # call. 16 tokens: the forward's GEMMs run on oneDNN (the packed path); bf16 packs always.
        plain16 = LlamaMLP(32, 48).bfloat16()
        mod = ft.from_hf_mlp(plain16, pack_weights=True)
        x = torch.randn(16, 32)
        with torch.no_grad():
            self.close_bf16("packed bf16 weights", mod, plain16, x)
            self.assertGreaterEqual(mod.block_info(16)["cache_bytes"], 3 * 32 * 48 * 2)
            plain16.up_proj.weight.mul_(2)
            self.close_bf16("after an in-place update", mod, plain16, x)
            plain16.down_proj.weight.neg_()
            self.close_bf16("after a second update", mod, plain16, x)

    def test_strided_inputs(self):
        mod = ft.from_hf_mlp(self.plain)
        big = torch.randn(5, 50)
        x = big[:, 7:39]  # row stride 50: passed as it is
        with torch.no_grad():
            self.close("strided x", mod(x), self.plain(x).numpy())
            xt = torch.randn(32, 5).t()  # transposed: copied
            self.close("transposed x", mod(xt), self.plain(xt).numpy())
            x3 = torch.randn(2, 3, 32)
            self.close("3-D x", mod(x3), self.plain(x3).numpy())

    def test_plain_ffn_and_create(self):
        torch.manual_seed(1)
        m = ft.FFN.create(16, 40, act="gelu_erf", bias=True)
        x = torch.randn(4, 16, requires_grad=True)
        y = m(x)
        ref = F.linear(F.gelu(F.linear(x, m.w_up, m.b_up)), m.w_down, m.b_down)
        torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-6)
        g = ft.GatedFFN.create(16, 40, layout="fused", orient="in_out", bias=True)
        self.assertEqual(tuple(g.w_gate_up.shape), (16, 80))
        y = g(x)
        gate, up = (x @ g.w_gate_up + g.b_gate_up).chunk(2, dim=-1)
        ref = (F.silu(gate) * up) @ g.w_down + g.b_down
        torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-6)

    def test_copy_and_save(self):
        mod = ft.from_hf_mlp(self.plain, ctx=ffn.Context(threads=1, accuracy="high"))
        with torch.no_grad():
            y = mod(self.x)
            twin = copy.deepcopy(mod)
            self.assertEqual((twin.ctx.threads, twin.ctx.accuracy), (1, "high"))
            twin.w_up.mul_(3)  # the copy's blocks read the copy's weights, not the original's
            torch.testing.assert_close(mod(self.x), y, rtol=0, atol=0)
            self.assertGreater(float((twin(self.x) - y).abs().max()), 1e-3)
            buf = io.BytesIO()
            torch.save(mod, buf)
            buf.seek(0)
            # A whole module, not a state dict: weights_only=False (the default before torch 2.6).
            torch.testing.assert_close(torch.load(buf, weights_only=False)(self.x), y, rtol=0,
                                       atol=0)

    def test_errors_with_library_messages(self):
        mod = ft.from_hf_mlp(self.plain)
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            mod(torch.randn(5, 31))
        self.assertIn("ffn_block_forward: x.cols=31, the block has d_model=32", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ft.GatedFFN(gate_up=torch.randn(343, 64), down=torch.randn(64, 171))
        self.assertIn("gate_up has 343 rows; a fused gate/up needs an even count",
                      str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ft.GatedFFN(gate=torch.randn(48, 32), up=torch.randn(47, 32),
                        down=torch.randn(32, 48))
        self.assertIn("up has shape [47, 32]; the spec needs [48, 32]", str(cm.exception))
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            ft.GatedFFN(gate=torch.randn(48, 32).double(), up=torch.randn(48, 32),
                        down=torch.randn(32, 48))
        self.assertIn("float64", str(cm.exception))
        x = self.x.clone().requires_grad_()
        y = mod(x)
        y.sum().backward(retain_graph=True)
        with self.assertRaises(ffn.InvalidArgumentError) as cm:
            y.sum().backward()
        self.assertIn("backward called twice", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
