#!/usr/bin/python3
"""torch_act.py — PyTorch's CPU activations, timed the way `ffn bench act` times ffn's.

Same ops, directions, dtypes (input = output dtype), sizes, thread counts and input
distributions as `ffn bench act`, and the same JSON fields (impl="torch"), so that
bench/compare.py can put the two side by side. Each op is written the way eager PyTorch /
Hugging Face code runs it (gated forms as two kernels: act(gate) then * up; backward as the ATen
backward ops autograd would call, with the tensors autograd saves computed beforehand), with out=
buffers wherever ATen has an out variant, so allocation and page faults are not timed.
GB/s counts the MINIMUM bytes (each input read once, each output written once), as ffn does,
and the ratio is to a triad a = b + q*c (torch.add(b, c, alpha=q, out=a), 12 B/element, same n
and threads) run in this process just before each timed rep of the op: the median of those
per-rep ratios. Not a correctness check.

Runs with Debian's python3-torch (/usr/bin/python3); `scripts/deps.sh bench` installs it.
"""
import argparse
import json
import math
import mmap
import statistics
import sys
import time

import torch

from _torchbench import (ACTS, GLU_NAMES, WIDE, act_backward, act_forward, act_saved,
                         glu_backward, glu_forward)

# --- parameters (the same as tools/cmd_bench_act.c) -----------------------------------------------
DEFAULT_NS = [16384, 512 * 3072, 32 << 20]  # in L1/L2, GPT-2-small FFN at seq 512, out of cache
QUICK_N = 512 * 3072
DEFAULT_THREADS = [1, 2]
REP_MIN_S = 2e-4        # a timed rep lasts at least this long (calls are batched)
ROW_BUDGET_S = 0.08     # automatic reps: about this much timed work per row
TRIAD_BUDGET_S = 0.04   # and per triad measurement
MIN_REPS = 5
MAX_REPS = 60
QUICK_REPS = 3          # --quick: reps per row (and automatic reps of slow calls)
SLOW_CALL_S = 0.1       # automatic reps: a call this slow gets QUICK_REPS reps
TRIAD_Q = 3.0           # STREAM's scalar
SEED = 0x5EED

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


# --- buffers --------------------------------------------------------------------------------------
# With --pages huge (the default, as in `ffn bench act`) every buffer the timed calls touch — the
# triad's, the inputs, outputs, temporaries and the tensors autograd saves — lives in anonymous
# memory 2 MiB aligned and advised onto transparent huge pages before the first touch; with
# --pages 4k they come from PyTorch's allocator (4 KiB pages on a host whose THP is `madvise`).
HUGE = 2 << 20
PAGES = {"huge": True}
_MAPS = []  # keeps the mappings alive for the process


def zeros(n, dtype=torch.float32):
    """A zeroed tensor of n elements, on huge pages when PAGES["huge"]."""
    if not PAGES["huge"] or not hasattr(mmap, "MADV_HUGEPAGE"):
        return torch.zeros(n, dtype=dtype)
    esize = torch.tensor([], dtype=dtype).element_size()
    size = (n * esize + HUGE - 1) // HUGE * HUGE
    m = mmap.mmap(-1, size + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    _MAPS.append(m)
    # The mapping is 4 KiB aligned; start the tensor at the first 2 MiB boundary inside it.
    addr = torch.frombuffer(m, dtype=torch.uint8, count=1).data_ptr()
    off = (-addr) % HUGE
    m.madvise(mmap.MADV_HUGEPAGE, off, size)
    t = torch.frombuffer(m, dtype=dtype, count=n, offset=off)
    t.zero_()
    return t


def keep(t):
    """t copied into a buffer from zeros() (for tensors computed by PyTorch's own allocator)."""
    out = zeros(t.numel(), t.dtype)
    out.copy_(t.reshape(-1))
    return out


# --- the ops (_torchbench.py: act_forward, act_backward, glu_forward, glu_backward) ------------
def glu_saved(act, g):
    """a = act(g) (saved by the multiply) and act's own saved tensor (for sigmoid: a itself)."""
    a = zeros(g.numel(), g.dtype)
    act_forward(act, g, a, torch.empty_like(g))
    return a, (a if act == "sigmoid" else act_saved(act, g, keep))


# --- timing ---------------------------------------------------------------------------------------
def time_pair(triad, fn, reps_req, min_reps, tri_bytes, op_bytes):
    """The triad and the op in interleaved reps (triad, op, triad, op, ...), as ffn bench act
    does: each op rep has a triad measured just before it. Two warm-up calls of each (the second,
    warm one is the cost estimate), calls batched to at least REP_MIN_S per rep. Returns
    (op median, op min, triad median, triad min, median of the per-pair ratios, reps, inner)."""
    est, inner = [], []
    for f in (triad, fn):
        f()
        t0 = time.perf_counter()
        f()
        e = max(time.perf_counter() - t0, 1e-9)
        est.append(e)
        inner.append(math.ceil(REP_MIN_S / e) if e < REP_MIN_S else 1)
    if est[1] > SLOW_CALL_S:   # a slow call gets fewer reps: the full run stays in minutes
        min_reps = min(min_reps, QUICK_REPS)
    budget = ROW_BUDGET_S + TRIAD_BUDGET_S
    reps = reps_req or max(min_reps, min(MAX_REPS, int(budget / (est[0] * inner[0] +
                                                                  est[1] * inner[1]))))
    times = ([], [])
    ratios = []
    for _ in range(reps):
        for k, f in enumerate((triad, fn)):
            t0 = time.perf_counter()
            for _ in range(inner[k]):
                f()
            times[k].append((time.perf_counter() - t0) / inner[k])
        ratios.append((op_bytes / times[1][-1]) / (tri_bytes / times[0][-1]))
    return (statistics.median(times[1]), min(times[1]), statistics.median(times[0]),
            min(times[0]), statistics.median(ratios), reps, inner[1])


# --- host -----------------------------------------------------------------------------------------
def host_info():
    cpu, mhz = "unknown", None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, val = line.partition(":")
                key = key.strip()
                if key == "model name" and cpu == "unknown":
                    cpu = val.strip()
                elif key == "cpu MHz" and mhz is None:
                    mhz = round(float(val), 1)
                if cpu != "unknown" and mhz is not None:
                    break
    except OSError:
        pass
    cap = "unknown"
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            cap = line.split(":", 1)[1].strip().lower()
    return cpu, mhz, cap


def fill(buf, dist, gen):
    """buf (any dtype) <- N(0,1) or uniform[-WIDE, WIDE], drawn in f32 then rounded."""
    n = buf.numel()
    step = 1 << 22
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        if dist == "normal":
            v = torch.randn(hi - lo, generator=gen, dtype=torch.float32)
        else:
            v = torch.rand(hi - lo, generator=gen, dtype=torch.float32) * (2 * WIDE) - WIDE
        buf[lo:hi].copy_(v)


# --- options --------------------------------------------------------------------------------------
def parse_list(s, defaults):
    if s == "all":
        return list(defaults)
    vals = [int(v) for v in s.split(",")]
    if not vals or any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError("wants 'all' or positive integers separated by commas")
    return vals


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", default="all", help="activation or gated name (swiglu ...), or all")
    p.add_argument("--dir", default="all", choices=["fwd", "bwd", "all"])
    form = p.add_mutually_exclusive_group()
    form.add_argument("--glu", dest="form", action="store_const", const="glu")
    form.add_argument("--unary", dest="form", action="store_const", const="unary")
    form.add_argument("--both", dest="form", action="store_const", const="both")
    p.add_argument("--dtype", default=None, choices=["f32", "bf16", "all"])
    p.add_argument("--n", default=None, help="N[,N...] or all (default 16384,1572864,33554432)")
    p.add_argument("--threads", default=None, help="T[,T...] or all (default 1,2)")
    p.add_argument("--dist", default=None, choices=["normal", "wide", "all"])
    p.add_argument("--reps", type=int, default=0, help="timed reps per row (default automatic)")
    p.add_argument("--quick", action="store_true", help="n=1572864, 1 thread, f32, normal, 3 reps")
    p.add_argument("--text", action="store_true", help="a table instead of JSON lines")
    p.add_argument("--pages", default="huge", choices=["huge", "4k"],
                   help="buffers on transparent huge pages (default) or PyTorch's own allocator")
    a = p.parse_args(argv)
    PAGES["huge"] = a.pages == "huge"
    if a.quick:
        a.n = a.n or str(QUICK_N)
        a.threads = a.threads or "1"
        a.dtype = a.dtype or "f32"
        a.dist = a.dist or "normal"
        a.reps = a.reps or QUICK_REPS
    try:
        a.ns = parse_list(a.n or "all", DEFAULT_NS)
        a.thread_list = parse_list(a.threads or "all", DEFAULT_THREADS)
    except (ValueError, argparse.ArgumentTypeError) as e:
        p.error(f"--n/--threads: {e}")
    a.dtypes = ["f32", "bf16"] if (a.dtype or "all") == "all" else [a.dtype]
    a.dists = ["normal", "wide"] if (a.dist or "all") == "all" else [a.dist]
    a.dirs = ["fwd", "bwd"] if a.dir == "all" else [a.dir]
    form = a.form or "both"
    forms = {"both": [False, True], "unary": [False], "glu": [True]}[form]
    if a.op == "all":
        a.cases = [(act, glu) for glu in forms for act in ACTS]
    elif a.op in ACTS:
        a.cases = [(a.op, glu) for glu in forms]
    elif a.op in GLU_NAMES.values():
        a.cases = [(next(k for k, v in GLU_NAMES.items() if v == a.op), True)]
    else:
        p.error(f"unknown --op '{a.op}'")
    return a


# --- the run --------------------------------------------------------------------------------------
def make_call(act, glu, d, x, i1, i2, o0, o1, t0, t1):
    """The timed callable for one row and the number of tensors it moves at minimum. Tensors that
    autograd would have saved in the forward are computed here, outside the timing."""
    if not glu and d == "fwd":
        return (lambda: act_forward(act, x, o0, t0)), 2
    if not glu:
        sv = act_saved(act, x, keep)
        return (lambda: act_backward(act, o0, x, i1, sv, t0)), 3
    if d == "fwd":
        return (lambda: glu_forward(act, o0, x, i1, t0, t1)), 3
    sv = glu_saved(act, x)
    return (lambda: glu_backward(act, o0, o1, x, i1, i2, sv, t0, t1)), 5


def main(argv):
    a = parse_args(argv)
    cpu, mhz, cap = host_info()
    max_n = max(a.ns)
    out = sys.stdout
    if a.text:
        print(f"# torch {torch.__version__} ({cap}) on \"{cpu}\", pages {a.pages}", file=out)
        print(f"{'op':<12} {'dir':<3} {'dtype':<5} {'dist':<6} {'n':>9} {'T':>2} {'med_ms':>9} "
              f"{'min_ms':>9} {'GB/s':>7} {'triad':>7} {'ratio':>6}", file=out)
    else:
        print(json.dumps({"bench": "act", "impl": "torch", "header": True, "cpu": cpu, "mhz": mhz,
                          "isa": cap, "torch": torch.__version__, "pages": a.pages}), file=out,
              flush=True)

    # Triad arrays (f32, max_n), touched before any timing.
    ta = zeros(max_n)
    tb = zeros(max_n).fill_(1.0)
    tc = zeros(max_n).fill_(2.0)
    gen = torch.Generator().manual_seed(SEED)
    min_reps = QUICK_REPS if a.quick else MIN_REPS

    for dname in a.dtypes:
        dt = DTYPES[dname]
        esize = torch.tensor([], dtype=dt).element_size()
        # Inputs x/gate, up/dy, dh; outputs; temporaries of the multi-kernel forms. Allocated at
        # max_n once and zeroed (pages touched); smaller n use prefixes.
        ins = [zeros(max_n, dt) for _ in range(3)]
        outs = [zeros(max_n, dt) for _ in range(2)]
        tmps = [zeros(max_n, dt) for _ in range(2)]
        fill(ins[1], "normal", gen)   # up / dy
        fill(ins[2], "normal", gen)   # dh
        for dist in a.dists:
            fill(ins[0], dist, gen)   # x / gate
            for nt in a.thread_list:
                torch.set_num_threads(nt)
                for n in a.ns:
                    x, i1, i2 = (t[:n] for t in ins)
                    o0, o1 = (t[:n] for t in outs)
                    t0, t1 = (t[:n] for t in tmps)
                    tri_a, tri_b, tri_c = ta[:n], tb[:n], tc[:n]

                    def triad():
                        torch.add(tri_b, tri_c, alpha=TRIAD_Q, out=tri_a)

                    for act, glu in a.cases:
                        for d in a.dirs:
                            fn, tensors = make_call(act, glu, d, x, i1, i2, o0, o1, t0, t1)
                            nbytes = tensors * n * esize
                            # Triad and op interleaved: each op rep after its own triad run.
                            med, mn, tri_med, tri_min, ratio, reps, inner = time_pair(
                                triad, fn, a.reps, min_reps, 12.0 * n, nbytes)
                            fn = None  # frees the saved tensors
                            gbps = nbytes / med * 1e-9
                            triad_gbps = 12.0 * n / tri_med * 1e-9
                            op = GLU_NAMES[act] if glu else act
                            if a.text:
                                print(f"{op:<12} {d:<3} {dname:<5} {dist:<6} {n:>9} {nt:>2} "
                                      f"{med * 1e3:9.4f} {mn * 1e3:9.4f} {gbps:7.2f} "
                                      f"{triad_gbps:7.2f} {ratio:6.3f}", file=out,
                                      flush=True)
                                continue
                            row = {"impl": "torch", "op": op, "act": act, "glu": glu, "dir": d,
                                   "dtype": dname, "dist": dist, "n": n, "threads": nt,
                                   "isa": cap, "reps": reps, "inner": inner,
                                   "seconds": med, "min_seconds": mn, "bytes": nbytes,
                                   "gbps": round(gbps, 4),
                                   "min_gbps": round(nbytes / mn * 1e-9, 4),
                                   "triad_gbps": round(triad_gbps, 4),
                                   "triad_best_gbps": round(12.0 * n / tri_min * 1e-9, 4),
                                   "triad_seconds": tri_med,
                                   "ratio": round(ratio, 4), "cpu": cpu, "mhz": mhz}
                            print(json.dumps(row), file=out, flush=True)
        del ins, outs, tmps
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
