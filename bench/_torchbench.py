"""_torchbench.py — what the PyTorch counterparts of ffn's benchmarks share: the op names, the
eager activations as PyTorch / Hugging Face code runs them (torch_act.py on the CPU,
torch_cuda.py on the GPU), and the FFN block module and its FLOP count (torch_block.py,
torch_cuda_block.py), so that the CPU and GPU rows time the same PyTorch code.

Imports torch when it is there (the table-only modes of the GPU scripts run without it); a
script that must set thread variables first (torch_block.py) imports this module after them.
"""
import json
import os

try:
    import torch
    import torch.nn.functional as F
    aten = torch.ops.aten
except ImportError:
    torch = F = aten = None

ACTS = ["gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "identity", "quick_gelu"]
GLU_NAMES = {"gelu_tanh": "geglu_tanh", "gelu_erf": "geglu_erf", "silu": "swiglu",
             "relu": "reglu", "sigmoid": "glu", "identity": "bilinear",
             "quick_gelu": "quick_geglu"}
QUICK_GELU_K = 1.702    # quick_gelu(x) = x * sigmoid(1.702 x)  (CLIP)
WIDE = 20.0             # worst-case input set: uniform on [-20, 20]


# --- the activations, eager -------------------------------------------------------------------
def act_forward(act, x, y, tmp):
    """y = act(x), as eager PyTorch computes it (quick_gelu: three kernels, as HF writes it)."""
    if act == "gelu_tanh":
        aten.gelu.out(x, approximate="tanh", out=y)        # F.gelu(x, approximate='tanh')
    elif act == "gelu_erf":
        aten.gelu.out(x, out=y)                            # F.gelu(x)
    elif act == "silu":
        aten.silu.out(x, out=y)                            # F.silu(x)
    elif act == "relu":
        # F.relu(x) is ATen's clamp_min(x, 0); relu.out (1.13) allocates a temporary and copies
        # (32K page faults per 128 MiB call), so the clamp_min out= kernel is timed.
        torch.clamp_min(x, 0, out=y)
    elif act == "sigmoid":
        torch.sigmoid(x, out=y)
    elif act == "identity":
        y.copy_(x)
    elif act == "quick_gelu":                              # x * torch.sigmoid(1.702 * x)
        torch.mul(x, QUICK_GELU_K, out=tmp)
        torch.sigmoid(tmp, out=tmp)
        torch.mul(x, tmp, out=y)
    else:
        raise ValueError(act)


def act_saved(act, x, keep=lambda t: t):
    """What autograd saves in the forward for the backward of act (besides x): the sigmoid output
    for sigmoid, s = sigmoid(1.702 x) for quick_gelu; passed through keep (a copy into the
    caller's own buffers). Computed outside the timing."""
    if act == "sigmoid":
        return keep(torch.sigmoid(x))
    if act == "quick_gelu":
        return keep(torch.sigmoid(x * QUICK_GELU_K))
    return None


def act_backward(act, dx, x, dy, saved, tmp):
    """dx = dy * act'(x) with the ATen backward ops autograd calls."""
    if act in ("gelu_tanh", "gelu_erf"):
        aten.gelu_backward.grad_input(dy, x, approximate="tanh" if act == "gelu_tanh" else "none",
                                      grad_input=dx)
    elif act == "silu":
        aten.silu_backward.grad_input(dy, x, grad_input=dx)
    elif act == "relu":
        aten.threshold_backward.grad_input(dy, x, 0, grad_input=dx)
    elif act == "sigmoid":
        aten.sigmoid_backward.grad_input(dy, saved, grad_input=dx)   # saved = sigmoid(x)
    elif act == "identity":
        dx.copy_(dy)
    elif act == "quick_gelu":
        # y = x*s, s = sigmoid(1.702x): dx = dy*s + 1.702 * sigmoid_backward(dy*x, s)
        torch.mul(dy, x, out=tmp)
        aten.sigmoid_backward.grad_input(tmp, saved, grad_input=tmp)
        torch.mul(dy, saved, out=dx)
        torch.add(dx, tmp, alpha=QUICK_GELU_K, out=dx)
    else:
        raise ValueError(act)


def glu_forward(act, h, g, u, tmp, tmp2):
    """h = act(g) * u, as frameworks write it: act into a temporary, then a multiply."""
    if act == "identity":
        torch.mul(g, u, out=h)                             # bilinear: one kernel
        return
    act_forward(act, g, tmp, tmp2)
    torch.mul(tmp, u, out=h)


def glu_backward(act, dg, du, g, u, dh, saved, tmp, tmp2):
    """Autograd of a = act(g); h = a*u with a (and act's own saved tensor) kept from the forward:
    du = dh*a; da = dh*u; dg = act_backward(da, g)."""
    a, act_sv = saved
    torch.mul(dh, a, out=du)
    if act == "identity":                                  # bilinear: dg = dh*u
        torch.mul(dh, u, out=dg)
        return
    torch.mul(dh, u, out=tmp)
    act_backward(act, dg, g, tmp, act_sv, tmp2)


# --- the FFN block ------------------------------------------------------------------------------
def make_block(d, m, gated, bias, fused=False):
    """The block from nn.Linear layers: down(silu(gate(x)) * up(x)) (gated) or
    down(gelu_tanh(up(x))), in f32 on the CPU (the caller moves it). fused (gated): one
    gate_up Linear(d, 2m) whose output is split in halves, as Hugging Face's Phi3MLP."""
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gated = gated
            if fused:
                self.gate_up = torch.nn.Linear(d, 2 * m, bias=bias)
            else:
                self.up = torch.nn.Linear(d, m, bias=bias)
                self.gate = torch.nn.Linear(d, m, bias=bias) if gated else None
            self.down = torch.nn.Linear(m, d, bias=bias)

        def forward(self, x):
            if fused:
                g, u = self.gate_up(x).chunk(2, dim=-1)
                return self.down(F.silu(g) * u)
            if gated:
                return self.down(F.silu(self.gate(x)) * self.up(x))
            return self.down(F.gelu(self.up(x), approximate="tanh"))

    return Block()


def flops(t, d, m, gated, bias, bwd):
    """GEMM FLOPs (+ bias adds), as ffn_block_cost counts them."""
    k = 3 if gated else 2
    gemm = 2.0 * t * d * m * k
    nb = ((2 * m if gated else m) + d) if bias else 0
    fwd = gemm + t * nb
    return fwd + (2.0 * gemm + t * nb if bwd else 0.0)


# --- rows ---------------------------------------------------------------------------------------
def json_rows(path, missing_ok=False):
    """The JSON objects of a file of JSON lines (the lines that start with '{'). missing_ok: a
    missing file (a step that did not run), or no path, has none."""
    if missing_ok and (not path or not os.path.exists(path)):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip().startswith("{")]
