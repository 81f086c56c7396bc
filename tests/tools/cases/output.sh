# Class 7 — outputs are written only to a regular file (replaced, keeping its permission bits) or
# to a new name; a directory, FIFO or device is refused and left as it was. A symbolic link is
# followed, as cp does: the regular file it points to is replaced and the link kept; a dangling
# link or a link to anything else is refused. The real /dev nodes are never given as outputs:
# device cases use a node made in the work folder (mknod, as root).
L=$DATA/hf/llama
IN=$L/io.safetensors
t 0 "y written to $W/new.safetensors" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/new.safetensors"
p "a new regular file" -- test -f "$W/new.safetensors"
echo old >"$W/old.safetensors"
chmod 640 "$W/old.safetensors"
t 0 "y written to" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/old.safetensors"
p "the file was replaced" -- bash -c '! grep -qx old "$1"' _ "$W/old.safetensors"
p "it keeps its permission bits" -- bash -c '[ "$(stat -c %a "$1")" = 640 ]' _ "$W/old.safetensors"
mkdir "$W/adir"
t 2 "adir: is a directory; outputs are written only to regular files or new names" oneline -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/adir"
mkfifo "$W/out.fifo"
t 2 "out.fifo: is a FIFO (named pipe); outputs are written only" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/out.fifo"
p "the FIFO is still a FIFO" -- test -p "$W/out.fifo"
ln -s out.fifo "$W/to_fifo"
t 2 "a symbolic link to a FIFO (named pipe)" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/to_fifo"
p "the link is kept" -- test -L "$W/to_fifo"
p "the FIFO is still a FIFO" -- test -p "$W/out.fifo"
ln -s adir "$W/to_dir"
t 2 "a symbolic link to a directory" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/to_dir"
if [ "$ROOT" = 1 ]; then
    mknod "$W/null" c 1 3
    t 2 "null: is a character device; outputs are written only" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/null"
    p "the device node is still a device node" -- test -c "$W/null"
    ln -s null "$W/to_null"
    t 2 "a symbolic link to a character device" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/to_null"
    p "the link is kept" -- test -L "$W/to_null"
    p "the device node is still a device node" -- test -c "$W/null"
else
    skip "device nodes as outputs: mknod needs root"
fi
echo target >"$W/target.safetensors"
ln -s target.safetensors "$W/link.safetensors"
t 0 "y written to" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/link.safetensors"
p "the link is kept" -- test -L "$W/link.safetensors"
p "the file it points to now holds y" -- "$FFN" verify "$L" "$IN" --layer 1
p "the file it points to was replaced" -- bash -c '! grep -qx target "$1"' _ "$W/target.safetensors"
ln -s missing.safetensors "$W/dangling.safetensors"
t 2 "a symbolic link to a missing file; not written through a dangling link" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/dangling.safetensors"
p "nothing was created through the link" -- test ! -e "$W/missing.safetensors"
t 2 "cannot create: its directory does not exist" -- "$FFN" run "$L" --layer 1 --input "$IN" --output "$W/nope/y.safetensors"
p "no temporary file is left" -- bash -c '! ls -a "$1" | grep -q "\.tmp"' _ "$W"
# ffn bench block divides each row's GFLOP/s by the CPU's arithmetic peak for its dtype, measured
# with the multiply-add instruction the GEMM library runs for that dtype. oneDNN names the kernel
# it chose for the GEMMs alone (gemm_impl): AMX, AVX512-BF16 or AVX-512, the witness of the
# instruction the peak must have been measured with; the peak is a positive rate.
t 0 '"peak_instr"' stdout -- "$FFN" bench block --json --quick --shape gpt2-small --tokens 16 --threads 1 --reps 1
p "each row's peak is measured with the instruction of oneDNN's kernel" -- python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
blk = [r for r in rows if "shape" in r]
assert len(blk) == 4 and all(r["peak_gflops"] > 0 and r["to_peak"] > 0 for r in blk)
for r in blk:
    g = r["gemm_impl"]
    want = ("tdpbf16ps" if "amx" in g else "vdpbf16ps zmm" if "bf16" in g else
            "vfmadd231ps zmm" if "avx512" in g else "vfmadd231ps ymm")
    assert r["peak_instr"] == want, (r["dtype"], g, r["peak_instr"])
assert {(m["peak_threads"], m["dtype"]) for m in rows if "peak_gflops" in m and "shape" not in m} \
    == {(1, "f32"), (1, "bf16")}
' "$W/.out"
# Rows at <= 16 tokens rotate over copies of the weights that span 4x the last-level cache (at
# least 2; at most 4 GiB with their gradients), so each call reads its weights from memory; rows
# from 256 tokens use one set. --pages is carried into every row.
t 0 '"copies"' stdout -- "$FFN" bench block --json --quick --shape gpt2-small --dtype bf16 --tokens 1 --threads 1 --reps 1 --pages huge
p "a cold row's copies span 4x the last-level cache, on the pages asked for" -- python3 -c '
import glob, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
blk = [r for r in rows if "shape" in r]
# the highest cache level cpu0 reports (one instance), else 64 MiB
caches = []
for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
    try:
        lv, sz = open(d + "/level").read().strip(), open(d + "/size").read().strip()
        caches.append((int(lv), int(sz.rstrip("KM")) << {"K": 10, "M": 20}.get(sz[-1], 0)))
    except (OSError, ValueError):
        pass
llc = max(caches)[1] if caches else 64 << 20
assert len(blk) == 2, blk
for r in blk:
    n, wb = r["copies"], r["weight_bytes"]
    assert r["pages"] == "huge" and wb == (2 * 768 * 3072 + 3072 + 768) * 2, r  # with biases
    assert n >= 2 and (n * wb >= 4 * llc or 2 * n * wb > (4 << 30) - 2 * wb), (n, wb, llc)
' "$W/.out"
# --pack: every row is of a block with opts.pack_weights (and of GEMMs alone on packed weights).
t 0 '"packed":true' stdout -- "$FFN" bench block --json --quick --pack --shape gpt2-small --dtype bf16 --tokens 16 --threads 1 --reps 1
p "every --pack row says so" -- python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{\"shape\"")]
assert len(rows) == 2 and all(r["packed"] is True for r in rows), rows
' "$W/.out"
