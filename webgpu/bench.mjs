// bench.mjs — GPU time of every WGSL kernel in every storage variant, from Node through Dawn, with
// GPU timestamp queries, beside the same run's copy limit (a WGSL copy kernel: read n f32 + write
// n f32). Prints JSON lines with the field names of `ffn bench act --json` (a header, then one
// row per kernel x variant x n x cache state), then a table on stderr. Not a test.
//     node webgpu/bench.mjs [--n 1572864,33554432] [--kernels a,b] [--variants f32,vec4,f16pk,f16]
//                           [--dist normal|wide] [--reps R] [--cache flushed,warm] [--fma auto|0|1]
//                           [--f16cvt auto|0|1] [--adapter NAME] [--out FILE] [--no-f16-toggle]
//                           [--arith 0] [--sweep KERNELS] [--sweep-n N] [--sources DIR --label L]
// Per row: GPU time of one dispatch (median and min over reps, each in its own timed compute
// pass); bytes = each input read once + each output written once (unary: x read and written);
// gbps = bytes / median; triad_gbps = the copy kernel's GB/s at the same n and cache state (the
// role the STREAM triad plays in the CPU rows; the better of a copy before and one after the
// kernels); ratio = gbps / triad_gbps. cache "flushed": a 256 MiB buffer is cleared between reps,
// so inputs come from memory; "warm": the previous rep left them in the L2 cache (as a preceding
// GEMM would at n = 512 x 3072); "arith": the same kernels at the largest n with every load from
// 2048 units (L1-resident) and every store behind a test the results never pass (no memory
// traffic, the same arithmetic and lanes), the time the kernel's arithmetic and instruction issue
// take; arith_share = that time over the copy limit's time for the kernel's bytes at that n: above
// 0.9 the kernel cannot reach 90 % of the copy limit. The "floor" row times a pass with one
// workgroup of the copy kernel (n = 1): the fixed cost in every row's time. Before any row, --warmup
// S seconds (default 2) of copies bring the GPU's clocks up from idle. --sweep KERNELS (default swiglu_combine): at n <= --sweep-n
// (default 2^22) also time grids of 2x and 4x the host's units per thread (the kernels take any
// grid). --sources DIR times the .wgsl files in DIR instead (rows get label L).
import fs from 'node:fs';
import { FfnWebGPU, KERNELS, KINDS, VARIANTS, bufferSize, dispatchGrid, loadWgslSources } from './ffn-webgpu.js';
import { requestNodeDevice, adapterSummary } from './ffn-webgpu-node.mjs';

function arg(name, def) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}
const tri = (v) => (v === 'auto' ? 'auto' : v === '1' || v === 'true');
const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80, QUERY_RESOLVE: 0x200 };

// Op names as the CPU benchmark writes them (ffn_act_name / ffn_glu_name).
const GLU_OP = { silu: 'swiglu', gelu_tanh: 'geglu_tanh', gelu_erf: 'geglu_erf', relu: 'reglu' };

// The copy limit: the kernels' own access pattern (4 f32 or 2 vec4 per thread, grid-stride), read
// one buffer, write another. The best of the two is the row's copy limit.
const COPY_WGSL = `
struct P { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(0) var<storage, read> src4: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst4: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn copy_f32(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let nu = p.n;
    let st = min(nwg.x * 256u * nwg.y, nu);
    var u0 = gid.x + gid.y * (nwg.x * 256u);
    while (u0 < nu) {
        let i1 = u0 + st; let i2 = min(i1, nu) + st; let i3 = min(i2, nu) + st;
        let a = src[u0]; var b = 0.0; var c = 0.0; var d = 0.0;
        if (i1 < nu) { b = src[i1]; } if (i2 < nu) { c = src[i2]; } if (i3 < nu) { d = src[i3]; }
        dst[u0] = a; if (i1 < nu) { dst[i1] = b; } if (i2 < nu) { dst[i2] = c; } if (i3 < nu) { dst[i3] = d; }
        u0 = min(i3, nu) + st;
    }
}
@compute @workgroup_size(256)
fn copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let nu = (p.n + 3u) / 4u;
    let st = min(nwg.x * 256u * nwg.y, nu);
    var u0 = gid.x + gid.y * (nwg.x * 256u);
    while (u0 < nu) {
        let i1 = u0 + st;
        let a = src4[u0]; var b = vec4<f32>(0.0);
        if (i1 < nu) { b = src4[i1]; }
        dst4[u0] = a; if (i1 < nu) { dst4[i1] = b; }
        u0 = min(i1, nu) + st;
    }
}`;

// The compute-only form of the generated kernels ("arith" rows): unit i loads from i & ARITH_MASK,
// and a store happens only where the result's bits are ARITH_NEVER (a NaN no kernel makes from
// finite data), so nothing is written while the compiler must still compute every result (stores
// of all threads to the same few units would contend in the L2 cache instead). The general path's
// loads, the lanes' tails and the grid are unchanged.
const ARITH_MASK = 2047;
const ARITH_NEVER = '0x7fc0deadu';
export function computeOnlySource(src) {
    const a = src.indexOf('// BEGIN GENERATED KERNELS'), b = src.indexOf('// END GENERATED KERNELS');
    if (a < 0 || b < a) throw new Error('bench: no generated kernels in the source');
    const never = (v, vec) => vec ? `any(bitcast<vec4<u32>>(${v}) == vec4<u32>(${ARITH_NEVER}))`
        : `bitcast<u32>(${v}) == ${ARITH_NEVER}`;
    const mid = src.slice(a, b)
        .replace(/\[u\.i\.([xyzw])\]/g, `[u.i.$1 & ${ARITH_MASK}u]`)
        .replace(/\[u\.i\[([^\]]+)\]\]/g, `[u.i[$1] & ${ARITH_MASK}u]`)
        // stores: `buf[i] = v;` and `store_buf(i, v, n);` (v a vec4 for the _4 buffers)
        .replace(/^(\s*(?:if \([^)]*\) \{ )?)(\w+\[u\.i\.[xyzw] & \d+u\]) = ([^;]+);/gm, (m, pre, lhs, v) => `${pre}if (${never(v, false)}) { ${lhs} = ${v}; }`)
        .replace(/(store_(\w+)\(([^,]+), (.+), n\));/g, (m, call, buf, i, v) => `if (${never(v, /(_4|^x4_io)$/.test(buf))}) { ${call}; }`);
    return src.slice(0, a) + mid + src.slice(b);
}

// --- data: N(0, 1) (Box-Muller), or x/gate uniform in [-20, 20] ("wide"), as the CPU benchmark ---
function rng(seed) {
    let s = BigInt(seed);
    return () => {
        s = (s + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
        let z = s;
        z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
        z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
        z ^= z >> 31n;
        return Number(z >> 11n) * 2 ** -53;
    };
}
function fillNormal(n, seed) {
    const a = new Float32Array(n), u = rng(seed);
    // 4096 Box-Muller pairs from the generator, then cheap reuse with per-block shifts: enough
    // variety for a bandwidth benchmark and ~100x faster than drawing every value in BigInt.
    const base = new Float32Array(8192);
    for (let i = 0; i < 8192; i += 2) {
        const r = Math.sqrt(-2 * Math.log(1 - u())), t = 2 * Math.PI * u();
        base[i] = r * Math.cos(t);
        base[i + 1] = r * Math.sin(t);
    }
    for (let i = 0; i < n; i += 8192) {
        const k = Math.floor(u() * 8192);
        for (let j = 0; j < 8192 && i + j < n; j++) a[i + j] = base[(j + k) & 8191];
    }
    return a;
}
function fillWide(n, seed) {
    const a = fillNormal(n, seed);
    for (let i = 0; i < n; i++) a[i] = 20 * Math.tanh(a[i]);  // spread over (-20, 20)
    return a;
}
const f32v = new Float32Array(1), u32v = new Uint32Array(f32v.buffer);
function toF16(x) {  // round to nearest even
    f32v[0] = x;
    const b = u32v[0], s = (b >>> 16) & 0x8000, e = (b >>> 23) & 0xff, m = b & 0x7fffff;
    if (e === 255) return s | 0x7c00 | (m ? 0x200 : 0);
    const he = e - 112;
    if (he >= 31) return s | 0x7c00;
    if (he <= 0) {
        if (he < -10) return s;
        const mm = m | 0x800000, sh = 14 - he;
        let q = mm >>> sh;
        const rem = mm & ((1 << sh) - 1), half = 1 << (sh - 1);
        if (rem > half || (rem === half && (q & 1))) q++;
        return s | q;
    }
    let q = (he << 10) | (m >>> 13);
    const rem = m & 0x1fff;
    if (rem > 0x1000 || (rem === 0x1000 && (q & 1))) q++;
    return s | q;
}
function toF16Array(a) {
    const h = new Uint16Array(a.length);
    for (let i = 0; i < a.length; i++) h[i] = toF16(a[i]);
    return h;
}

async function main() {
    const ns = (arg('--n', '1572864,33554432')).split(',').map(Number);
    const kernels = arg('--kernels') ? arg('--kernels').split(',') : Object.keys(KERNELS);
    const variantsWanted = arg('--variants') ? arg('--variants').split(',') : Object.keys(VARIANTS);
    const dist = arg('--dist', 'normal');
    const caches = arg('--cache', 'flushed,warm').split(',');
    const sweep = arg('--sweep', 'swiglu_combine').split(',');
    const sweepN = Number(arg('--sweep-n', 1 << 22));
    const doArith = arg('--arith', '1') !== '0';
    const label = arg('--label');
    const repsArg = arg('--reps');
    const outFile = arg('--out');
    const lines = [];
    if (outFile) fs.writeFileSync(outFile, '');
    const emit = (o) => {  // each line also goes to --out at once (a run cut short keeps its rows)
        const s = JSON.stringify(o);
        lines.push(s);
        console.log(s);
        if (outFile) fs.appendFileSync(outFile, s + '\n');
    };

    const { adapter, device, features, errors } = await requestNodeDevice({
        adapterName: arg('--adapter'), features: ['timestamp-query'], disabledToggles: ['timestamp_quantization'],
        toggles: process.argv.includes('--no-f16-toggle') ? [] : undefined,
    });
    const timestamps = features.includes('timestamp-query');
    const sources = arg('--sources') ? await loadWgslSources(new URL(`file://${fs.realpathSync(arg('--sources'))}/`)) : undefined;
    const ffn = await FfnWebGPU.create(device, { sources, fma: tri(arg('--fma', 'auto')), f16Cvt: tri(arg('--f16cvt', 'auto')) });
    let arithFfn = null;
    if (doArith) {
        const src = sources ?? (await loadWgslSources());
        const co = Object.fromEntries(Object.entries(src).map(([k, v]) => [k, computeOnlySource(v)]));
        arithFfn = await FfnWebGPU.create(device, { sources: co, fma: ffn.fmaExact, f16Cvt: ffn.f16Cvt });
    }
    const variants = variantsWanted.filter((v) => !ffn.unsupportedReason(v));
    const summary = adapterSummary(adapter);
    const gpuName = `${summary.vendor ?? ''} ${summary.device ?? ''} ${summary.description ?? ''}`.trim();
    emit({
        bench: 'act', impl: 'ffn-webgpu', header: true, cpu: gpuName, mhz: null, isa: 'webgpu', accuracy: 'default',
        kernels: Object.fromEntries(variants.map((v) => [v, kernels.length])), timer: timestamps ? 'gpu-timestamps' : 'host',
        ...(label ? { label, sources: arg('--sources') } : {}),
        fma_exact: ffn.fmaExact, f16_cvt: ffn.f16Cvt, probe: ffn.probeResult, adapter: summary,
        skipped_variants: variantsWanted.filter((v) => ffn.unsupportedReason(v)).map((v) => `${v}: ${ffn.unsupportedReason(v)}`),
        version: JSON.parse(fs.readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version,
    });
    await ffn.compile(kernels, variants);
    if (arithFfn) await arithFfn.compile(kernels, variants);

    const copyModule = device.createShaderModule({ code: COPY_WGSL });
    const copyPipes = {};
    for (const ep of ['copy_f32', 'copy_vec4'])
        copyPipes[ep] = device.createComputePipeline({ layout: 'auto', compute: { module: copyModule, entryPoint: ep } });
    const nmax = Math.max(...ns);
    const scratch = device.createBuffer({ size: 256 * 2 ** 20, usage: USAGE.STORAGE | USAGE.COPY_DST });

    // Times `encode(pass)` reps times, one compute pass each; before each pass, `prep(enc)` and (if
    // flushed) a clear of the scratch buffer. Returns seconds per pass, sorted.
    const maxReps = 256;
    const querySet = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 * maxReps }) : null;
    const resolve = device.createBuffer({ size: 16 * maxReps, usage: USAGE.QUERY_RESOLVE | USAGE.COPY_SRC });
    const readback = device.createBuffer({ size: 16 * maxReps, usage: USAGE.MAP_READ | USAGE.COPY_DST });
    async function timePasses(encode, reps, flushed, prep, inner = 1) {
        const enc = device.createCommandEncoder();
        for (let r = 0; r < reps + 2; r++) {  // 2 warm-up passes, not timed
            if (prep) prep(enc);
            if (flushed) enc.clearBuffer(scratch);
            const timed = timestamps && r >= 2;
            const pass = enc.beginComputePass(timed ? {
                timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * (r - 2), endOfPassWriteIndex: 2 * (r - 2) + 1 },
            } : {});
            for (let k = 0; k < inner; k++) encode(pass);
            pass.end();
        }
        if (!timestamps) {
            // host timing: the whole batch, divided evenly (launch overhead included)
            const t0 = performance.now();
            device.queue.submit([enc.finish()]);
            await device.queue.onSubmittedWorkDone();
            const s = (performance.now() - t0) / 1000 / (reps + 2) / inner;
            return Array(reps).fill(s);
        }
        enc.resolveQuerySet(querySet, 0, 2 * reps, resolve, 0);
        enc.copyBufferToBuffer(resolve, 0, readback, 0, 16 * reps);
        device.queue.submit([enc.finish()]);
        await readback.mapAsync(0x1);
        const t = new BigInt64Array(readback.getMappedRange().slice(0, 16 * reps));
        readback.unmap();
        const out = [];
        for (let r = 0; r < reps; r++) out.push(Number(t[2 * r + 1] - t[2 * r]) * 1e-9 / inner);
        return out.sort((a, b) => a - b);
    }
    const median = (a) => a[a.length >> 1];

    // Buffers for the largest n: 3 inputs + 2 outputs per storage size class, and the restore source.
    const mk = (bytes) => device.createBuffer({ size: bytes, usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST });
    const bytesF32 = bufferSize(nmax, 'vec4'), bytesF16 = bufferSize(nmax, 'f16pk');
    const data = {};
    for (const dt of ['f32', 'f16']) {
        const size = dt === 'f32' ? bytesF32 : bytesF16;
        data[dt] = { ins: [mk(size), mk(size), mk(size)], outs: [mk(size), mk(size)], x: mk(size), keep: mk(size) };
        const needF16 = variants.some((v) => VARIANTS[v].dtype === 'f16');
        if (dt === 'f16' && !needF16) continue;
        for (let j = 0; j < 3; j++) {
            const a = j === 0 && dist === 'wide' ? fillWide(nmax, 1 + j) : fillNormal(nmax, 1 + j);
            const arr = dt === 'f32' ? a : toF16Array(a);
            device.queue.writeBuffer(data[dt].ins[j], 0, arr.buffer, 0, arr.byteLength);
            if (j === 0) device.queue.writeBuffer(data[dt].keep, 0, arr.buffer, 0, arr.byteLength);
        }
    }
    await device.queue.onSubmittedWorkDone();

    // The copy limit at n: the better of the two copy kernels.
    async function copyLimit(n, flushed, reps) {
        const u = device.createBuffer({ size: 16, usage: USAGE.UNIFORM | USAGE.COPY_DST });
        device.queue.writeBuffer(u, 0, new Uint32Array([n, 0, 0, 0]));
        let copy = null;
        for (const [ep, lanes] of [['copy_f32', 4], ['copy_vec4', 8]]) {
            const pl = copyPipes[ep];
            const bg = device.createBindGroup({ layout: pl.getBindGroupLayout(0), entries: [
                { binding: 0, resource: { buffer: data.f32.ins[0] } }, { binding: 1, resource: { buffer: data.f32.outs[0] } },
                { binding: 2, resource: { buffer: u } }] });
            const grid = dispatchGrid(n, lanes);
            const t = await timePasses((p) => { p.setPipeline(pl); p.setBindGroup(0, bg); p.dispatchWorkgroups(grid[0], grid[1], 1); },
                reps, flushed, null);
            const c = { kernel: ep, n, med: median(t), min: t[0], gbps: (8 * n) / median(t) / 1e9 };
            if (!copy || c.gbps > copy.gbps) copy = c;
        }
        u.destroy();
        return copy;
    }

    // Clocks up from idle: the first tenths of a second of a run would otherwise run at a fraction
    // of the GPU's clock.
    {
        const warm = Number(arg('--warmup', 2)), t0 = performance.now();
        while ((performance.now() - t0) / 1000 < warm) await copyLimit(nmax, false, 50);
    }
    // The floor: one workgroup of the copy kernel (n = 1) in a timed pass.
    {
        const f = await copyLimit(1, false, 100);
        emit({ bench: 'act', impl: 'ffn-webgpu', floor: true, kernel: f.kernel, n: 1, seconds: f.med, min_seconds: f.min, cpu: gpuName });
        console.error(`floor (a timed pass with one workgroup): ${(f.med * 1e6).toFixed(2)} us (min ${(f.min * 1e6).toFixed(2)})`);
    }

    const rows = [];
    const runs = [];
    for (const n of ns) for (const cache of caches) runs.push([n, cache]);
    if (arithFfn) runs.push([nmax, 'arith']);
    const copyAt = new Map();  // n|cache -> copy row
    for (const [n, cache] of runs) {
        const reps = Number(repsArg ?? (n >= 8e6 ? 30 : 100));
        const flushed = cache === 'flushed', arith = cache === 'arith';
        const before = arith ? null : await copyLimit(n, flushed, reps);
        const timed = [];
        for (const kernel of kernels) {
            const K = KERNELS[kernel], kind = KINDS[K.kind];
            for (const variant of variants) {
                const V = VARIANTS[variant], D = data[V.dtype];
                const bufs = {};
                if (K.kind === 'unary') bufs.x = D.x;
                else {
                    kind.inputs.forEach((name, j) => (bufs[name] = D.ins[j]));
                    kind.outputs.forEach((name, j) => (bufs[name] = D.outs[j]));
                }
                const lanes = V.lanes;
                const unitsMul = sweep.includes(kernel) && n <= sweepN && !arith ? [1, 2, 4] : [1];
                for (const mul of unitsMul) {
                    const grid = dispatchGrid(n, lanes * mul);
                    const d = (arith ? arithFfn : ffn).prepare(kernel, variant, bufs, n, { grid });
                    const size = bufferSize(n, variant);
                    // the in-place kernels get their input back before every pass
                    const prep = K.kind === 'unary' ? (enc) => enc.copyBufferToBuffer(D.keep, 0, D.x, 0, size) : null;
                    const t = await timePasses((p) => d.encode(p), reps, flushed, prep);
                    d.destroy();
                    timed.push({ K, kind, V, kernel, variant, lanes, mul, grid, t });
                }
            }
        }
        const after = arith ? null : await copyLimit(n, flushed, reps);
        const copy = arith ? (copyAt.get(`${nmax}|flushed`) ?? copyAt.get(`${nmax}|${caches[0]}`))
            : (after.gbps > before.gbps ? after : before);
        if (!arith) copyAt.set(`${n}|${cache}`, copy);
        for (const { K, kind, V, kernel, variant, lanes, mul, grid, t } of timed) {
            const nbytes = (K.kind === 'unary' ? 2 : kind.bindings.length) * n * V.elemBytes;
            const med = median(t), gbps = nbytes / med / 1e9;
            const row = {
                impl: 'ffn-webgpu', op: K.kind.startsWith('gated') ? GLU_OP[K.act] : K.act, act: K.act,
                glu: K.kind.startsWith('gated'), dir: K.kind.endsWith('bwd') ? 'bwd' : 'fwd', dtype: V.dtype, dist, n,
                threads: null, isa: 'webgpu', kernel_isa: variant, kernel: kernel + V.suffix, accuracy: 'default',
                reps, inner: 1, seconds: med, min_seconds: t[0], bytes: nbytes, gbps: +gbps.toFixed(2),
                min_gbps: +(nbytes / t[0] / 1e9).toFixed(2), triad_gbps: +(copy?.gbps ?? 0).toFixed(2),
                triad_best_gbps: copy ? +((8 * copy.n) / copy.min / 1e9).toFixed(2) : null,
                triad_seconds: copy?.med ?? null, triad_kernel: copy?.kernel ?? null,
                ratio: copy ? +(gbps / copy.gbps).toFixed(4) : null, cache, cpu: gpuName, mhz: null,
                grid, units_per_thread: (lanes * mul) / (V.suffix === '_vec4' ? 4 : V.dtype === 'f16' ? 2 : 1),
                ...(label ? { label } : {}),
            };
            if (mul > 1) row.sweep = true;
            // arithmetic share: the compute-only time over the time the copy limit allows for the
            // kernel's bytes at this n
            if (arith && copy) row.arith_share = +(med / (nbytes / (copy.gbps * 1e9))).toFixed(3);
            rows.push(row);
            emit(row);
        }
    }
    // table: per kernel, n and cache: every variant's GB/s and ratio; best ratio
    const pad = (s, w) => String(s).padEnd(w);
    console.error(`\n${gpuName}; FFN_FMA_EXACT=${ffn.fmaExact} FFN_F16_CVT=${ffn.f16Cvt}; timer ${timestamps ? 'GPU timestamps' : 'host'}`);
    console.error(pad('kernel', 20) + pad('n', 10) + pad('cache', 8) + variants.map((v) => pad(`${v} us / GB/s / ratio`, 26)).join('') + 'copy GB/s');
    const key = (r) => `${r.kernel.replace(/_(vec4|f16pk|f16)$/, '')}|${r.n}|${r.cache}`;
    const groups = new Map();
    for (const r of rows) {
        if (r.sweep) continue;
        if (!groups.has(key(r))) groups.set(key(r), []);
        groups.get(key(r)).push(r);
    }
    for (const [k, rs] of groups) {
        const [kernel, n, cache] = k.split('|');
        const cells = variants.map((v) => {
            const r = rs.find((x) => x.kernel_isa === v);
            return pad(r ? `${(r.seconds * 1e6).toPrecision(4)} / ${r.gbps.toPrecision(4)} / ${r.ratio.toFixed(2)}` : "-", 26);
        });
        const share = rs.filter((r) => r.arith_share !== undefined).map((r) => `${r.kernel_isa} ${r.arith_share}`).join(' ');
        console.error(pad(kernel, 20) + pad(n, 10) + pad(cache, 8) + cells.join("") + rs[0].triad_gbps.toPrecision(4) +
            (share ? `  arith share: ${share}` : ''));
    }
    for (const r of rows.filter((r) => r.sweep || (sweep.includes(r.kernel.replace(/_(vec4|f16pk|f16)$/, '')) && r.n <= sweepN && r.cache !== 'arith')))
        console.error(`sweep ${r.kernel} n=${r.n} ${r.cache} units/thread ${r.units_per_thread} grid ${r.grid.join('x')}: ${(r.seconds * 1e6).toPrecision(4)} us`);
    for (const e of errors.slice(0, 5)) console.error('GPU error: ' + e);
    return errors.length ? 1 : 0;
}

// Run as a program (imported, e.g. by the unit tests, it only exports computeOnlySource).
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(new URL(import.meta.url).pathname)) {
    main().then(
        (rc) => process.exit(rc),
        (e) => {
            console.error('bench:', e && e.stack ? e.stack : e);
            process.exit(1);
        },
    );
}
