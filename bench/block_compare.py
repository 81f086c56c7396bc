#!/usr/bin/python3
"""block_compare.py - the FFN block table: `ffn bench block --json` rows beside PyTorch's
(bench/torch_block.py), with the targets of issue 15 checked per row.

usage: bench/block_compare.py FFN.jsonl TORCH.jsonl [--md OUT.md]

Per (shape, tokens, dtype, threads, pass), for ffn's AUTO schedule: seconds, GFLOP/s, the ratio to
the same GEMMs alone through oneDNN (same process), the floor (GEMMs + the activation's
elementwise passes alone, over the GEMMs: what no unfused block can beat), PyTorch's seconds in the same dtype and
thread count and ffn's speedup over it, the ceiling of that speedup (PyTorch's seconds over the
GEMMs alone: what a block that took no time beyond its GEMMs would reach), the block's GFLOP/s
over the CPU's arithmetic peak for the dtype on those threads (`peak`: the multiply-add issue rate
`ffn bench block` measures, tools/peak.c) and the speedup over PyTorch a block running at that
peak would reach (`at peak`: no implementation on this CPU can pass it), and at one token the
GB/s of weight bytes against the same-run triad. Targets: ratio to the GEMMs <= 1.05 (forward) / 1.08 (forward + backward); speedup
over PyTorch >= 2 (bf16) / 1.2 (f32) at 256 and 4096 tokens and >= 1.0 at 1 and 16; at one
token in bf16, >= 0.8 of the triad. A speedup target that the `at peak` speedup is below is
marked `(beyond peak)`: on that CPU it is out of reach of any block. A second table sets the TILED schedule beside SEPARATE.
"""
import argparse
import json
import sys

GEMM_TARGET = {"fwd": 1.05, "fwdbwd": 1.08}


def load(path):
    rows, meta = [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            (rows if "shape" in r else meta).append(r)
    return rows, meta


def key(r):
    return (r["shape"], r["tokens"], r.get("dtype", "f32"), r["threads"], r["pass"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ffn")
    ap.add_argument("torch")
    ap.add_argument("--md", help="also write the tables to this file")
    a = ap.parse_args()
    ffn, meta = load(a.ffn)
    torch_rows, _ = load(a.torch)
    tmap = {key(r): r for r in torch_rows}
    auto = [r for r in ffn if r["schedule"] == "separate"]
    tiled = {key(r): r for r in ffn if r["schedule"] == "tiled"}
    out = []
    cpu = ffn[0].get("cpu", "?") if ffn else "?"
    impls = sorted({(r["dtype"], r["impl"]) for r in auto})
    peaks = [m for m in meta if "peak_gflops" in m]
    out.append(f"CPU: {cpu}; oneDNN matmul: " +
               ", ".join(f"{dt} {impl}" for dt, impl in impls) + "; " +
               ", ".join(f"triad {m['triad_threads']} thr {m['triad_gbs']:.1f} GB/s"
                         for m in meta if "triad_gbs" in m) +
               "".join(f"; peak {m['dtype']} {m['peak_threads']} thr {m['peak_gflops']:.0f} GFLOP/s "
                       f"({m['peak_instr']})" for m in peaks) +
               # How the ffn rows held their weights (ffn bench block --pages, --pack).
               "".join(f"; weights on {p} pages" for p in sorted({r.get("pages") for r in auto}
                                                                   - {None})) +
               ("; packed weights (opts.pack_weights; the GEMMs alone packed alike)"
                if any(r.get("packed") for r in auto) else ""))
    out.append("")
    out.append("| shape | tokens | dtype | thr | pass | ffn s | GFLOP/s | x GEMMs alone | floor | peak "
               "| PyTorch s | speedup | ceiling | at peak | weight GB/s (x triad) | targets |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    n_miss = 0
    for r in sorted(auto, key=lambda r: (r["shape"], r["dtype"], r["threads"], r["tokens"], r["pass"])):
        t = tmap.get(key(r))
        sp = t["seconds"] / r["seconds"] if t else None
        cap = t["seconds"] / r["gemm_seconds"] if t else None
        pk = r.get("peak_gflops") or 0
        # PyTorch's seconds over the block's FLOPs at the peak rate.
        at_peak = t["seconds"] * pk / (r["gflops"] * r["seconds"]) if t and pk else None
        miss = []
        if r["ratio_to_gemm"] > GEMM_TARGET[r["pass"]]:
            miss.append("gemm")
        if sp is not None:
            need = (2.0 if r["dtype"] == "bf16" else 1.2) if r["tokens"] >= 256 else 1.0
            if sp < need:
                beyond = at_peak is not None and at_peak < need
                miss.append(f"torch<{need:g}" + (" (beyond peak)" if beyond else ""))
        bw = ""
        if r["tokens"] == 1 and r["pass"] == "fwd":
            bw = f"{r['weight_gbs']:.1f} ({r['weight_to_triad']:.2f})"
            if r["dtype"] == "bf16" and r["weight_to_triad"] < 0.8:
                miss.append("bw")
        n_miss += bool(miss)
        head = (f"| {r['shape']} | {r['tokens']} | {r['dtype']} | {r['threads']} | {r['pass']} "
                f"| {r['seconds']:.5f} | {r['gflops']:.1f} | {r['ratio_to_gemm']:.3f} "
                f"| {r.get('floor_ratio', 0):.3f} | {r.get('to_peak', 0):.2f} ")
        torch_cols = (f"| {t['seconds']:.5f} | {sp:.2f}x | {cap:.2f}x "
                      f"| {f'{at_peak:.2f}x' if at_peak else '-'} " if t else "| - | - | - | - ")
        out.append(head + torch_cols + f"| {bw} | {', '.join(miss) or 'met'} |")
    out.append("")
    out.append(f"{len(auto) - n_miss} of {len(auto)} rows meet every target that applies.")
    if tiled:
        out.append("")
        out.append("TILED against SEPARATE (AUTO), same run:")
        out.append("")
        out.append("| shape | tokens | dtype | thr | pass | separate s | tiled s (rows) | tiled / separate |")
        out.append("|---|---|---|---|---|---|---|---|")
        for r in sorted(auto, key=lambda r: (r["shape"], r["dtype"], r["threads"], r["tokens"], r["pass"])):
            q = tiled.get(key(r))
            if q:
                out.append(f"| {r['shape']} | {r['tokens']} | {r['dtype']} | {r['threads']} | {r['pass']} "
                           f"| {r['seconds']:.5f} | {q['seconds']:.5f} ({q['tile_rows']}) "
                           f"| {q['seconds'] / r['seconds']:.3f} |")
    text = "\n".join(out)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
