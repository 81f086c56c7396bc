#!/usr/bin/env python3
"""torch_cuda_block.py — FFN blocks in PyTorch on the GPU, eager and torch.compile, timed the way
`ffn bench block --backend cuda` times ffn's, and one table comparing them with ffn's rows.

Same rows as ffn: gpt2-small (768 -> 3072, GeLU-tanh, biases), llama3-8b (4096 -> 14336,
SwiGLU, no biases) and phi3-mini (3072 -> 8192, SwiGLU, one gate_up Linear whose output is split
in halves, as Hugging Face's Phi3MLP) at 16, 512 and 8192 tokens, bf16 (f32 with --dtype f32), built from nn.Linear
layers (F.gelu(approximate='tanh') / F.silu(g) * u), forward under no_grad (fwd) and forward +
autograd backward of y with upstream gradient dy, into the weights, biases and x (fwdbwd; the
gradients set to None before each step, as optimizer.zero_grad does). torch.compile compiles the
module once per row (default mode, static shapes) and is timed after its warm-up. torch_gemm times
the same matrix products alone (torch.mm / addmm into preallocated outputs: cuBLAS). GPU time by
CUDA events, the median over reps, a read of 4x the L2 cache before every timed call (as ffn).

  python3 bench/torch_cuda_block.py --json-out torch.jsonl                 # torch rows
  python3 bench/torch_cuda_block.py --ffn-json ffn.jsonl --json-out torch.jsonl   # + the table
  python3 bench/torch_cuda_block.py --table-only --ffn-json ffn.jsonl --torch-json torch.jsonl

  python3 bench/torch_cuda_block.py --gemms --json-out torch-gemms.jsonl  # each GEMM alone
  python3 bench/torch_cuda_block.py --gemm-table --ffn-json ffn.jsonl --torch-json torch-gemms.jsonl

--gemms times each matrix product of a row alone (the names of ffn's stages: P0, P1, down,
dW_down, dh, dW_P0, dW_P1, dx_P0, dx_P1), through PyTorch's default BLAS (cuBLAS) and with
torch.backends.cuda.preferred_blas_library("cublaslt"); --gemm-table joins them with ffn's
`bench block --gemms --stages` rows (the GEMM alone with ffn's pick and with cuBLASLt's first
heuristic candidate, and the same GEMM inside the block).
(also reachable as `bench/torch_cuda.py --blocks ...`). ffn's rows: `ffn bench block --backend
cuda --json`. Not a correctness check.
"""
import argparse
import json
import os
import statistics
import sys
import time

from _torchbench import flops, json_rows, make_block as cpu_block, torch
# (torch is None without PyTorch: --table-only needs none)

SHAPES = [
    # name, d, m, gated, bias, fused (one gate_up weight)
    ("gpt2-small", 768, 3072, False, True, False),
    ("llama3-8b", 4096, 14336, True, False, False),
    ("phi3-mini", 3072, 8192, True, False, True),
]
TOKENS = [16, 512, 8192]
MIN_REPS, MAX_REPS, ROW_BUDGET_S = 5, 50, 0.4


def make_block(d, m, gated, bias, dt, fused=False):
    return cpu_block(d, m, gated, bias, fused).to(device="cuda", dtype=dt)


class Timer:
    def __init__(self):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.ones((4 * l2) // 4, dtype=torch.float32, device="cuda")
        self.sink = torch.zeros((), dtype=torch.float32, device="cuda")

    def evict(self):
        torch.sum(self.flush, dim=0, out=self.sink)

    def time(self, fn, reps_req):
        fn(), fn()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(), fn(), b.record()
        torch.cuda.synchronize()
        est = max(a.elapsed_time(b) * 1e-3, 1e-6)
        reps = reps_req or min(MAX_REPS, max(MIN_REPS, int(ROW_BUDGET_S / est)))
        ev = [[torch.cuda.Event(enable_timing=True) for _ in range(2)] for _ in range(reps)]
        for e in ev:
            self.evict()
            e[0].record()
            fn()
            e[1].record()
        torch.cuda.synchronize()
        t = [e[0].elapsed_time(e[1]) * 1e-3 for e in ev]
        self.evict()
        host = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            host.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        return statistics.median(t), statistics.median(host), reps


def gemms_fn(blk, x, dy, bwd, gated, bias):
    """The block's matrix products alone, as ffn issues them (P and h in the row's dtype)."""
    if hasattr(blk, "gate_up"):
        return fused_gemms_fn(blk, x, dy, bwd)
    wu, wd = blk.up.weight, blk.down.weight
    t, d = x.shape
    m = wu.shape[0]
    o = dict(dtype=x.dtype, device="cuda")
    pu, pg, h, y = (torch.empty(t, m, **o), torch.empty(t, m, **o), torch.randn(t, m, **o),
                    torch.empty(t, d, **o))
    dh, gwd, gwu, gwg, dx = (torch.empty(t, m, **o), torch.empty(d, m, **o), torch.empty(m, d, **o),
                             torch.empty(m, d, **o), torch.empty(t, d, **o))

    def fn():
        with torch.no_grad():
            if bias:
                torch.addmm(blk.up.bias, x, wu.t(), out=pu)
                torch.addmm(blk.down.bias, h, wd.t(), out=y)
            else:
                torch.mm(x, wu.t(), out=pu)
                torch.mm(h, wd.t(), out=y)
            if gated:
                torch.mm(x, blk.gate.weight.t(), out=pg)
            if bwd:
                torch.mm(dy.t(), h, out=gwd)
                torch.mm(dy, wd, out=dh)
                torch.mm(pu.t(), x, out=gwu)
                torch.mm(pu, wu, out=dx)
                if gated:
                    torch.mm(pg.t(), x, out=gwg)
                    dx.addmm_(pg, blk.gate.weight)
    return fn


def fused_gemm_list(blk, x, dy):
    """The matrix products of a block with one gate_up weight [2m, d] (no biases): P0 = x·W_guᵀ
    [t, 2m], down, and backward dW_down, dh, dW_P0 = dPᵀ·x, dx_P0 = dP·W_gu."""
    wgu, wd = blk.gate_up.weight, blk.down.weight
    t, d = x.shape
    m = wd.shape[1]
    o = dict(dtype=x.dtype, device="cuda")
    p, h, y = torch.randn(t, 2 * m, **o), torch.randn(t, m, **o), torch.empty(t, d, **o)
    dh, gwd, gwgu, dx = (torch.empty(t, m, **o), torch.empty(d, m, **o),
                         torch.empty(2 * m, d, **o), torch.empty(t, d, **o))
    return [("P0", lambda: torch.mm(x, wgu.t(), out=p)),
            ("down", lambda: torch.mm(h, wd.t(), out=y)),
            ("dW_down", lambda: torch.mm(dy.t(), h, out=gwd)),
            ("dh", lambda: torch.mm(dy, wd, out=dh)),
            ("dW_P0", lambda: torch.mm(p.t(), x, out=gwgu)),
            ("dx_P0", lambda: torch.mm(p, wgu, out=dx))]


def fused_gemms_fn(blk, x, dy, bwd):
    L = fused_gemm_list(blk, x, dy)
    L = L if bwd else L[:2]

    def fn():
        with torch.no_grad():
            for _, f in L:
                f()
    return fn


def gemm_list(blk, x, dy, gated, bias):
    """[(name, fn)]: each matrix product of a fwd+bwd row alone, named as ffn's stages."""
    if hasattr(blk, "gate_up"):
        return fused_gemm_list(blk, x, dy)
    wu, wd = blk.up.weight, blk.down.weight
    wg = blk.gate.weight if gated else None
    t, d = x.shape
    m = wu.shape[0]
    o = dict(dtype=x.dtype, device="cuda")
    pu, pg, h, y = (torch.randn(t, m, **o), torch.randn(t, m, **o), torch.randn(t, m, **o),
                    torch.empty(t, d, **o))
    dh, gwd, gwu, gwg, dx = (torch.empty(t, m, **o), torch.empty(d, m, **o), torch.empty(m, d, **o),
                             torch.empty(m, d, **o), torch.empty(t, d, **o))
    nu = "P1" if gated else "P0"
    L = []
    if gated:
        L.append(("P0", lambda: torch.mm(x, wg.t(), out=pg)))
    if bias:
        L.append((nu, lambda: torch.addmm(blk.up.bias, x, wu.t(), out=pu)))
        L.append(("down", lambda: torch.addmm(blk.down.bias, h, wd.t(), out=y)))
    else:
        L.append((nu, lambda: torch.mm(x, wu.t(), out=pu)))
        L.append(("down", lambda: torch.mm(h, wd.t(), out=y)))
    L.append(("dW_down", lambda: torch.mm(dy.t(), h, out=gwd)))
    L.append(("dh", lambda: torch.mm(dy, wd, out=dh)))
    if gated:
        L.append(("dW_P0", lambda: torch.mm(pg.t(), x, out=gwg)))
    L.append(("dW_P1" if gated else "dW_P0", lambda: torch.mm(pu.t(), x, out=gwu)))
    if gated:
        L.append(("dx_P0", lambda: torch.mm(pg, wg, out=dx)))
        L.append(("dx_P1", lambda: dx.addmm_(pu, wu)))
    else:
        L.append(("dx_P0", lambda: torch.mm(pu, wu, out=dx)))
    return L


def run_gemms(args, out):
    """Each GEMM alone, cuBLAS (PyTorch's default) and cuBLASLt (preferred_blas_library)."""
    dev = torch.cuda.get_device_name(0)
    timer = Timer()
    torch.manual_seed(0x5EED)
    libs = ["cublas", "cublaslt"]
    for name, d, m, gated, bias, fused in SHAPES:
        if args.shape and name != args.shape:
            continue
        for t in args.tokens:
            for dname in args.dtypes:
                dt = torch.bfloat16 if dname == "bf16" else torch.float32
                with torch.no_grad():
                    blk = make_block(d, m, gated, bias, dt, fused)
                    x = torch.randn(t, d, dtype=dt, device="cuda")
                    dy = torch.randn(t, d, dtype=dt, device="cuda")
                    for lib in libs:
                        try:
                            torch.backends.cuda.preferred_blas_library(lib)
                        except Exception as e:
                            print(f"preferred_blas_library({lib}): {e}", file=sys.stderr)
                            continue
                        for gname, fn in gemm_list(blk, x, dy, gated, bias):
                            med, host, reps = timer.time(fn, max(args.reps, 10) if args.reps else 0)
                            row = {"impl": "torch_gemm1", "blas": lib, "backend": "cuda",
                                   "shape": name, "tokens": t, "dtype": dname, "gemm": gname,
                                   "seconds": med, "reps": reps, "device": dev,
                                   "torch": torch.__version__}
                            if out:
                                out.write(json.dumps(row) + "\n")
                                out.flush()
                            print(f"torch {lib:8s} {name:11s} {t:5d} {dname:4s} {gname:8s} "
                                  f"{med * 1e3:9.4f} ms", file=sys.stderr, flush=True)
                    torch.backends.cuda.preferred_blas_library("cublas")
                del blk, x, dy
                torch.cuda.empty_cache()
    try:
        ws = os.environ.get("CUBLASLT_WORKSPACE_SIZE", "(unset)")
        print(f"torch {torch.__version__}: CUBLASLT_WORKSPACE_SIZE={ws}, "
              f"CUBLAS_WORKSPACE_CONFIG={os.environ.get('CUBLAS_WORKSPACE_CONFIG', '(unset)')}",
              file=sys.stderr)
    except Exception:
        pass


def gemm_table(ffn_rows, torch_rows):
    """Per GEMM: ffn alone (its pick / the heuristic's first), ffn inside the block (its stage),
    PyTorch alone through cuBLAS and through cuBLASLt (median GPU ms)."""
    fg = {(r["shape"], int(r["tokens"]), r["math"], r["gemm"]): r for r in ffn_rows
          if r.get("bench") == "block_gemm" and r["pass"] == "fwdbwd"}
    st = {}
    for r in ffn_rows:
        if r.get("bench") == "block_stage" and r["pass"] == "fwdbwd":
            st[(r["shape"], int(r["tokens"]), r["math"], r["stage"])] = r
    tg = {}
    for r in torch_rows:
        if r.get("impl") == "torch_gemm1":
            tg[(r["shape"], int(r["tokens"]), r["dtype"], r["gemm"], r["blas"])] = r
    print("FFN block GEMMs one by one (median GPU ms, L2 evicted before each; 'in block' = the "
          "block's own stage, events between stages)")
    hdr = (f"{'shape':11s} {'T':>5s} {'dtype':5s} {'gemm':8s} {'M x N x K':>20s} {'op':2s} | "
           f"{'ffn':>8s} {'first':>8s} {'pick':>6s} {'inblock':>8s} | {'cublas':>8s} "
           f"{'cublasLt':>8s} | {'ffn/cublas':>10s}")
    print(hdr)
    print("-" * len(hdr))
    tot = {}
    for k in sorted(fg, key=lambda k: (k[0], k[1], k[2])):
        f = fg[k]
        s_ = st.get(k)
        a = tg.get((k[0], k[1], k[2], k[3], "cublas"))
        b = tg.get((k[0], k[1], k[2], k[3], "cublaslt"))
        ms = lambda v: f"{v:8.4f}" if v is not None else f"{'-':>8s}"
        ta = a["seconds"] * 1e3 if a else None
        tb = b["seconds"] * 1e3 if b else None
        row = tot.setdefault(k[:3], [0.0, 0.0, 0.0, 0.0, 0.0])
        for i, v in enumerate([f["ms"], f["first_ms"], s_["ms"] if s_ else None, ta, tb]):
            row[i] += v or 0.0
        mnk = f"{f['M']}x{f['N']}x{f['K']}"
        print(f"{k[0]:11s} {k[1]:5d} {k[2]:5s} {k[3]:8s} {mnk:>20s} {f['op']:2s} | "
              f"{ms(f['ms'])} {ms(f['first_ms'])} {f['pick'] + 1:>2d}/{f['n_algos']:<3d} "
              f"{ms(s_['ms'] if s_ else None)} | {ms(ta)} {ms(tb)} | "
              f"{(f['ms'] / ta) if ta else float('nan'):10.3f}")
    for k, v in sorted(tot.items()):
        print(f"{k[0]:11s} {k[1]:5d} {k[2]:5s} {'all':8s} {'':>20s} {'':2s} | {v[0]:8.4f} "
              f"{v[1]:8.4f} {'':6s} {v[2]:8.4f} | {v[3]:8.4f} {v[4]:8.4f} | "
              f"{(v[0] / v[3]) if v[3] else float('nan'):10.3f}")
    # The block's other stages (not GEMMs), fwd+bwd rows.
    gemms = {"P0", "P1", "down", "dW_down", "dh", "dW_P0", "dW_P1", "dx_P0", "dx_P1"}
    other = sorted(((k, r) for k, r in st.items() if not fg or k[3] not in gemms),
                   key=lambda kr: (kr[0][:3], kr[1]["call"] != "forward", kr[1]["index"]))
    if other:
        print(("" if fg else "all ") + ("non-GEMM " if fg else "") +
              "stages of the fwd+bwd rows (median GPU ms):")
        for k, r in other:
            print(f"  {k[0]:11s} {k[1]:5d} {k[2]:5s} {r['call']:8s} {k[3]:10s} {r['ms']:8.4f}")


def step_fn(mod, params, x, dy, bwd):
    if not bwd:
        def fn():
            with torch.no_grad():
                mod(x)
        return fn

    def fn():
        for p in params:
            p.grad = None
        mod(x).backward(dy)
    return fn


def run_torch(args, out):
    dev = torch.cuda.get_device_name(0)
    timer = Timer()
    torch.manual_seed(0x5EED)
    rows = []
    for name, d, m, gated, bias, fused in SHAPES:
        if args.shape and name != args.shape:
            continue
        for t in args.tokens:
            for dname in args.dtypes:
                dt = torch.bfloat16 if dname == "bf16" else torch.float32
                blk = make_block(d, m, gated, bias, dt, fused)
                x = torch.randn(t, d, dtype=dt, device="cuda", requires_grad=True)
                dy = torch.randn(t, d, dtype=dt, device="cuda")
                params = list(blk.parameters()) + [x]
                cblk = torch.compile(blk) if args.compile else None
                for bwd in args.passes:
                    impls = [("torch_gemm", gemms_fn(blk, x.detach(), dy, bwd, gated, bias))]
                    if args.eager:
                        impls.append(("torch_eager", step_fn(blk, params, x, dy, bwd)))
                    if cblk is not None:
                        impls.append(("torch_compile", step_fn(cblk, params, x, dy, bwd)))
                    fl = flops(t, d, m, gated, bias, bwd)
                    for impl, fn in impls:
                        t0 = time.perf_counter()
                        try:
                            med, host, reps = timer.time(fn, args.reps)
                        except Exception as e:  # a compile failure is a row, not the end
                            print(f"{impl} {name} {t} {dname}: {e}", file=sys.stderr)
                            continue
                        row = {"impl": impl, "backend": "cuda", "shape": name, "tokens": t, "d": d,
                               "m": m, "gated": gated, "dtype": dname,
                               "pass": "fwdbwd" if bwd else "fwd", "seconds": med,
                               "gflops": fl / med * 1e-9, "host_us": host * 1e6, "reps": reps,
                               "wall_s": time.perf_counter() - t0, "device": dev,
                               "torch": torch.__version__}
                        rows.append(row)
                        if out:
                            out.write(json.dumps(row) + "\n")
                            out.flush()
                        print(f"{impl:13s} {name:11s} {t:5d} {dname:4s} {row['pass']:6s} "
                              f"{med * 1e3:9.3f} ms {row['gflops'] * 1e-3:7.1f} TFLOP/s",
                              file=sys.stderr, flush=True)
                del blk, cblk, x, dy, params
                torch.cuda.empty_cache()
    return rows


def table(ffn_rows, torch_rows):
    def key(r):  # f32 rows by their math (f32, tf32); rows with cuBLASLt's GeLU epilogue apart
        dt = r.get("math", r["dtype"]) if r["dtype"] == "f32" else r["dtype"]
        return (r["shape"], int(r["tokens"]), dt + ("+epi" if r.get("gelu_epilogue") else ""),
                r["pass"])
    ffn = {key(r): r for r in ffn_rows if "bench" not in r and "shape" in r}
    tor = {}
    for r in torch_rows:
        if "pass" not in r:  # --gemms rows
            continue
        tor.setdefault((r["shape"], int(r["tokens"]), r["dtype"], r["pass"]), {})[r["impl"]] = r
    print("FFN block on the GPU: ffn vs the same GEMMs alone (cuBLASLt) vs PyTorch eager and "
          "torch.compile (median GPU ms; speedup = torch / ffn)")
    hdr = (f"{'shape':11s} {'T':>5s} {'dtype':8s} {'pass':6s} | {'ffn':>8s} {'gemms':>8s} "
           f"{'ratio':>6s} | {'t.gemm':>8s} {'eager':>8s} {'compile':>8s} | {'vs eager':>8s} "
           f"{'vs comp':>8s}")
    print(hdr)
    print("-" * len(hdr))
    keys = sorted(set(ffn) | set(tor), key=lambda k: (k[0], k[2], k[1], k[3]))
    for k in keys:
        f = ffn.get(k)
        t = tor.get(k, {})
        ms = lambda r, f_="seconds": f"{r[f_] * 1e3:8.3f}" if r else f"{'-':>8s}"
        ratio = f"{f['ratio_to_gemm']:6.3f}" if f else f"{'-':>6s}"
        sp = lambda r: f"{r['seconds'] / f['seconds']:8.3f}" if (r and f) else f"{'-':>8s}"
        print(f"{k[0]:11s} {k[1]:5d} {k[2]:8s} {k[3]:6s} | {ms(f)} {ms(f, 'gemm_seconds')} "
              f"{ratio} | {ms(t.get('torch_gemm'))} {ms(t.get('torch_eager'))} "
              f"{ms(t.get('torch_compile'))} | {sp(t.get('torch_eager'))} "
              f"{sp(t.get('torch_compile'))}")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", choices=[s[0] for s in SHAPES])
    p.add_argument("--tokens", default=None, help="N[,N...] (default 16,512,8192)")
    p.add_argument("--dtype", action="append", choices=["f32", "bf16"], help="default bf16")
    p.add_argument("--pass", dest="pass_", default="all", choices=["fwd", "fwdbwd", "all"])
    p.add_argument("--reps", type=int, default=0)
    p.add_argument("--no-compile", dest="compile", action="store_false")
    p.add_argument("--no-eager", dest="eager", action="store_false")
    p.add_argument("--ffn-json", help="ffn's rows (`ffn bench block --backend cuda --json`)")
    p.add_argument("--json-out", help="write (append) the torch rows here as JSON lines")
    p.add_argument("--table-only", action="store_true")
    p.add_argument("--gemms", action="store_true", help="each GEMM alone (torch_gemm1 rows)")
    p.add_argument("--gemm-table", action="store_true",
                   help="only the per-GEMM table from --ffn-json and --torch-json")
    p.add_argument("--torch-json", help="torch rows from an earlier run (with --table-only)")
    a = p.parse_args(argv)
    a.tokens = [int(v) for v in a.tokens.split(",")] if a.tokens else TOKENS
    a.dtypes = a.dtype or ["bf16"]
    a.passes = [False, True] if a.pass_ == "all" else [a.pass_ == "fwdbwd"]
    return a


def main(argv):
    a = parse(argv)
    def rows_of(path):  # a missing file (a step that did not run) has no rows
        return json_rows(path, missing_ok=True)

    ffn_rows = rows_of(a.ffn_json)
    if a.gemm_table:
        gemm_table(ffn_rows, rows_of(a.torch_json))
        return 0
    if a.gemms:
        if torch is None or not torch.cuda.is_available():
            print("torch_cuda_block.py: no CUDA device for PyTorch", file=sys.stderr)
            return 2
        out = open(a.json_out, "a") if a.json_out else None
        run_gemms(a, out)
        if out:
            out.close()
        return 0
    if a.table_only:
        torch_rows = rows_of(a.torch_json)
    else:
        if torch is None or not torch.cuda.is_available():
            print("torch_cuda_block.py: no CUDA device for PyTorch", file=sys.stderr)
            return 2
        out = open(a.json_out, "a") if a.json_out else None
        torch_rows = run_torch(a, out)
        if out:
            out.close()
    if ffn_rows or torch_rows:
        table(ffn_rows, torch_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
