#!/usr/bin/python3
"""torch_block.py - the FFN blocks of `ffn bench block`, in PyTorch on the CPU, for comparison.

Same rows as ffn: gpt2-small (768 -> 3072, GeLU-tanh, biases) and llama-like (2048 -> 5632,
SwiGLU, no biases) at 1, 16, 256 and 4096 tokens, in f32 and in bf16 (module and inputs
.to(torch.bfloat16): PyTorch runs bf16 linear layers through oneDNN, f32 ones through Debian's
OpenBLAS), same thread counts, built from nn.Linear layers (F.gelu(approximate='tanh') /
F.silu(g) * u), forward under no_grad and forward + autograd backward. Rows at <= 16 tokens
start from cold caches, as in ffn. Prints the same JSON-line fields as `ffn bench block --json`:
shape, tokens, dtype, pass, threads, seconds, gflops, gemm_seconds (the same matrix products
alone, torch.mm, same process), ratio_to_gemm.

usage: /usr/bin/python3 bench/torch_block.py [--threads T] [--tokens N] [--dtype f32|bf16]
                                             [--shape NAME] [--quick] [--reps N]
(Debian's python3-torch: `scripts/deps.sh bench`.)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _one_process_per_thread_count():
    """Debian's torch runs its GEMMs on the system OpenBLAS (BLAS_INFO=generic), whose pool
    is sized from OPENBLAS_NUM_THREADS when the library loads: torch.set_num_threads does not
    reach it, and a "1-thread" run would multiply on every core. So each thread count runs in
    its own process with the variables set before torch is imported."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--threads", type=int, default=0)
    a, rest = ap.parse_known_args()
    if a.threads and os.environ.get("OPENBLAS_NUM_THREADS") == str(a.threads):
        return  # this process is the one for a.threads
    for th in ([a.threads] if a.threads else [1, 2]):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(th), OMP_NUM_THREADS=str(th))
        rc = subprocess.call([sys.executable, __file__, "--threads", str(th)] + rest, env=env)
        if rc:
            sys.exit(rc)
    sys.exit(0)


if __name__ == "__main__" and "-h" not in sys.argv and "--help" not in sys.argv:
    _one_process_per_thread_count()

import torch  # noqa: E402  (after the thread variables are set)

from _torchbench import flops, make_block  # noqa: E402

SHAPES = [
    # name, d, m, gated, bias
    ("gpt2-small", 768, 3072, False, True),
    ("llama-like", 2048, 5632, True, False),
]
TOKENS = [1, 16, 256, 4096]
REP_BUDGET_S = 1.5  # as ffn: stop repeating a row after this much time (at least 3 reps)


def llc_bytes():
    try:
        return os.sysconf("SC_LEVEL3_CACHE_SIZE") or (64 << 20)
    except (ValueError, OSError):
        return 64 << 20


def gemms(blk, x, dy, h, bwd):
    """The block's matrix products alone (torch.mm), as the block issues them."""
    wu, wd = blk.up.weight, blk.down.weight
    torch.mm(x, wu.t())
    if blk.gated:
        torch.mm(x, blk.gate.weight.t())
    torch.mm(h, wd.t())
    if bwd:
        torch.mm(dy.t(), h)          # dW_down
        dh = torch.mm(dy, wd)        # dh
        torch.mm(dh.t(), x)          # dW_up
        dx = torch.mm(dh, wu)        # dx
        if blk.gated:
            torch.mm(dh.t(), x)      # dW_gate
            dx += torch.mm(dh, blk.gate.weight)


def timeit(fn, reps, flush=None):
    fn()  # warm-up
    ts = []
    start = time.perf_counter()
    for _ in range(reps):
        if len(ts) >= 3 and time.perf_counter() - start > REP_BUDGET_S:
            break
        if flush is not None:
            flush.add_(1)  # write over 2x the last-level cache: weights come from memory
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=0, help="one thread count (default: 1 and 2)")
    ap.add_argument("--tokens", type=int, default=0, help="one token count (default: all)")
    ap.add_argument("--dtype", choices=["f32", "bf16"], help="one dtype (default: both)")
    ap.add_argument("--shape", help="one shape (default: both)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--reps", type=int, default=0)
    a = ap.parse_args()
    reps = a.reps or (3 if a.quick else 7)
    torch.manual_seed(42)
    flush_buf = torch.zeros(2 * llc_bytes(), dtype=torch.uint8)
    for name, d, m, gated, bias in SHAPES:
        if a.shape and a.shape != name:
            continue
        for t in ([a.tokens] if a.tokens else TOKENS):
            for dt in ([a.dtype] if a.dtype else ["f32", "bf16"]):
                tdt = torch.bfloat16 if dt == "bf16" else torch.float32
                blk = make_block(d, m, gated, bias).to(tdt)
                x = (torch.rand(t, d) * 2 - 1).to(tdt)
                dy = (torch.rand(t, d) * 2 - 1).to(tdt)
                h = torch.rand(t, m).to(tdt)
                flush = flush_buf if t <= 16 else None
                for th in ([a.threads] if a.threads else [1, 2]):
                    torch.set_num_threads(th)
                    for bwd in (False, True):
                        if bwd:
                            xg = x.clone().requires_grad_(True)

                            def run():
                                blk.zero_grad(set_to_none=False)
                                xg.grad = None
                                blk(xg).backward(dy)
                        else:
                            def run():
                                with torch.no_grad():
                                    blk(x)
                        sec = timeit(run, reps, flush)
                        with torch.no_grad():
                            gsec = timeit(lambda: gemms(blk, x, dy, h, bwd), reps, flush)
                        fl = flops(t, d, m, gated, bias, bwd)
                        print(json.dumps({
                            "shape": name, "tokens": t, "d": d, "m": m,
                            "act": "swiglu" if gated else "gelu_tanh", "gated": gated,
                            "dtype": dt, "pass": "fwdbwd" if bwd else "fwd",
                            "framework": "torch " + torch.__version__,
                            "threads": th, "seconds": round(sec, 7),
                            "gflops": round(fl / sec * 1e-9, 3),
                            "gemm_seconds": round(gsec, 7), "gemm_gflops": round(fl / gsec * 1e-9, 3),
                            "ratio_to_gemm": round(sec / gsec, 4), "reps": reps}), flush=True)


if __name__ == "__main__":
    main()
