#!/usr/bin/env python3
"""gpu-summary.py OUT — the summary of a GPU run (scripts/gpu-run.sh, copied into the bundle as
summary.py): step results, the ulp table of the exhaustive sweeps, ffn's bandwidth against the
same-run device copy, and ffn against PyTorch eager and torch.compile. Prints a compact version
(what fits the tail of a remote run's output) and writes everything to OUT/summary.txt.
"""
import json
import os
import sys


def inproc_lines(tin):
    """bench/torch_cuda.py's list of the same-process rows (beside this file in a bundle, in
    bench/ one level up in the repository)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for d in (os.path.join(here, "bench"), os.path.join(here, os.pardir, "bench")):
        if os.path.exists(os.path.join(d, "torch_cuda.py")):
            sys.path.insert(0, d)
            break
    from torch_cuda import inproc_lines as lines
    return lines(tin)


def read_jsonl(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    return rows


def main(out):
    compact, full = [], []

    def both(line=""):
        compact.append(line)
        full.append(line)

    # --- steps ---------------------------------------------------------------------------------
    steps, machine = [], []
    if os.path.exists(f"{out}/run.log"):
        for line in open(f"{out}/run.log"):
            p = line.rstrip("\n").split("\t")
            if p[0] == "step" and len(p) == 5:
                steps.append(p[1:])
            elif line.startswith(("gpu:", "torch:", "date:")):
                machine.append(line.rstrip())
    both("=" * 100)
    both("SUMMARY of the ffn CUDA run")
    for m in machine:
        both("  " + m)
    both("steps: " + "  ".join(f"{n} {s}({t}s)" for n, s, rc, t in steps))
    bad = [n for n, s, rc, t in steps if s not in ("pass", "skip")]
    if os.path.exists(f"{out}/tests.log"):
        fails = [l.rstrip() for l in open(f"{out}/tests.log", errors="replace")
                 if "FAIL" in l or "differs" in l][:12]
        if fails:
            both("test failures (first lines of tests.log):")
            for l in fails:
                both("  " + l[:160])

    # --- ulp --------------------------------------------------------------------------------------
    ulp = read_jsonl(f"{out}/ulp.jsonl")
    if ulp:
        rows = {}
        for r in ulp:
            k = (r["op"], r["dir"], r["out"], "high" if r.get("accurate") else "def")
            rows.setdefault(k, {})[r["dtype"]] = r
        both("")
        both("ulp (GPU sweep; f32: all 2^32 inputs when 'all', bf16/f16: all 65,536; max ulp, "
             "MPFR-confirmed)")
        hdr = (f"{'op':12s} {'dir':3s} {'out':5s} {'tier':4s} | {'f32':>8s} {'bf16':>6s} "
               f"{'f16':>6s} | {'bound':>5s} ok")
        both(hdr)
        n_fail = 0
        for k in sorted(rows):
            d = rows[k]
            ok = all(r["pass"] for r in d.values())
            n_fail += not ok
            f = lambda t: f"{d[t]['max_ulp']:{8 if t == 'f32' else 6}.3f}" if t in d and isinstance(
                d[t]["max_ulp"], (int, float)) else f"{'-':>{8 if t == 'f32' else 6}s}"
            bound = next(iter(d.values()))["bound"]
            both(f"{k[0]:12s} {k[1]:3s} {k[2]:5s} {k[3]:4s} | {f('f32')} {f('bf16')} {f('f16')} | "
                 f"{bound:5g} {'ok' if ok else 'FAIL'}")
        n32 = max((r["n_inputs"] for r in ulp if r["dtype"] == "f32"), default=0)
        both(f"ulp: {len(rows)} rows, {n_fail} above their bound; f32 inputs per row: {n32}")

    # --- bench ------------------------------------------------------------------------------------
    allffn = [r for r in read_jsonl(f"{out}/bench-ffn.jsonl") if not r.get("header")]
    fused = [r for r in allffn if r.get("fused")]  # gate and up: halves of a fused buffer
    allffn = [r for r in allffn if not r.get("fused")]
    ffn = [r for r in allffn if r.get("flush", True)]
    warm = [r for r in allffn if not r.get("flush", True)]
    tor = read_jsonl(f"{out}/bench-torch.jsonl")
    key = lambda r: (r["op"], r["dir"], r["dtype"], r.get("dist", "normal"), int(r["n"]),
                     int(r.get("fused") or 0))
    tmap, tin = {}, {}
    for r in tor:
        tmap.setdefault(key(r), {})[r["impl"]] = r
    # ffn timed in PyTorch's process beside PyTorch eager (torch_cuda.py --with-ffn).
    for r in read_jsonl(f"{out}/bench-torch-inproc.jsonl"):
        tin.setdefault(key(r), {})[r["impl"]] = r
    fdef = [r for r in ffn if r.get("accuracy", "default") == "default"]
    if fdef:
        big = max(r["n"] for r in fdef)
        both("")
        both(f"bandwidth at n = {big} (8192 x 14336 when default): ffn GB/s and ratio to the "
             "same-run device copy; torch = the better of eager / compile (GB/s)")
        hdr = (f"{'op':12s} {'dir':3s} | " + " | ".join(
            f"{t:>4s}: {'ffn':>6s} {'ratio':>5s} {'torch':>6s}" for t in ("f32", "bf16", "f16")))
        both(hdr)
        ops = sorted({(r["op"], r["dir"]) for r in fdef if r["n"] == big})
        below = []
        for op, d in ops:
            cells = []
            for t in ("f32", "bf16", "f16"):
                r = next((x for x in fdef
                          if (x["op"], x["dir"], x["dtype"], x["n"]) == (op, d, t, big)), None)
                tt = tmap.get((op, d, t, "normal", big, 0), {})
                tb = max((x["gbps"] for x in tt.values()), default=None)
                if r:
                    if r["ratio"] < 0.95:
                        below.append(f"{op} {d} {t} {r['ratio']:.3f}")
                    cells.append(f"{t:>4s}: {r['gbps']:6.0f} {r['ratio']:5.3f} "
                                 + (f"{tb:6.0f}" if tb else f"{'-':>6s}"))
                else:
                    cells.append(f"{t:>4s}: {'-':>6s} {'-':>5s} {'-':>6s}")
            both(f"{op:12s} {d:3s} | " + " | ".join(cells))
        both(f"rows below 0.95 of copy at n={big}: {len(below)}"
             + (": " + "; ".join(below) if below else ""))
        sw = next((r for r in fdef if (r["op"], r["dir"], r["dtype"], r["n"])
                   == ("swiglu", "fwd", "f32", 512 * 3072)), None)
        if sw:
            tt = tmap.get(("swiglu", "fwd", "f32", "normal", 512 * 3072, 0), {})
            tx = ", ".join(f"{k[6:]} {v['seconds'] * 1e6:.2f} us" for k, v in sorted(tt.items()))
            copy_us = sw["bytes"] / sw["copy_gbps"] * 1e-3
            both(f"512x3072 f32 swiglu fwd: ffn {sw['seconds'] * 1e6:.2f} us (target <= 6; the "
                 f"bytes at the copy's rate {copy_us:.2f} us)" + (f"; torch {tx}" if tx else ""))
        sww = next((r for r in warm if (r["op"], r["dir"], r["dtype"], r["n"])
                    == ("swiglu", "fwd", "f32", 512 * 3072)), None)
        if sww:
            both(f"512x3072 f32 swiglu fwd, inputs in L2 (warm): ffn {sww['seconds'] * 1e6:.2f} us"
                 f" (min {sww['min_seconds'] * 1e6:.2f} us), the same-run warm copy of its bytes "
                 f"{sww['bytes'] / sww['copy_gbps'] * 1e-3:.2f} us")
        # ffn against both PyTorch variants, every row they share.
        slower = []
        shared = 0
        for r in fdef:
            tt = tmap.get(key(r), {})
            if not tt:
                continue
            shared += 1
            for impl, x in tt.items():
                if x["seconds"] < r["seconds"]:
                    slower.append(f"{r['op']} {r['dir']} {r['dtype']} n={r['n']}: ffn "
                                  f"{r['seconds'] * 1e6:.1f} us, {impl[6:]} "
                                  f"{x['seconds'] * 1e6:.1f} us")
        both(f"against PyTorch: {shared} rows shared, ffn slower than a torch variant in "
             f"{len(slower)}")
        for s in slower[:10]:
            both("  " + s)
        # ffn timed in PyTorch's process, rep for rep beside it (torch_cuda.py --with-ffn).
        head, sl = inproc_lines(tin) if tin else (None, [])
        if head:
            both(head)
            for i, s in enumerate(sl):
                (both if i < 10 else full.append)(s)
        host = [r["host_us"] for r in fdef if "host_us" in r]
        if host:
            host.sort()
            both(f"ffn host time per call (checks + launch): median {host[len(host) // 2]:.1f} us, "
                 f"max {host[-1]:.1f} us")
        # Full table of every shared row (summary.txt only).
        full.append("")
        full.append("every row: op dir dtype n tier | ffn us, eager us, compile us | ffn GB/s, "
                    "copy GB/s, ratio")
        order = lambda r: (r["dtype"], r["n"], r["op"], r["dir"], r.get("accuracy", ""))
        for r in sorted(ffn, key=order):
            tt = tmap.get(key(r), {})
            e, c = tt.get("torch_eager"), tt.get("torch_compile")
            us = lambda x: f"{x['seconds'] * 1e6:9.2f}" if x else f"{'-':>9s}"
            tier = r.get("accuracy", "default")[:4]
            full.append(f"{r['op']:12s} {r['dir']} {r['dtype']:4s} {r['n']:10d} {tier} | "
                        f"{us(r)} {us(e)} {us(c)} | {r['gbps']:8.1f} {r['copy_gbps']:8.1f} "
                        f"{r['ratio']:6.3f}")
    if fused:
        # The halves of a fused gate_up output; the generic kernel's ratio from the flat group.
        gen = {key(r): r for r in read_jsonl(f"{out}/bench-fused-flat0.jsonl")
               if not r.get("header")}
        both("")
        both("gate and up as the halves of one [n/M, 2M] buffer (--fused M): ffn GB/s, ratio to "
             "the copy, the generic kernel's ratio (same bytes, FFN_CUDA_FLAT=0), PyTorch eager / "
             "compile GB/s")
        for r in sorted(fused, key=lambda r: (r["n"], r["dtype"], r["op"], r["dir"])):
            tt = tmap.get(key(r), {})
            g = gen.get(key(r))
            gb = lambda x: f"{x['gbps']:7.0f}" if x else f"{'-':>7s}"
            both(f"{r['op']:12s} {r['dir']} {r['dtype']:4s} {r['n']:10d} M={r['fused']:<6d} | "
                 f"{r['gbps']:7.0f} {r['ratio']:6.3f} | generic "
                 + (f"{g['ratio']:6.3f}" if g else f"{'-':>6s}")
                 + f" | {gb(tt.get('torch_eager'))} {gb(tt.get('torch_compile'))}")
    if warm:
        full.append("")
        full.append("warm (inputs in L2, no flush): op dir dtype n | ffn us, min us | GB/s, warm "
                    "copy GB/s, ratio")
        for r in sorted(warm, key=lambda r: (r["dtype"], r["n"], r["op"], r["dir"])):
            full.append(f"{r['op']:12s} {r['dir']} {r['dtype']:4s} {r['n']:10d} | "
                        f"{r['seconds'] * 1e6:8.2f} {r['min_seconds'] * 1e6:8.2f} | "
                        f"{r['gbps']:8.1f} {r['copy_gbps']:8.1f} {r['ratio']:6.3f}")
    both("")
    both("steps not passed: " + (", ".join(bad) if bad else "none"))
    with open(f"{out}/summary.txt", "w") as f:
        f.write("\n".join(full) + "\n")
    print("\n".join(compact))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "out"))
