// suite.mjs — the WGSL kernel suite, shared by the browser page (browser-test.mjs) and Node
// (run-node.mjs): every kernel in every storage variant the device supports against the C scalar
// reference's golden outputs (golden.mjs), plus the dispatch checks: tails (n not a multiple of the
// lanes or of 256, buffer contents past n untouched), forced 2-D grids, grids of one workgroup and
// of one thread per element (the kernels' grid-stride loop), and one n beyond 65535 x 256 elements
// on a real 2-D grid. No DOM, no Node APIs: the caller passes the FfnWebGPU object and loaders.
import { VARIANTS, dispatchGrid, MAX_WORKGROUPS_PER_DIM, WORKGROUP_SIZE } from '../ffn-webgpu.js';
import { compareOutput, TOL_F32, TOL_F16, f32Bits } from './golden.mjs';

const TAIL_NS = [1, 2, 3, 4, 5, 7, 8, 9, 255, 256, 257, 1023, 1025, 4097];
const TAIL_SLACK = 16;  // elements past n whose contents must survive the dispatch
const FORCED_2D_N = 9001;  // run on a grid of about sqrt(workgroups) x sqrt(workgroups)
const STRIDE_N = 4097;  // run on one workgroup (16 loop iterations) and on one thread per element
const SENTINEL_F32 = 0x7fa5a5a5;  // a NaN payload no kernel produces
const SENTINEL_F16 = 0x7d5a;
export const VARIANT_NAMES = ['f32', 'vec4', 'f16pk', 'f16'];

function sameBits(a, b, i, j, f16) {
    return f16 ? a[i] === b[j] : f32Bits(a[i]) === f32Bits(b[j]);
}

// Inputs of a kernel as { name: typedArray } from golden g.
function inputsOf(km, g) {
    const arrays = {};
    km.inputs.forEach((name, j) => (arrays[name] = g.inputs[j]));
    return arrays;
}

// Runs `kernel` over n elements taken from offset r0 of the golden inputs, in buffers TAIL_SLACK
// elements longer than n; checks outputs [0, n) bitwise against the full run and the rest
// untouched. Returns a list of failure strings.
async function checkDispatch(ffn, km, g, variant, full, r0, n, opts = {}, tag = '') {
    const f16 = VARIANTS[variant].dtype === 'f16';
    const cap = n + TAIL_SLACK;
    const Elem = f16 ? Uint16Array : Float32Array;
    const buffers = {}, initial = {};
    const bindings = km.kind === 'unary' ? ['x'] : [...km.inputs, ...km.outputs];
    for (const name of bindings) {
        const j = km.inputs.indexOf(name);
        let data;
        if (j >= 0) {
            data = new Elem(g.inputs[j].subarray(r0, r0 + cap));
        } else {
            data = f16 ? new Uint16Array(cap).fill(SENTINEL_F16) : new Float32Array(new Uint32Array(cap).fill(SENTINEL_F32).buffer);
        }
        initial[name] = data;
        buffers[name] = ffn.createBuffer(cap, variant, data, name);
    }
    const d = ffn.run(km.name, variant, buffers, n, opts);
    const errs = [];
    for (const name of km.outputs) {
        const got = await ffn.read(buffers[name], cap, variant);
        for (let i = 0; i < cap && errs.length < 5; i++) {
            if (i < n && !sameBits(got, full[name], i, r0 + i, f16))
                errs.push(`${km.name}/${variant} n=${n}${tag}: ${name}[${i}] = ${got[i]}, full run gave ${full[name][r0 + i]}`);
            if (i >= n && !sameBits(got, initial[name], i, i, f16))
                errs.push(`${km.name}/${variant} n=${n}${tag}: ${name}[${i}] past n was overwritten (${initial[name][i]} -> ${got[i]})`);
        }
    }
    d.destroy();
    for (const b of Object.values(buffers)) b.destroy();
    return errs;
}

// n = 65535 * 256 + 1234 elements on the one-thread-per-element grid: more workgroups than one
// dimension allows. Inputs repeat the f16 sweep segment; every output must equal the full run's
// output for the same input, bitwise.
async function checkBig(ffn, km, g, full, now) {
    const n = MAX_WORKGROUPS_PER_DIM * WORKGROUP_SIZE + 1234;
    const grid = dispatchGrid(n, 1);
    const period = g.seg[0];
    const arrays = {};
    km.inputs.forEach((name, j) => {
        const a = new Float32Array(n);
        const src = g.inputs[j].subarray(0, period);
        for (let off = 0; off < n; off += period) a.set(src.subarray(0, Math.min(period, n - off)), off);
        arrays[name] = a;
    });
    const t0 = now();
    const out = await ffn.compute(km.name, arrays, { variant: 'f32', grid });
    const ms = now() - t0;
    let fails = 0, first = '';
    for (const name of km.outputs) {
        const got = out[name], ref = full[name];
        for (let i = 0; i < n; i++) {
            if (!sameBits(got, ref, i, i % period, false)) {
                if (!fails) first = `${name}[${i}] = ${got[i]}, expected ${ref[i % period]}`;
                fails++;
            }
        }
    }
    return { kernel: km.name, n, grid, ms: Math.round(ms), fails, first };
}

/// Runs the suite. ffn: an FfnWebGPU; manifest: the golden manifest; loadGolden(file) -> parsed
/// golden; only: kernel names or null; doBig: run the 2-D dispatch check; variants: storage
/// variants to try; log(line). Returns { ok, rows, skipped, dispatch, big, errors } (errors: the
/// caller fills in the device's uncaptured errors).
export async function runKernelSuite({ ffn, manifest, loadGolden, only = null, doBig = true, variants = VARIANT_NAMES,
    log = () => {}, now = () => performance.now() }) {
    const result = { ok: false, rows: [], skipped: [], dispatch: { checked: 0, failures: [] }, big: [], errors: [] };
    for (const km of manifest.kernels) {
        if (only && !only.includes(km.name)) continue;
        const golden = { f32: await loadGolden(km.files.f32), f16: await loadGolden(km.files.f16) };
        for (const variant of variants) {
            const why = ffn.unsupportedReason(variant);
            if (why) {
                result.skipped.push({ kernel: km.name, variant, reason: why });
                continue;
            }
            const g = golden[VARIANTS[variant].dtype];
            const tol = g.dtype === 'f16' ? TOL_F16 : TOL_F32[km.name];
            const t1 = now();
            const full = await ffn.compute(km.name, inputsOf(km, g), { variant });
            const ms = now() - t1;
            km.outputs.forEach((name, j) => {
                const st = compareOutput(g, j, full[name], tol);
                const seg = [];
                let from = 0;
                for (const len of g.seg) {
                    seg.push(+compareOutput(g, j, full[name], tol, { from, to: from + len }).maxUlp.toFixed(2));
                    from += len;
                }
                const row = { kernel: km.name, variant, output: name, tol, ms: Math.round(ms), segMaxUlp: seg, ...st };
                result.rows.push(row);
                log(`${st.fails ? 'FAIL' : 'ok  '} ${km.name}/${variant} ${name}: n=${st.checked} max ${+st.maxUlp.toFixed(2)} ulp (tol ${tol})` +
                    ` [sweep ${seg[0]}, special ${seg[1]}, hard ${seg[2]}, random ${seg[3]}]` +
                    `, ${st.exact} exact specials, ${st.skipped} skipped` + (st.fails ? `, ${st.fails} failures: ${JSON.stringify(st.failures.slice(0, 3))}` : ''));
            });
            // tails, untouched padding, forced 2-D grid, other grids: bitwise against this full run
            const r0 = g.seg[0] + g.seg[1] + g.seg[2];
            const fails = result.dispatch.failures;
            for (const n of TAIL_NS) {
                result.dispatch.checked++;
                fails.push(...(await checkDispatch(ffn, km, g, variant, full, r0, n)));
            }
            result.dispatch.checked++;
            const groups = dispatchGrid(FORCED_2D_N, VARIANTS[variant].lanes)[0];
            const maxWorkgroupsPerDim = Math.ceil(Math.sqrt(groups));
            if (dispatchGrid(FORCED_2D_N, VARIANTS[variant].lanes, maxWorkgroupsPerDim)[1] < 2)
                throw new Error(`forced 2-D check of ${variant} is 1-D`);
            fails.push(...(await checkDispatch(ffn, km, g, variant, full, r0, FORCED_2D_N, { maxWorkgroupsPerDim }, ' 2-D')));
            result.dispatch.checked += 2;
            fails.push(...(await checkDispatch(ffn, km, g, variant, full, r0, STRIDE_N, { grid: [1, 1] }, ' one workgroup')));
            fails.push(...(await checkDispatch(ffn, km, g, variant, full, r0, STRIDE_N, { grid: dispatchGrid(STRIDE_N, 1) },
                ' one thread per element')));
            if (doBig && variant === 'f32' && (km.name === 'gelu_inplace' || km.name === 'swiglu_combine')) {
                const b = await checkBig(ffn, km, g, full, now);
                result.big.push(b);
                log(`${b.fails ? 'FAIL' : 'ok  '} ${km.name} n=${b.n} on a ${b.grid[0]} x ${b.grid[1]} grid: ${b.fails} mismatches ${b.first} (${b.ms} ms)`);
            }
        }
    }
    for (const s of result.skipped.filter((s, i, a) => a.findIndex((t) => t.variant === s.variant) === i))
        log(`skip ${s.variant} variants: ${s.reason}`);
    log(`dispatch checks: ${result.dispatch.checked}, failures: ${result.dispatch.failures.length}`);
    for (const f of result.dispatch.failures.slice(0, 10)) log('FAIL ' + f);
    return result;
}

/// ok = no failure anywhere (kernel rows, dispatch checks, 2-D check, GPU errors).
export function finishResult(result) {
    const fails = result.rows.reduce((s, r) => s + r.fails, 0) + result.dispatch.failures.length +
        result.big.reduce((s, b) => s + b.fails, 0) + result.errors.length;
    result.ok = fails === 0 && result.rows.length > 0;
    return result;
}

/// The per-kernel table (one line per kernel output), as run-browser and run-node print it.
export function kernelTable(r) {
    const pad = (s, n) => String(s).padEnd(n);
    const lines = [pad('kernel', 20) + pad('variant', 8) + pad('output', 8) + pad('max ulp', 9) + pad('tol', 5) +
        pad('sweep/special/hard/random', 27) + pad('max rel', 9) + pad('exact', 7) + pad('skip', 6) + 'result'];
    for (const x of r.rows) {
        lines.push(pad(x.kernel, 20) + pad(x.variant, 8) + pad(x.output, 8) + pad(+x.maxUlp.toFixed(2), 9) + pad(x.tol, 5) +
            pad(x.segMaxUlp.join('/'), 27) + pad(x.maxRel, 9) + pad(x.exact, 7) + pad(x.skipped, 6) +
            (x.fails ? `FAIL (${x.fails}): ${JSON.stringify(x.failures)}` : 'ok'));
    }
    const reasons = new Map(r.skipped.map((s) => [s.variant, s.reason]));
    for (const [v, why] of reasons)
        lines.push(`SKIPPED: ${r.skipped.filter((s) => s.variant === v).length} '${v}' kernels: ${why}`);
    lines.push(`dispatch checks (tails, padding untouched, forced 2-D grids, other grids): ${r.dispatch.checked}, ` +
        `failures: ${r.dispatch.failures.length}`);
    for (const f of r.dispatch.failures.slice(0, 10)) lines.push('  ' + f);
    for (const b of r.big)
        lines.push(`2-D dispatch ${b.kernel}: n=${b.n}, grid ${b.grid.join(' x ')}: ${b.fails} mismatches ${b.first} (${b.ms} ms)`);
    for (const e of r.errors) lines.push('GPU error: ' + e);
    return lines.join('\n');
}
