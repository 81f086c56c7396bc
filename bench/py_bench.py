#!/usr/bin/env python3
# py_bench.py — ffn from Python against torch's own ops, on the same tensors and thread counts:
#
#   1. call overhead at small n: ffn.glu (SwiGLU combine) through the binding (on torch tensors,
#      and with out= on NumPy arrays sharing their memory), against the bare ctypes call of
#      ffn_glu_forward with views made once, and against torch's eager F.silu(gate) * up;
#   2. ffn.glu against torch's eager combine at sizes in and out of cache, f32 and bf16
#      (GB/s counts 2 reads + 1 write);
#   3. ffn.torch.GatedFFN (ffn_block_*) against a plain torch LLaMA MLP (nn.Linear x 3, silu,
#      mul) sharing the same weights: inference forward, and forward + backward (all gradients).
#   4. CUDA tensors, where a GPU and a libffn with its CUDA backend are present (else one line
#      saying why not): the per-call cost at small n (calls queued back to back on torch's
#      current stream, host-bound: bare ctypes call, ffn.glu(out=), ffn.glu allocating, torch's
#      two kernels), and ffn.glu against torch's eager F.silu(gate) * up at large n (GB/s from
#      CUDA events; 1.5M elements stay in an H200's 60 MB L2 across calls, the others do not).
#
# Each number is the median over timed reps (each rep >= --min-ms, after warm-up). ffn and
# torch run in alternating reps, and a ratio is the median over reps of their paired times.
# Run on a quiet machine: on a shared host the absolute numbers move by 2x and only same-run
# ratios mean anything.
#
#   FFN_LIBRARY=build/libffn.so PYTHONPATH=python /usr/bin/python3 bench/py_bench.py
#   ... --threads 1,2 --sizes 16384,1572864,33554432 --tokens 256 --d 1024 --m 2752 --json out.jsonl
#   ... --only cuda [--cuda-sizes 1572864,33554432,117440512]      (the CUDA rows alone)
import argparse
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import ffn  # noqa: E402
import ffn.torch as ft  # noqa: E402
from ffn import _lib  # noqa: E402
from ffn._context import LIB  # noqa: E402


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _batch(fn, min_ms):
    fn()
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    return max(1, int(min_ms * 1e-3 / one))


def _rep(fn, batch):
    t0 = time.perf_counter()
    for _ in range(batch):
        fn()
    return (time.perf_counter() - t0) / batch


def timeit(fn, min_ms, reps):
    """Median and min seconds per call: calls batched so a rep lasts >= min_ms."""
    batch = _batch(fn, min_ms)
    times = [_rep(fn, batch) for _ in range(reps)]
    return statistics.median(times), min(times)


def paired(fa, fb, min_ms, reps):
    """fa and fb timed in alternating reps (a host's drift hits both alike): medians of each,
    and the median over reps of time(fb) / time(fa)."""
    ba, bb = _batch(fa, min_ms), _batch(fb, min_ms)
    ta, tb = [], []
    for _ in range(reps):
        ta.append(_rep(fa, ba))
        tb.append(_rep(fb, bb))
    return (statistics.median(ta), statistics.median(tb),
            statistics.median(b / a for a, b in zip(ta, tb)))


def emit(rows, row, out):
    rows.append(row)
    if out:
        out.write(json.dumps(row) + "\n")


def bench_overhead(args, out, rows):
    print("\n## Call overhead at small n (SwiGLU combine, f32, 1 thread)\n")
    print("| n | bare ctypes call | ffn.glu(out=h) | ffn.glu (allocates h) | ffn.glu(out=h) "
          "NumPy | torch F.silu(g)*u | ffn.glu(out=h) - bare | ffn.glu(out=h) / torch |")
    print("|---|---|---|---|---|---|---|---|")
    ctx = ffn.Context(threads=1)
    torch.set_num_threads(1)
    for n in args.small:
        g = torch.randn(n)
        u = torch.randn(n)
        h = torch.empty(n)
        vg = _lib.Tensor(g.data_ptr(), _lib.DTYPE_F32, 1, n, n)
        vu = _lib.Tensor(u.data_ptr(), _lib.DTYPE_F32, 1, n, n)
        vh = _lib.Tensor(h.data_ptr(), _lib.DTYPE_F32, 1, n, n)
        f, hd, silu = LIB.ffn_glu_forward, ctx.handle, _lib.ACT["silu"]
        bare, py, _ = paired(lambda: f(hd, silu, vh, vg, vu),
                             lambda: ffn.glu(g, u, "silu", out=h, ctx=ctx), args.min_ms, args.reps)
        alloc = timeit(lambda: ffn.glu(g, u, "silu", ctx=ctx), args.min_ms, args.reps)[0]
        gn, un, hn = g.numpy(), u.numpy(), h.numpy()
        npy = timeit(lambda: ffn.glu(gn, un, "silu", out=hn, ctx=ctx), args.min_ms, args.reps)[0]
        tt, _, ratio = paired(lambda: F.silu(g) * u,
                              lambda: ffn.glu(g, u, "silu", out=h, ctx=ctx), args.min_ms,
                              args.reps)  # ratio: time(ffn.glu) / time(torch)
        print("| %d | %.2f us | %.2f us | %.2f us | %.2f us | %.2f us | %.2f us | %.2f |" % (
            n, bare * 1e6, py * 1e6, alloc * 1e6, npy * 1e6, tt * 1e6, (py - bare) * 1e6, ratio))
        emit(rows, {"bench": "overhead", "n": n, "bare_s": bare, "ffn_out_s": py,
                    "ffn_alloc_s": alloc, "ffn_out_numpy_s": npy, "torch_s": tt}, out)


def bench_glu(args, out, rows):
    print("\n## ffn.glu against torch's eager F.silu(gate) * up (same tensors, same threads)\n")
    print("| dtype | n | threads | ffn GB/s | torch GB/s | ffn / torch (speed) |")
    print("|---|---|---|---|---|---|")
    for dt in args.dtypes:
        tdt = {"f32": torch.float32, "bf16": torch.bfloat16}[dt]
        for n in args.sizes:
            g = torch.randn(n).to(tdt)
            u = torch.randn(n).to(tdt)
            h = torch.empty(n, dtype=tdt)
            nbytes = 3 * n * g.element_size()
            for t in args.threads:
                ctx = ffn.Context(threads=t)
                torch.set_num_threads(t)
                tf, tt, ratio = paired(lambda: ffn.glu(g, u, "silu", out=h, ctx=ctx),
                                       lambda: F.silu(g) * u, args.min_ms, args.reps)
                print("| %s | %d | %d | %.1f | %.1f | %.2fx |" % (
                    dt, n, t, nbytes / tf / 1e9, nbytes / tt / 1e9, ratio))
                emit(rows, {"bench": "glu", "dtype": dt, "n": n, "threads": t, "ffn_s": tf,
                            "torch_s": tt, "speed_ratio": ratio, "bytes": nbytes}, out)


class LlamaMLP(nn.Module):
    def __init__(self, d, m):
        super().__init__()
        self.gate_proj = nn.Linear(d, m, bias=False)
        self.up_proj = nn.Linear(d, m, bias=False)
        self.down_proj = nn.Linear(m, d, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


def bench_block(args, out, rows):
    T, d, m = args.tokens, args.d, args.m
    print("\n## ffn.torch.GatedFFN against torch's LLaMA MLP (f32, %d tokens, d %d, m %d, "
          "same weights)\n" % (T, d, m))
    print("| threads | pass | ffn ms | torch ms | ffn GFLOP/s | torch GFLOP/s | "
          "ffn / torch (speed) |")
    print("|---|---|---|---|---|---|---|")
    torch.manual_seed(0)
    ref = LlamaMLP(d, m)
    mod = ft.from_hf_mlp(ref)  # shares the Parameters: no copy
    x = torch.randn(T, d)
    flops_fwd = 2.0 * T * d * m * 3
    for t in args.threads:
        torch.set_num_threads(t)
        mod.ctx = ffn.Context(threads=t)

        def fwd(m_):
            with torch.no_grad():
                m_(x)

        xg = x.clone().requires_grad_()

        def train(m_):
            m_.zero_grad(set_to_none=True)
            xg.grad = None
            m_(xg).sum().backward()

        for name, fn, fl in (("forward", fwd, flops_fwd), ("forward+backward", train,
                                                            3 * flops_fwd)):
            tf, tt, ratio = paired(lambda: fn(mod), lambda: fn(ref), args.min_ms,
                                   args.block_reps)
            print("| %d | %s | %.2f | %.2f | %.1f | %.1f | %.2fx |" % (
                t, name, tf * 1e3, tt * 1e3, fl / tf / 1e9, fl / tt / 1e9, ratio))
            emit(rows, {"bench": "block", "pass": name, "threads": t, "tokens": T, "d": d,
                        "m": m, "ffn_s": tf, "torch_s": tt, "speed_ratio": ratio,
                        "flops": fl}, out)


def cuda_reason():
    """None when the CUDA rows can run, else why not."""
    if not torch.cuda.is_available():
        return "torch %s sees no CUDA device" % torch.__version__
    ok, why = ffn.backend_available("cuda")
    return None if ok else "libffn cannot run CUDA: " + why


def _cuda_rep(fn, batch):
    """Wall seconds per call of `batch` calls queued back to back, the stream drained before and
    after (host-bound calls: the host's cost; GPU-bound: the GPU's), and GPU seconds per call
    from CUDA events around the batch."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    e0.record()
    for _ in range(batch):
        fn()
    e1.record()
    e1.synchronize()
    return (time.perf_counter() - t0) / batch, e0.elapsed_time(e1) * 1e-3 / batch


def cuda_paired(fa, fb, min_ms, reps):
    """As paired(), on the GPU: per fn the median wall and GPU seconds per call, and the median
    over reps of wall(fb) / wall(fa)."""
    batches = []
    for f in (fa, fb):
        f()
        w, _ = _cuda_rep(f, 3)
        batches.append(max(3, min(20000, int(min_ms * 1e-3 / max(w, 1e-7)))))
    ra, rb = [], []
    for _ in range(reps):
        ra.append(_cuda_rep(fa, batches[0]))
        rb.append(_cuda_rep(fb, batches[1]))
    med = lambda rs, i: statistics.median(r[i] for r in rs)
    return (med(ra, 0), med(ra, 1), med(rb, 0), med(rb, 1),
            statistics.median(b[0] / a[0] for a, b in zip(ra, rb)))


def bench_cuda(args, out, rows):
    why = cuda_reason()
    if why:
        print("\n## CUDA: no rows: %s" % why)
        return
    dev = torch.device("cuda", torch.cuda.current_device())
    print("\n## CUDA tensors on %s (torch %s, CUDA %s): ffn.glu on torch's current stream\n" % (
        torch.cuda.get_device_name(dev), torch.__version__, torch.version.cuda))
    print("Per call, calls queued back to back (wall time over the batch, the stream drained "
          "before and after):\n")
    print("| n | bare ctypes call | ffn.glu(out=h) | ffn.glu (allocates h) | torch F.silu(g)*u | "
          "ffn.glu(out=h) - bare | ffn.glu(out=h) / torch |")
    print("|---|---|---|---|---|---|---|")
    ctx = ffn.get_context(dev)
    for n in args.small:
        g = torch.randn(n, device=dev)
        u = torch.randn(n, device=dev)
        h = torch.empty(n, device=dev)
        ffn.glu(g, u, "silu", out=h)  # the context's stream set to torch's current one
        vg = _lib.Tensor(g.data_ptr(), _lib.DTYPE_F32, 1, n, n)
        vu = _lib.Tensor(u.data_ptr(), _lib.DTYPE_F32, 1, n, n)
        vh = _lib.Tensor(h.data_ptr(), _lib.DTYPE_F32, 1, n, n)
        f, hd, silu = LIB.ffn_glu_forward, ctx.handle, _lib.ACT["silu"]
        bare, _, py, _, _ = cuda_paired(lambda: f(hd, silu, vh, vg, vu),
                                        lambda: ffn.glu(g, u, "silu", out=h), args.min_ms,
                                        args.reps)
        alloc, _, tt, _, _ = cuda_paired(lambda: ffn.glu(g, u, "silu"), lambda: F.silu(g) * u,
                                         args.min_ms, args.reps)
        print("| %d | %.2f us | %.2f us | %.2f us | %.2f us | %.2f us | %.2f |" % (
            n, bare * 1e6, py * 1e6, alloc * 1e6, tt * 1e6, (py - bare) * 1e6, py / tt))
        emit(rows, {"bench": "cuda_overhead", "n": n, "bare_s": bare, "ffn_out_s": py,
                    "ffn_alloc_s": alloc, "torch_s": tt, "device": torch.cuda.get_device_name(dev)},
             out)
    print("\nffn.glu(out=h) against torch's eager F.silu(gate) * up (GB/s: 2 reads + 1 write, "
          "from CUDA events):\n")
    print("| dtype | n | ffn GB/s | torch GB/s | ffn / torch (speed) |")
    print("|---|---|---|---|---|")
    for dt in args.dtypes:
        tdt = {"f32": torch.float32, "bf16": torch.bfloat16}[dt]
        for n in args.cuda_sizes:
            g = torch.randn(n, device=dev).to(tdt)
            u = torch.randn(n, device=dev).to(tdt)
            h = torch.empty(n, dtype=tdt, device=dev)
            nbytes = 3 * n * g.element_size()
            _, fg, _, tg, _ = cuda_paired(lambda: ffn.glu(g, u, "silu", out=h),
                                          lambda: F.silu(g) * u, args.min_ms, args.reps)
            print("| %s | %d | %.0f | %.0f | %.2fx |" % (dt, n, nbytes / fg / 1e9,
                                                       nbytes / tg / 1e9, tg / fg))
            emit(rows, {"bench": "cuda_glu", "dtype": dt, "n": n, "ffn_gpu_s": fg,
                        "torch_gpu_s": tg, "speed_ratio": tg / fg, "bytes": nbytes,
                        "device": torch.cuda.get_device_name(dev)}, out)
            del g, u, h


def ints(s):
    return [int(v) for v in s.split(",") if v]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--threads", type=ints, default=[1, 2])
    p.add_argument("--sizes", type=ints, default=[16384, 1572864, 33554432])
    p.add_argument("--small", type=ints, default=[1, 16, 256, 4096])
    p.add_argument("--dtypes", type=lambda s: s.split(","), default=["f32", "bf16"])
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--d", type=int, default=1024)
    p.add_argument("--m", type=int, default=2752)
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--block-reps", type=int, default=7)
    p.add_argument("--min-ms", type=float, default=2.0)
    p.add_argument("--cuda-sizes", type=ints, default=[1572864, 33554432, 117440512])
    p.add_argument("--only", choices=["overhead", "glu", "block", "cuda"], action="append")
    p.add_argument("--json", help="also write one JSON line per measurement here")
    args = p.parse_args()
    info = ffn.info()
    print("# py_bench: %s; ffn %s (%s, isa %s); torch %s; numpy %s; Python %s" % (
        cpu_name(), info["library"], info["found_via"], info["isa"], torch.__version__,
        np.__version__, platform.python_version()))
    out = open(args.json, "w") if args.json else None
    rows = []
    only = args.only or ["overhead", "glu", "block", "cuda"]
    if "overhead" in only:
        bench_overhead(args, out, rows)
    if "glu" in only:
        bench_glu(args, out, rows)
    if "block" in only:
        bench_block(args, out, rows)
    if "cuda" in only:
        bench_cuda(args, out, rows)
    if out:
        out.close()


if __name__ == "__main__":
    main()
