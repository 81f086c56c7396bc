#!/usr/bin/python3
"""torch_block.py - the FFN blocks of `ffn bench block`, in PyTorch on the CPU, for comparison.

Same rows as ffn: gpt2-small (768 -> 3072, GeLU-tanh, biases) and llama-like (2048 -> 5632,
SwiGLU, no biases) at 1, 16, 256 and 4096 tokens, in f32 and in bf16 (module and inputs
.to(torch.bfloat16): PyTorch runs bf16 linear layers through oneDNN, f32 ones through Debian's
OpenBLAS), same thread counts, built from nn.Linear layers (F.gelu(approximate='tanh') /
F.silu(g) * u), forward under no_grad and forward + autograd backward. Rows at <= 16 tokens
run over copies of the module spanning 4x the last-level cache, each call on the next (a model's
layers: every call reads its weights from memory), as in ffn. Prints the same JSON-line fields as `ffn bench block --json`:
shape, tokens, dtype, pass, threads, seconds, gflops, gemm_seconds (the same matrix products
alone, torch.mm, same process), ratio_to_gemm.

usage: /usr/bin/python3 bench/torch_block.py [--threads T] [--tokens N] [--dtype f32|bf16]
                                             [--shape NAME] [--quick] [--reps N]
(Debian's python3-torch: `scripts/deps.sh bench`.)
"""
import argparse
import copy
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
    """The last-level cache one core reaches, as ffn bench block reads it: the highest level in
    /sys/devices/system/cpu/cpu0/cache (one instance: an AMD CCX's L3, not the package's sum
    that sysconf gives there), else sysconf's, else 64 MiB."""
    best = (0, 0)
    base = "/sys/devices/system/cpu/cpu0/cache"
    for i in range(16):
        try:
            with open(f"{base}/index{i}/level") as f:
                level = int(f.read())
            with open(f"{base}/index{i}/size") as f:
                v = f.read().strip()
        except (OSError, ValueError):
            continue
        mult = {"K": 1 << 10, "M": 1 << 20}.get(v[-1:], 1)
        digits = v.rstrip("KM")
        if digits.isdigit():
            best = max(best, (level, int(digits) * mult))
    if best[1]:
        return best[1]
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


def copies(weight_bytes):
    """How many copies of a block's weights span 4x the last-level cache (at least 2, and at most
    4 GiB of weights and gradients), as ffn bench block counts them."""
    n = max(2, -(-4 * llc_bytes() // weight_bytes))
    return max(1, min(n, (4 << 30) // (2 * weight_bytes), 256))


class Rotation:
    """The copy each call runs on: the next one, the block's calls and the GEMMs' alike."""

    def __init__(self, n):
        self.n, self.i = n, 0

    def next(self):
        i, self.i = self.i, (self.i + 1) % self.n
        return i


def timeit(fn, reps, rot):
    """Median seconds of fn(copy); every copy is run once first (warm-up: allocations, page
    faults), then each timed call on the next copy."""
    for _ in range(rot.n):
        fn(rot.next())
    ts = []
    start = time.perf_counter()
    for _ in range(reps):
        if len(ts) >= 3 and time.perf_counter() - start > REP_BUDGET_S:
            break
        c = rot.next()
        t0 = time.perf_counter()
        fn(c)
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
    ap.add_argument("--pack", action="store_true",
                    help="ffn bench block's --pack, accepted so that scripts/bench_block.sh passes "
                         "it to both: PyTorch's rows stay eager (its to_mkldnn packing runs "
                         "neither block, and its Linear alone ran slower than eager)")
    a = ap.parse_args()
    reps = a.reps or (3 if a.quick else 7)
    torch.manual_seed(42)
    for name, d, m, gated, bias in SHAPES:
        if a.shape and a.shape != name:
            continue
        for t in ([a.tokens] if a.tokens else TOKENS):
            for dt in ([a.dtype] if a.dtype else ["f32", "bf16"]):
                tdt = torch.bfloat16 if dt == "bf16" else torch.float32
                blk = make_block(d, m, gated, bias).to(tdt)
                wbytes = sum(p.numel() * p.element_size() for p in blk.parameters())
                blks = [blk] + [copy.deepcopy(blk) for _ in range(copies(wbytes) - 1)] \
                    if t <= 16 else [blk]
                x = (torch.rand(t, d) * 2 - 1).to(tdt)
                dy = (torch.rand(t, d) * 2 - 1).to(tdt)
                h = torch.rand(t, m).to(tdt)
                for th in ([a.threads] if a.threads else [1, 2]):
                    torch.set_num_threads(th)
                    for bwd in (False, True):
                        if bwd:
                            xg = x.clone().requires_grad_(True)

                            def run(c):
                                blks[c].zero_grad(set_to_none=False)
                                xg.grad = None
                                blks[c](xg).backward(dy)
                        else:
                            def run(c):
                                with torch.no_grad():
                                    blks[c](x)
                        rot = Rotation(len(blks))
                        sec = timeit(run, reps, rot)
                        with torch.no_grad():
                            gsec = timeit(lambda c: gemms(blks[c], x, dy, h, bwd), reps, rot)
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
