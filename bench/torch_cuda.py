#!/usr/bin/env python3
"""torch_cuda.py — PyTorch's CUDA activations, eager and torch.compile, timed the way
`ffn bench act --backend cuda` times ffn's, and one table comparing the three.

Same ops, directions, dtypes (input = output dtype) and sizes as ffn's GPU benchmark, the same
timing: CUDA events around each call, a read of 4x the L2 cache before every timed call (the data
is never in cache, and the stream is busy while the host queues the call, so host overhead stays
out of the GPU time; it is measured apart as host_us), the median over reps, GB/s over the MINIMUM
bytes (each input read once, each output written once), and a device-to-device copy of as many
bytes timed in the same reps (copy_gbps, ratio). Eager calls are written as eager PyTorch / Hugging
Face code runs them (gated forms as act(gate) then * up; backward with the ATen backward ops
autograd calls, the tensors autograd saves computed beforehand), with out= buffers where ATen has
them. torch.compile compiles each op's math (the backward's as its explicit formula) once per
(op, direction, dtype), shapes dynamic, and is timed after a warm-up.

  python3 bench/torch_cuda.py --ffn-json ffn.jsonl            # torch rows + the comparison table
  python3 bench/torch_cuda.py --op swiglu --dtype bf16 --n 117440512 --no-compile

`--fused M`: the gated ops only, gate and up the two halves of one [n/M, 2M] tensor (a fused
gate_up projection's output, sliced as vLLM and Hugging Face's fused MLPs slice it), dgate and
dup written into the halves of another; h and dh [n/M, M]. As `ffn bench act --fused M`.

`--with-ffn`: ffn's own calls as a third implementation of each row, through its Python package
(python/ffn, the library named by $FFN_LIBRARY) on the same tensors, timed by the same timer in
the same process, rep for rep beside PyTorch's (impl "ffn_inproc"): the comparison that does not
depend on two processes' runs agreeing (at 1.5M elements a call takes 5-9 us and a row's own copy
moves by 0.3-1 us from one run to the next).

`torch_cuda.py --blocks [...]` runs the FFN blocks instead (bench/torch_cuda_block.py).
ffn's rows come from `ffn bench act --backend cuda --json` (a file, or --ffn PATH to run the tool
here). JSON lines of the torch rows go to --json-out. Not a correctness check.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _torchbench import (ACTS, GLU_NAMES, QUICK_GELU_K, WIDE, act_backward, act_forward,
                         act_saved, glu_backward, glu_forward, json_rows, torch)
# (torch is None without PyTorch: --table-only needs none)

DEFAULT_NS = [512 * 3072, 1 << 24, 8192 * 14336]
DTYPES = ["f32", "bf16", "f16"]
TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
MIN_REPS, MAX_REPS, ROW_BUDGET_S, HOST_CALLS = 10, 100, 0.03, 20


# --- eager ops: _torchbench.py (the same code as bench/torch_act.py's on the CPU) -----------------
# --- the same math for torch.compile (explicit formulas; Inductor fuses each into one kernel) -----
def f_act(act, x):
    if act == "gelu_tanh":
        return torch.nn.functional.gelu(x, approximate="tanh")
    if act == "gelu_erf":
        return torch.nn.functional.gelu(x)
    if act == "silu":
        return torch.nn.functional.silu(x)
    if act == "relu":
        return torch.relu(x)
    if act == "sigmoid":
        return torch.sigmoid(x)
    if act == "identity":
        return x
    return x * torch.sigmoid(QUICK_GELU_K * x)


def f_dact(act, x):
    """act'(x) in f32 (the backward's math)."""
    x = x.float()
    if act == "gelu_tanh":
        k, c = 0.7978845608028654, 0.044715
        t = torch.tanh(k * (x + c * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x)
    if act == "gelu_erf":
        phi = 0.3989422804014327 * torch.exp(-0.5 * x * x)
        return 0.5 * (1 + torch.erf(x * 0.7071067811865476)) + x * phi
    if act == "silu":
        s = torch.sigmoid(x)
        return s * (1 + x * (1 - s))
    if act == "relu":
        return (x > 0).to(x.dtype)
    if act == "sigmoid":
        s = torch.sigmoid(x)
        return s * (1 - s)
    if act == "identity":
        return torch.ones_like(x)
    s = torch.sigmoid(QUICK_GELU_K * x)
    return s * (1 + QUICK_GELU_K * x * (1 - s))


def compiled_fn(act, glu, bwd):
    if not glu and not bwd:
        fn = lambda x: f_act(act, x)
    elif not glu:
        fn = lambda x, dy: (dy.float() * f_dact(act, x)).to(x.dtype)
    elif not bwd:
        fn = lambda g, u: f_act(act, g) * u
    else:
        def fn(g, u, dh):
            d = dh.float()
            return ((d * u.float() * f_dact(act, g)).to(g.dtype),
                    (d * f_act(act, g.float())).to(g.dtype))
    return torch.compile(fn, dynamic=True)


# --- timing ---------------------------------------------------------------------------------------
class Timer:
    def __init__(self):
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.ones((4 * l2) // 4, dtype=torch.float32, device="cuda")
        self.sink = torch.zeros((), dtype=torch.float32, device="cuda")

    def evict(self):
        torch.sum(self.flush, dim=0, out=self.sink)

    def row(self, fn, copy, reps_req):
        """Median GPU seconds of fn and of copy (interleaved reps), per-rep ratio, host seconds."""
        fn(), fn()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(), fn(), b.record()
        torch.cuda.synchronize()
        est = max(a.elapsed_time(b) * 1e-3, 1e-6)
        reps = reps_req or min(MAX_REPS, max(MIN_REPS, int(ROW_BUDGET_S / (2 * est))))
        ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(reps)]
        for e in ev:
            self.evict()
            e[0].record()
            fn()
            e[1].record()
            self.evict()
            e[2].record()
            copy()
            e[3].record()
        torch.cuda.synchronize()
        t_op = [e[0].elapsed_time(e[1]) * 1e-3 for e in ev]
        t_cp = [e[2].elapsed_time(e[3]) * 1e-3 for e in ev]
        ratio = statistics.median(c / o for o, c in zip(t_op, t_cp))
        self.evict()
        host = []
        for _ in range(HOST_CALLS):
            t0 = time.perf_counter()
            fn()
            host.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        return (statistics.median(t_op), min(t_op), statistics.median(t_cp), ratio,
                statistics.median(host), reps)


def ffn_call(ffn, act, glu, bwd, x, i1, i2, o0, o1):
    """ffn's call of a row through its Python package, into the row's own out= buffers."""
    if not glu:
        return (lambda: ffn.act_backward(x, i1, act, out=o0)) if bwd else \
            (lambda: ffn.act(x, act, out=o0))
    return (lambda: ffn.glu_backward(x, i1, i2, act, out=(o0, o1))) if bwd else \
        (lambda: ffn.glu(x, i1, act, out=o0))


def fill(t, dist, gen):
    if dist == "wide":
        u = torch.empty(t.shape, dtype=torch.float32, device="cuda")
        t.copy_(u.uniform_(-WIDE, WIDE, generator=gen))
    else:
        t.copy_(torch.randn(t.shape, dtype=torch.float32, device="cuda", generator=gen))


def run_torch(args, out):
    dev = torch.cuda.get_device_name(0)
    timer = Timer()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0x5EED)
    rows = []
    max_n = max(args.ns)
    for dname in args.dtypes:
        dt = getattr(torch, TORCH_DTYPES[dname])
        # --fused: bufs[0] (gate, up) and bufs[3] (dgate, dup) hold [n/M, 2M]
        bufs = [torch.empty(max_n * (2 if args.fused and k in (0, 3) else 1), dtype=dt,
                            device="cuda") for k in range(5)]
        tmp = [torch.empty(max_n, dtype=dt, device="cuda") for _ in range(2)]
        csrc = torch.empty(5 * max_n * bufs[0].element_size() // 2 + 16, dtype=torch.uint8,
                           device="cuda")
        cdst = torch.empty_like(csrc)
        for k in (1, 2):
            fill(bufs[k], "normal", gen)
        for dist in args.dists:
            fill(bufs[0], dist, gen)
            for n in args.ns:
                for glu, act, bwd in args.cases:
                    x, i1, i2 = (b[:n] for b in bufs[:3])
                    o0, o1 = bufs[3][:n], bufs[4][:n]
                    t0, t1 = tmp[0][:n], tmp[1][:n]
                    if args.fused:
                        m = args.fused
                        r = n // m
                        gu, dgu = bufs[0][:2 * n].view(r, 2 * m), bufs[3][:2 * n].view(r, 2 * m)
                        x, i1 = gu[:, :m], gu[:, m:]
                        i2, t0, t1 = i2.view(r, m), t0.view(r, m), t1.view(r, m)
                        o0, o1 = (dgu[:, :m], dgu[:, m:]) if bwd else (o0.view(r, m), o1)
                    n_out = 2 if glu and bwd else 1
                    n_in = (3 if bwd else 2) if glu else (2 if bwd else 1)
                    nbytes = (n_in + n_out) * n * x.element_size()
                    half = nbytes // 2 // 16 * 16
                    copy = lambda: cdst[:half].copy_(csrc[:half])
                    if not glu and not bwd:
                        eager = lambda: act_forward(act, x, o0, t0)
                        args_c = (x,)
                    elif not glu:
                        sv = act_saved(act, x)
                        eager = lambda sv=sv: act_backward(act, o0, x, i1, sv, t0)
                        args_c = (x, i1)
                    elif not bwd:
                        eager = lambda: glu_forward(act, o0, x, i1, t0, t1)
                        args_c = (x, i1)
                    else:
                        a = torch.empty_like(x)
                        act_forward(act, x, a, t0)
                        sv = (a, a if act == "sigmoid" else act_saved(act, x))
                        eager = lambda sv=sv: glu_backward(act, o0, o1, x, i1, i2, sv, t0, t1)
                        args_c = (x, i1, i2)
                    impls = [("torch_eager", eager)] if args.eager else []
                    if args.with_ffn:
                        impls.append(("ffn_inproc", ffn_call(args.with_ffn, act, glu, bwd, x, i1,
                                                             i2, o0, o1)))
                    if args.compile:
                        key = (act, glu, bwd, dname)
                        if args.fused:
                            # Strided halves: one compilation a row, Dynamo's caches cleared
                            # (shared across rows they reached its recompile limit and fell back
                            # to eager code).
                            key += (n,)
                            if key not in args.compiled:
                                torch._dynamo.reset()
                        if key not in args.compiled:
                            args.compiled[key] = compiled_fn(act, glu, bwd)
                        cf = args.compiled[key]
                        impls.append(("torch_compile", lambda cf=cf, a=args_c: cf(*a)))
                    op = GLU_NAMES[act] if glu else act
                    for impl, fn in impls:
                        med, best, cmed, ratio, host, reps = timer.row(fn, copy, args.reps)
                        row = {"impl": impl, "backend": "cuda", "op": op, "act": act, "glu": glu,
                               "dir": "bwd" if bwd else "fwd", "dtype": dname, "dist": dist, "n": n,
                               "reps": reps, "seconds": med, "min_seconds": best, "bytes": nbytes,
                               "gbps": nbytes / med * 1e-9, "min_gbps": nbytes / best * 1e-9,
                               "copy_gbps": 2 * half / cmed * 1e-9, "copy_seconds": cmed,
                               "ratio": ratio * nbytes / (2 * half), "host_us": host * 1e6,
                               "fused": args.fused, "device": dev, "torch": torch.__version__}
                        rows.append(row)
                        if out:
                            out.write(json.dumps(row) + "\n")
                            out.flush()
                        print(f"{impl:13s} {op:12s} {row['dir']} {dname:4s} {n:10d} "
                              f"{med * 1e6:9.2f} us {row['gbps']:8.1f} GB/s "
                              f"copy {row['copy_gbps']:8.1f}"
                              f" host {host * 1e6:7.1f} us", file=sys.stderr, flush=True)
        del bufs, tmp, csrc, cdst
        torch.cuda.empty_cache()
    return rows


# --- the comparison table -------------------------------------------------------------------------
def table(ffn_rows, torch_rows):
    key = lambda r: (r["op"], r["dir"], r["dtype"], r.get("dist", "normal"), int(r["n"]),
                     int(r.get("fused") or 0))
    ffn = {key(r): r for r in ffn_rows if not r.get("header")}
    tor = {}
    for r in torch_rows:
        tor.setdefault(key(r), {})[r["impl"]] = r
    keys = sorted(set(ffn) | set(tor), key=lambda k: (k[2], k[4], k[0], k[1], k[3]))
    print("\nffn (CUDA) vs PyTorch eager vs torch.compile: GPU time by CUDA events, L2 evicted "
          "before each call; GB/s over the minimum bytes; copy = a device-to-device copy of as "
          "many bytes, same run (ffn's)")
    hdr = (f"{'op':12s} {'dir':3s} {'dtype':5s} {'n':>10s} | {'ffn us':>8s} {'eager us':>9s} "
           f"{'compile us':>10s} | {'ffn GB/s':>8s} {'eager':>7s} {'compile':>7s} {'copy':>7s} | "
           f"{'ffn/copy':>8s} {'vs best':>7s}")
    print(hdr)
    print("-" * len(hdr))
    worst = None
    for k in keys:
        f = ffn.get(k)
        t = tor.get(k, {})
        e, c = t.get("torch_eager"), t.get("torch_compile")
        us = lambda r: f"{r['seconds'] * 1e6:8.2f}" if r else f"{'-':>8s}"
        gb = lambda r, w: f"{r['gbps']:{w}.0f}" if r else f"{'-':>{w}s}"
        copy = f["copy_gbps"] if f else (e or c or {}).get("copy_gbps")
        best_t = min([r["seconds"] for r in (e, c) if r] or [float("nan")])
        speed = best_t / f["seconds"] if f and best_t == best_t else float("nan")
        if f and speed == speed and (worst is None or speed < worst[0]):
            worst = (speed, k)
        ratio = f"{f['ratio']:8.3f}" if f else f"{'-':>8s}"
        speed_s = f"{speed:6.2f}x" if speed == speed else f"{'-':>7s}"
        print(f"{k[0]:12s} {k[1]:3s} {k[2]:5s} {k[4]:10d}{'*' if k[5] else ' '}| {us(f)} {us(e):>9s} {us(c):>10s} | "
              f"{gb(f, 8)} {gb(e, 7)} {gb(c, 7)} {copy or 0:7.0f} | {ratio} {speed_s}")
    if any(k[5] for k in keys):
        print("* gate and up: the halves of one [n/M, 2M] tensor (--fused M)")
    if worst:
        print(f"\nslowest against the better PyTorch variant: {worst[1][0]} {worst[1][1]} "
              f"{worst[1][2]} n={worst[1][4]}: {worst[0]:.2f}x")
    head, rows = inproc_lines(tor)
    if head:
        print("\n" + head)
        print("\n".join(rows))


def inproc_lines(tor):
    """The rows timed with ffn in the same process (--with-ffn): a heading, and those where a
    PyTorch variant took less time than ffn, rep for rep in the same timer. tor: {key: {impl:
    row}}, key (op, dir, dtype, dist, n, fused). (None, []) without such rows. Also read by
    scripts/gpu-summary.py."""
    both = {k: t for k, t in tor.items() if "ffn_inproc" in t and len(t) > 1}
    if not both:
        return None, []
    slower = []
    for k, t in sorted(both.items(), key=lambda kt: (kt[0][2], kt[0][4], kt[0][0], kt[0][1])):
        f = t["ffn_inproc"]
        for impl, r in sorted(t.items()):
            if impl != "ffn_inproc" and r["seconds"] < f["seconds"]:
                slower.append(f"  {k[0]} {k[1]} {k[2]} n={k[4]}: ffn {f['seconds'] * 1e6:.2f} us, "
                              f"{impl[6:]} {r['seconds'] * 1e6:.2f} us "
                              f"({f['seconds'] / r['seconds']:.3f}x)")
    return (f"same process, same timer (ffn through its Python package): ffn slower than a "
            f"PyTorch variant on {len(slower)} of {len(both)} rows"), slower


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", action="append",
                   help="activation or gated name; repeatable (default all)")
    p.add_argument("--dir", default="all", choices=["fwd", "bwd", "all"])
    p.add_argument("--dtype", action="append", choices=list(DTYPES),
                   help="repeatable (default all)")
    p.add_argument("--n", default=None, help="N[,N...] (default 1572864,16777216,117440512)")
    p.add_argument("--dist", default="normal", choices=["normal", "wide", "all"])
    p.add_argument("--reps", type=int, default=0)
    p.add_argument("--fused", type=int, default=0, metavar="M",
                   help="gated ops only: gate and up the halves of one [n/M, 2M] tensor")
    p.add_argument("--no-compile", dest="compile", action="store_false")
    p.add_argument("--no-eager", dest="eager", action="store_false")
    p.add_argument("--with-ffn", action="store_true",
                   help="ffn through its Python package as a third implementation, same process")
    p.add_argument("--ffn-json", help="ffn's rows (`ffn bench act --backend cuda --json`)")
    p.add_argument("--ffn", help="run this ffn binary for its rows, with the same selection")
    p.add_argument("--json-out", help="write (append) the torch rows here as JSON lines")
    p.add_argument("--table-only", action="store_true", help="only the table of --ffn-json and "
                   "--torch-json")
    p.add_argument("--torch-json", help="torch rows from an earlier run (with --table-only)")
    a = p.parse_args(argv)
    a.ns = [int(v) for v in a.n.split(",")] if a.n else DEFAULT_NS
    a.dtypes = a.dtype or list(DTYPES)
    a.dists = ["normal", "wide"] if a.dist == "all" else [a.dist]
    dirs = [False, True] if a.dir == "all" else [a.dir == "bwd"]
    a.cases = []
    for name in a.op or [n for act in ACTS for n in (act, GLU_NAMES[act])]:
        if name in ACTS:
            a.cases += [(False, name, b) for b in dirs]
        elif name in GLU_NAMES.values():
            act = next(k for k, v in GLU_NAMES.items() if v == name)
            a.cases += [(True, act, b) for b in dirs]
        else:
            p.error(f"unknown op {name}")
    if a.fused:
        if a.fused < 1 or any(n % a.fused for n in a.ns):
            p.error(f"--fused {a.fused}: every n must be a multiple of it")
        a.cases = [c for c in a.cases if c[0]]
    a.compiled = {}
    if a.with_ffn:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                                        "python"))
        import ffn
        a.with_ffn = ffn
    return a


def main(argv):
    if argv[:1] == ["--blocks"]:  # the FFN blocks: bench/torch_cuda_block.py, same timing
        import torch_cuda_block
        return torch_cuda_block.main(argv[1:])
    a = parse(argv)
    ffn_rows = []
    if a.ffn_json:
        ffn_rows = json_rows(a.ffn_json)
    elif a.ffn:
        cmd = [a.ffn, "bench", "act", "--backend", "cuda", "--json",
               "--n", ",".join(map(str, a.ns)), "--dist", a.dist, "--dir", a.dir]
        for d in a.dtypes:
            cmd += ["--dtype", d]
        for o in a.op or []:
            cmd += ["--op", o]
        if a.fused:
            cmd += ["--fused", str(a.fused)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        ffn_rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    if a.table_only:
        torch_rows = json_rows(a.torch_json)
    else:
        if torch is None or not torch.cuda.is_available():
            print("torch_cuda.py: no CUDA device for PyTorch", file=sys.stderr)
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
