#!/usr/bin/env python3
"""torch_ulp.py — the accuracy of PyTorch's f32 activation forwards and backwards on a CUDA
device, over every f32 input, in the ulp metric of docs/numerics.md (simplified; see below).

For each op, all 2^32 bit patterns are evaluated in chunks of 2^28 on the device: PyTorch's f32
result (eager, as a model calls it) against the same definition evaluated in double from the f32
input: err = |y - ref| / ulp(ref), ulp(v) the f32 spacing at |v| (2^-149 below
the normal range). Non-finite inputs are skipped, and inputs whose reference is not finite. The
references are ffn's definitions (docs/numerics.md) written in the form that keeps double
accurate in the tails (tanh-GeLU as x·σ(2u), not 0.5·x·(1 + tanh u), which cancels for x < 0):
double leaves ~2^-29 f32 ulp of doubt, which matters only for counts of errors near 0.5 ulp, not
for the maxima this reports. ffn's own bounds are measured against MPFR by `ffn ulp`.

The backward is act'(x), dx for dy = 1, through the ATen op autograd calls (gelu_backward,
silu_backward, and sigmoid_backward from the saved output σ(x), as autograd keeps it), against
the derivative in double, written without cancellation in the tails (1 - tanh² as 4σ(1 - σ),
σ(1 - σ) as σ(x)σ(-x)).

  python3 bench/torch_ulp.py                 # gelu_tanh gelu_erf silu sigmoid, both directions
  python3 bench/torch_ulp.py --op silu --dir fwd --json-out torch-ulp.jsonl
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

aten = torch.ops.aten

K = math.sqrt(2.0 / math.pi)
OPS = {  # op: (PyTorch's f32 forward, the definition in double, ffn's forward bound in ulps)
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda d: d * torch.sigmoid(2.0 * K * (d + 0.044715 * d * d * d)), 4),
    "gelu_erf": (lambda x: F.gelu(x),
                 lambda d: 0.5 * d * torch.special.erfc(-d / math.sqrt(2.0)), 4),
    "silu": (lambda x: F.silu(x), lambda d: d * torch.sigmoid(d), 2),
    "sigmoid": (lambda x: torch.sigmoid(x), lambda d: torch.sigmoid(d), 2),
}


def _dgelu_tanh(d):
    # σ(2u) + 2x·u'·σ(2u)(1 - σ(2u)), u = K(x + 0.044715x³): 1 + tanh u = 2σ(2u), 1 - tanh² u =
    # 4σ(2u)σ(-2u).
    u = K * (d + 0.044715 * d * d * d)
    s, sm = torch.sigmoid(2.0 * u), torch.sigmoid(-2.0 * u)
    return s + 2.0 * d * K * (1.0 + 3.0 * 0.044715 * d * d) * s * sm


BWD = {  # op: (PyTorch's f32 act'(x) through its ATen backward, the derivative in double, bound)
    "gelu_tanh": (lambda x: aten.gelu_backward(torch.ones_like(x), x, approximate="tanh"),
                  _dgelu_tanh, 8),
    "gelu_erf": (lambda x: aten.gelu_backward(torch.ones_like(x), x),
                 lambda d: 0.5 * torch.special.erfc(-d / math.sqrt(2.0))
                 + d * torch.exp(-0.5 * d * d) / math.sqrt(2.0 * math.pi), 8),
    "silu": (lambda x: aten.silu_backward(torch.ones_like(x), x),
             lambda d: torch.sigmoid(d) * (1.0 + d * torch.sigmoid(-d)), 8),
    "sigmoid": (lambda x: aten.sigmoid_backward(torch.ones_like(x), torch.sigmoid(x)),
                lambda d: torch.sigmoid(d) * torch.sigmoid(-d), 8),
}
CHUNK = 1 << 28


def sweep(name, dev, bwd=False):
    f, ref, bound = (BWD if bwd else OPS)[name]
    worst, worst_x, above, n = 0.0, 0.0, 0, 0
    for c in range((1 << 32) // CHUNK):
        b = torch.arange(c * CHUNK, (c + 1) * CHUNK, dtype=torch.int64, device=dev)
        x = torch.where(b >= 1 << 31, b - (1 << 32), b).to(torch.int32).view(torch.float32)
        y = f(x).double()
        r = ref(x.double())
        ok = torch.isfinite(x) & torch.isfinite(r)
        _, e = torch.frexp(r.abs())
        ulp = torch.ldexp(torch.ones_like(r), torch.clamp(e.to(torch.int64) - 24, min=-149))
        err = torch.nan_to_num((y - r).abs() / ulp, nan=math.inf, posinf=math.inf)
        err = torch.where(ok, err, torch.zeros_like(err))
        i = int(torch.argmax(err))
        if float(err[i]) > worst:
            worst, worst_x = float(err[i]), float(x[i])
        above += int((err > bound).sum())
        n += int(ok.sum())
    return {"op": name, "dir": "bwd" if bwd else "fwd", "dtype": "f32", "impl": "torch eager",
            "torch": torch.__version__, "device": torch.cuda.get_device_name(dev),
            "inputs": n, "max_ulp": worst, "x_at_max": worst_x,
            "ffn_bound": bound, "above_bound": above}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", action="append", choices=sorted(OPS), help="op (repeatable)")
    ap.add_argument("--dir", default="all", choices=["fwd", "bwd", "all"])
    ap.add_argument("--json-out", help="append JSON lines here")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_ulp.py: no CUDA device", file=sys.stderr)
        return 2
    t0 = time.time()
    dirs = ["fwd", "bwd"] if a.dir == "all" else [a.dir]
    for name, d in [(n, d) for d in dirs for n in (a.op or list(OPS))]:
        row = sweep(name, "cuda", d == "bwd")
        print(f"{row['impl']} {row['torch']} f32 {name:9s} {d}: max {row['max_ulp']:.4g} ulp at "
              f"x = {row['x_at_max']:.9g}; {row['above_bound']} of {row['inputs']} finite inputs "
              f"above ffn's bound ({row['ffn_bound']} ulp)", flush=True)
        if a.json_out:
            with open(a.json_out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    print(f"({time.time() - t0:.1f} s on {torch.cuda.get_device_name(0)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
