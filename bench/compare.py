#!/usr/bin/python3
"""compare.py — merges `ffn bench act --json` and bench/torch_act.py rows into one table and a plot.

Reads JSON lines (files or stdin; header lines, i.e. objects without "op", describe the hosts),
joins rows on (op, dir, dtype, dist, n, threads) and prints, per row, ffn's and PyTorch's GB/s
(minimum bytes) and ratio to their own triad, and the speedup ffn/torch (= torch time / ffn time:
both move the same minimum bytes). Then it checks the target the benchmark exists for: at the
largest n, N(0,1) inputs, every op and direction at >= 90% of triad; beside each row below it,
the share of that row's time budget its arithmetic alone takes (the same kernel in cache, at the
smallest n measured): at 1x or more no overlap with the memory traffic can reach the target.

With --png it writes a gnuplot script and its data next to each other (--plot-dir) and runs
gnuplot: GB/s against n (log-log), one small panel per op and form, threads in rows, ffn and
PyTorch forward/backward with the triad line. Only the standard library is used.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

ACTS = ["gelu_tanh", "gelu_erf", "silu", "relu", "sigmoid", "identity", "quick_gelu"]
GLU_NAMES = {"gelu_tanh": "geglu_tanh", "gelu_erf": "geglu_erf", "silu": "swiglu",
             "relu": "reglu", "sigmoid": "glu", "identity": "bilinear",
             "quick_gelu": "quick_geglu"}
OP_ORDER = {op: i for i, op in enumerate(ACTS + [GLU_NAMES[a] for a in ACTS])}
TARGET_RATIO = 0.90   # every op/direction at the largest n, typical inputs: >= 90% of triad
N_LABELS = {16384: "16K", 512 * 3072: "1.5M", 32 << 20: "32M"}


def read_rows(paths):
    rows, headers = [], []
    streams = [open(p) for p in paths] if paths else [sys.stdin]
    for f in streams:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"compare.py: {getattr(f, 'name', '?')}:{lineno}: not JSON ({e})",
                      file=sys.stderr)
                continue
            (rows if "op" in obj else headers).append(obj)
        if f is not sys.stdin:
            f.close()
    return rows, headers


def key(r):
    return (r["op"], r["dir"], r["dtype"], r.get("dist", "normal"), int(r["n"]),
            int(r["threads"]))


def sort_key(k):
    op, d, dtype, dist, n, t = k
    return (dtype, dist, t, n, OP_ORDER.get(op, 99), op, 0 if d == "fwd" else 1)


def merge(rows):
    """{key: {impl: row}}; a repeated (key, impl) keeps the last row."""
    table = {}
    for r in rows:
        table.setdefault(key(r), {})[r.get("impl", "ffn")] = r
    return table


def fmt(v, spec):
    return format(v, spec) if v is not None else "-".rjust(len(format(0.0, spec)))


def print_table(table, out):
    print(f"{'op':<12} {'dir':<3} {'dtype':<5} {'dist':<6} {'n':>9} {'T':>2} | "
          f"{'ffn GB/s':>8} {'ratio':>5} | {'torch GB/s':>10} {'ratio':>5} | {'ffn/torch':>9} "
          f"{'kernel':<7}", file=out)
    prev_group = None
    for k in sorted(table, key=sort_key):
        op, d, dtype, dist, n, t = k
        group = (dtype, dist, t, n)
        if prev_group is not None and group != prev_group:
            print(file=out)
        prev_group = group
        f, p = table[k].get("ffn"), table[k].get("torch")
        speed = p["seconds"] / f["seconds"] if f and p else None
        print(f"{op:<12} {d:<3} {dtype:<5} {dist:<6} {n:>9} {t:>2} | "
              f"{fmt(f and f['gbps'], '8.2f')} {fmt(f and f['ratio'], '5.2f')} | "
              f"{fmt(p and p['gbps'], '10.2f')} {fmt(p and p['ratio'], '5.2f')} | "
              f"{fmt(speed, '9.2f')} {(f or {}).get('kernel_isa', '')}", file=out)


def floor_share(table, k):
    """How much of a row's time budget its arithmetic alone takes: the same op's time per element
    at the smallest n measured (in cache, one thread; divided by the row's thread count) over the
    time per element at TARGET_RATIO of the row's triad. At >= 1 no overlap of memory and compute
    can reach the target: the kernel is bound by its arithmetic. None without an in-cache row."""
    op, d, dtype, dist, n, t = k
    small = [c for c in table if c[:4] == (op, d, dtype, dist) and c[5] == 1 and c[4] < n
             and "ffn" in table[c]]
    big = table[k]["ffn"]
    if not small or not big.get("bytes") or not big.get("triad_gbps"):
        return None
    c = min(small, key=lambda c: c[4])
    arith = table[c]["ffn"]["seconds"] / c[4] / t
    budget = big["bytes"] / n / (TARGET_RATIO * big["triad_gbps"] * 1e9)
    return arith / budget


def print_targets(table, out):
    """At the largest n measured, N(0,1) inputs: every ffn row's ratio >= TARGET_RATIO."""
    ffn_keys = [k for k, v in table.items() if "ffn" in v and k[3] == "normal"]
    if not ffn_keys:
        return
    big = max(k[4] for k in ffn_keys)
    print(f"\n# target: at n = {big}, N(0,1) inputs, every op/direction >= "
          f"{TARGET_RATIO:.0%} of triad", file=out)
    for dtype in sorted({k[2] for k in ffn_keys}):
        for t in sorted({k[5] for k in ffn_keys}):
            ks = [k for k in ffn_keys if k[4] == big and k[2] == dtype and k[5] == t]
            if not ks:
                continue
            ratios = {k: table[k]["ffn"]["ratio"] for k in ks}
            low = sorted((k for k in ks if ratios[k] < TARGET_RATIO), key=lambda k: ratios[k])
            gm = statistics.geometric_mean(ratios.values())
            verdict = "PASS" if not low else f"FAIL ({len(low)}/{len(ks)} below)"
            print(f"{dtype:<5} T={t}: {verdict}; ratio min {min(ratios.values()):.2f}, "
                  f"geomean {gm:.2f}", file=out)
            for k in low:
                fl = floor_share(table, k)
                why = (f"  (arithmetic in cache: {fl:.2f}x the time {TARGET_RATIO:.0%} of triad allows"
                       f"{', bound by it' if fl >= 1 else ''})") if fl is not None else ""
                print(f"    {k[0]:<12} {k[1]}: {ratios[k]:.2f}{why}", file=out)
    # And the speedups over PyTorch at the same size, for the record.
    both = [k for k in ffn_keys if k[4] == big and "torch" in table[k]]
    if both:
        sp = [table[k]["torch"]["seconds"] / table[k]["ffn"]["seconds"] for k in both]
        gm = statistics.geometric_mean(sp)
        print(f"# ffn/torch speedup at n = {big}, N(0,1): geomean {gm:.2f}, min {min(sp):.2f}, "
              f"max {max(sp):.2f} over {len(sp)} rows", file=out)


# --- plot ----------------------------------------------------------------------------------------
STYLES = {  # (impl, dir): gnuplot line style
    ("ffn", "fwd"): 'lw 2.5 lc rgb "#1f5fbf" dt 1 pt 7 ps 0.8',
    ("ffn", "bwd"): 'lw 2.5 lc rgb "#1f5fbf" dt 2 pt 5 ps 0.8',
    ("torch", "fwd"): 'lw 2 lc rgb "#d2452d" dt 1 pt 7 ps 0.7',
    ("torch", "bwd"): 'lw 2 lc rgb "#d2452d" dt 2 pt 5 ps 0.7',
}
TRIAD_STYLE = 'lw 5 lc rgb "#a0a0a0" dt 1 pt 7 ps 1.2'
LABELS = {("ffn", "fwd"): "ffn fwd", ("ffn", "bwd"): "ffn bwd",
          ("torch", "fwd"): "PyTorch fwd", ("torch", "bwd"): "PyTorch bwd"}


def write_plot(table, headers, png, plot_dir, dtype, dist):
    """Writes <plot_dir>/bench-act.{dat,gp} and runs gnuplot to draw `png`."""
    sel = {k: v for k, v in table.items() if k[2] == dtype and k[3] == dist}
    if not sel:
        print(f"compare.py: no rows for dtype {dtype}, dist {dist}: no plot", file=sys.stderr)
        return False
    threads = sorted({k[5] for k in sel})
    ops = [a for a in ACTS if any(k[0] == a for k in sel)] + \
          [GLU_NAMES[a] for a in ACTS if any(k[0] == GLU_NAMES[a] for k in sel)]
    ns = sorted({k[4] for k in sel})
    os.makedirs(plot_dir, exist_ok=True)
    dat = os.path.join(plot_dir, "bench-act.dat")
    gp = os.path.join(plot_dir, "bench-act.gp")

    # Data: one gnuplot index block per (threads, op, impl, dir) and per (threads) for the triad.
    blocks, idx = [], {}
    for t in threads:
        tri = []
        for n in ns:  # the triad line: ffn's in-process triad (else torch's), median over rows
            vals = [v[impl]["triad_gbps"] for k, v in sel.items() if k[4] == n and k[5] == t
                    for impl in ("ffn",) if impl in v]
            vals = vals or [v["torch"]["triad_gbps"] for k, v in sel.items()
                            if k[4] == n and k[5] == t and "torch" in v]
            if vals:
                tri.append((n, statistics.median(vals)))
        idx[("triad", t)] = len(blocks)
        blocks.append((f"triad T={t}", tri))
        for op in ops:
            for impl in ("ffn", "torch"):
                for d in ("fwd", "bwd"):
                    pts = [(k[4], v[impl]["gbps"])
                           for k, v in sorted(sel.items(), key=lambda kv: kv[0][4])
                           if k[0] == op and k[1] == d and k[5] == t and impl in v]
                    if pts:
                        idx[(t, op, impl, d)] = len(blocks)
                        blocks.append((f"{op} {impl} {d} T={t}", pts))
    with open(dat, "w") as f:
        for name, pts in blocks:
            f.write(f"# {name}\n")
            for n, g in pts:
                f.write(f"{n} {g:.4f}\n")
            f.write("\n\n")

    allg = [g for _, pts in blocks for _, g in pts if g > 0]
    ymin, ymax = min(allg), max(allg)
    ylo = 10 ** math.floor(math.log10(ymin * 0.8))
    yhi = 10 ** (math.floor(math.log10(ymax * 1.25)) + 1)

    ffn_h = next((h for h in headers if h.get("impl") == "ffn"), {})
    torch_h = next((h for h in headers if h.get("impl") == "torch"), {})
    cpu = ffn_h.get("cpu") or torch_h.get("cpu") or "unknown CPU"
    kern = ", ".join(f"{isa} {c}" for isa, c in ffn_h.get("kernels", {}).items())
    xdist = "N(0,1)" if dist == "normal" else "U[-20,20]"
    title = (f"GB/s (minimum bytes) vs n, {dtype}, x ~ {xdist}"
             f" - {cpu}; ffn kernels: {kern or '?'}"
             + (f"; PyTorch {torch_h.get('torch', '')} ({torch_h.get('isa', '?')})"
                if torch_h else ""))

    # Panels: one row per (threads, form), one column per activation.
    forms = [f for f in ("unary", "glu")
             if any((op in ACTS) == (f == "unary") for op in ops)]
    acts = [a for a in ACTS if a in ops or GLU_NAMES[a] in ops]
    cols, rows = len(acts), len(threads) * len(forms)
    pw, ph, top, left = 300, 230, 60, 20
    width = max(cols * pw + left + 10, 1100)  # at least room for the title and the legend
    legend_rows = -(-5 // max(1, width // 340))  # 5 legend entries of ~340 px
    bottom = 40 + 25 * legend_rows
    height = rows * ph + top + bottom
    xt = ", ".join(f'"{N_LABELS.get(n, _short(n))}" {n}' for n in ns)
    lines = [
        "# Generated by bench/compare.py from the ffn and PyTorch JSON rows - do not edit.",
        f'set terminal pngcairo size {width},{height} font "DejaVu Sans,10" noenhanced',
        f'set output "{png}"',
        "set logscale xy",
        f"set xrange [{ns[0] / 2.5}:{ns[-1] * 2.5}]",
        f"set yrange [{ylo}:{yhi}]",
        f"set xtics ({xt}) nomirror font ',9'",
        "set ytics nomirror font ',9'",
        "set grid xtics ytics lc rgb '#dddddd'",
        "unset key",
        "set lmargin 6", "set rmargin 1.5", "set tmargin 1.6", "set bmargin 1.6",
        "set multiplot",
        f"set label 1 \"{_esc(title)}\" at screen 0.5, screen {1 - 22 / height:.4f} center "
        "font ',13'",
    ]
    r = 0
    for t in threads:
        for form in forms:
            y0 = (bottom + (rows - 1 - r) * ph) / height
            for c, act in enumerate(acts):
                op = act if form == "unary" else GLU_NAMES[act]
                x0 = (left + c * pw) / width
                lines.append(f"set origin {x0:.4f},{y0:.4f}")
                lines.append(f"set size {pw / width:.4f},{ph / height:.4f}")
                lines.append(f'set title "{op}, {t} thread{"s" if t > 1 else ""}" font ",11" '
                             "offset 0,-0.4")
                lines.append("set format y '%g'")
                parts = []
                if ("triad", t) in idx:
                    parts.append(f"'{dat}' index {idx[('triad', t)]} using 1:2 with "
                                 f"linespoints {TRIAD_STYLE}")
                for impl in ("torch", "ffn"):
                    for d in ("fwd", "bwd"):
                        if (t, op, impl, d) in idx:
                            parts.append(f"'{dat}' index {idx[(t, op, impl, d)]} using 1:2 "
                                         f"with linespoints {STYLES[(impl, d)]}")
                if not parts:
                    parts.append("NaN notitle")
                lines.append("plot " + ", \\\n     ".join(parts))
                if r == 0 and c == 0:
                    lines.append("unset label 1")
            r += 1
    # Legend: a strip of dummy plots along the bottom.
    lines += [
        "set origin 0,0", f"set size 1,{(bottom - 10) / height:.4f}",
        "unset title", "unset logscale", "unset border", "unset tics", "unset grid",
        "set xrange [0:1]", "set yrange [0:1]",
        f"set key horizontal maxcols {max(1, width // 340)} center center samplen 5 width 1 "
        "font ',11'",
        "plot " + ", ".join(
            [f"2 title 'triad a = b + q*c (same n, threads)' with linespoints {TRIAD_STYLE}"] +
            [f"2 title '{LABELS[s]}' with linespoints {STYLES[s]}" for s in STYLES]),
        "unset multiplot",
    ]
    with open(gp, "w") as f:
        f.write("\n".join(lines) + "\n")
    try:
        subprocess.run(["gnuplot", gp], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"compare.py: gnuplot failed ({e}); script left at {gp}", file=sys.stderr)
        return False
    return True


def _short(n):
    """Axis label for a size not in N_LABELS: 3 significant digits, decimal K/M."""
    for div, suf in ((1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.3g}{suf}"
    return str(n)


def _esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="*", help="JSON-lines files (default: stdin)")
    p.add_argument("--png", help="draw the plot into this PNG (needs gnuplot)")
    p.add_argument("--plot-dir", default="bench/results", help="where the .gp and .dat go")
    p.add_argument("--plot-dtype", default="f32")
    p.add_argument("--plot-dist", default="normal")
    p.add_argument("--no-table", action="store_true")
    a = p.parse_args(argv)
    rows, headers = read_rows(a.files)
    if not rows:
        print("compare.py: no benchmark rows", file=sys.stderr)
        return 1
    table = merge(rows)
    for h in headers:
        print("# " + ", ".join(f"{k}={v}" for k, v in h.items() if k not in ("header", "bench")))
    if not a.no_table:
        print_table(table, sys.stdout)
    print_targets(table, sys.stdout)
    if a.png and not write_plot(table, headers, os.path.abspath(a.png),
                                os.path.abspath(a.plot_dir), a.plot_dtype, a.plot_dist):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
