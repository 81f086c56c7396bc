// browser-test.mjs — runs in the page: every WGSL kernel, in every storage variant the adapter
// supports, against the C scalar reference's golden outputs (golden.mjs), plus the dispatch
// checks: tails (n not a multiple of the lanes or of 256, buffer contents past n untouched),
// forced 2-D grids, and one n beyond 65535 x 256 elements (a real 2-D dispatch). The result is
// left in window.__ffnResult for run-browser.mjs. Query: ?golden=URL&kernels=a,b&big=0
import { FfnWebGPU, VARIANTS, bufferSize, dispatchGrid, MAX_WORKGROUPS_PER_DIM, WORKGROUP_SIZE } from '../ffn-webgpu.js';
import { fetchManifest, fetchGolden, compareOutput, TOL_F32, TOL_F16, f32Bits } from './golden.mjs';

const TAIL_NS = [1, 2, 3, 4, 5, 7, 255, 256, 257, 1023, 1025, 4097];
const TAIL_SLACK = 16;  // elements past n whose contents must survive the dispatch
const FORCED_2D_N = 3001;  // run on a grid of about sqrt(workgroups) x sqrt(workgroups)
const SENTINEL_F32 = 0x7fa5a5a5;  // a NaN payload no kernel produces
const SENTINEL_F16 = 0x7d5a;

const logEl = document.getElementById('log');
function log(s) {
    logEl.textContent += s + '\n';
    console.log(s);
}

function sameBits(a, b, i, j, f16) {
    return f16 ? a[i] === b[j] : f32Bits(a[i]) === f32Bits(b[j]);
}

// Inputs of a kernel as { name: typedArray } from golden g, elements [from, from + n).
function inputsOf(km, g, from = 0, n = g.n) {
    const arrays = {};
    km.inputs.forEach((name, j) => (arrays[name] = g.inputs[j].subarray(from, from + n)));
    return arrays;
}

// Runs `kernel` over n elements taken from offset r0 of the golden inputs, in buffers TAIL_SLACK
// elements longer than n; checks outputs [0, n) bitwise against the full run and the rest
// untouched. Returns a list of failure strings.
async function checkDispatch(ffn, km, g, variant, full, r0, n, opts = {}) {
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
                errs.push(`${km.name}/${variant} n=${n}${opts.maxWorkgroupsPerDim ? ' 2-D' : ''}: ${name}[${i}] = ${got[i]}, full run gave ${full[name][r0 + i]}`);
            if (i >= n && !sameBits(got, initial[name], i, i, f16))
                errs.push(`${km.name}/${variant} n=${n}: ${name}[${i}] past n was overwritten (${initial[name][i]} -> ${got[i]})`);
        }
    }
    d.destroy();
    for (const b of Object.values(buffers)) b.destroy();
    return errs;
}

// n = 65535 * 256 + 1234 elements: more workgroups than one dimension allows. Inputs repeat the
// f16 sweep segment; every output must equal the full run's output for the same input, bitwise.
async function checkBig(ffn, km, g, full) {
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
    const t0 = performance.now();
    const out = await ffn.compute(km.name, arrays, { variant: 'f32' });
    const ms = performance.now() - t0;
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

async function main() {
    const t0 = performance.now();
    const q = new URLSearchParams(location.search);
    const base = new URL(q.get('golden') ?? '/golden/', location.href);
    const only = q.get('kernels') ? q.get('kernels').split(',') : null;
    const doBig = q.get('big') !== '0';
    const result = { ok: false, rows: [], skipped: [], dispatch: { checked: 0, failures: [] }, big: [], errors: [] };
    if (!navigator.gpu) throw new Error('navigator.gpu is missing: no WebGPU in this browser');
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new Error('requestAdapter() gave null: no WebGPU adapter');
    const info = adapter.info ?? {};
    result.adapter = { vendor: info.vendor, architecture: info.architecture, description: info.description };
    result.features = [...adapter.features];
    const requiredFeatures = adapter.features.has('shader-f16') ? ['shader-f16'] : [];
    const device = await adapter.requestDevice({
        requiredFeatures,
        requiredLimits: {
            maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
            maxBufferSize: adapter.limits.maxBufferSize,
        },
    });
    device.addEventListener('uncapturederror', (e) => result.errors.push(e.error.message));
    const ffn = await FfnWebGPU.create(device);
    log(`adapter: ${JSON.stringify(result.adapter)}; shader-f16: ${ffn.hasF16}`);

    const manifest = await fetchManifest(base);
    const variants = ['f32', 'vec4', 'f16pk', 'f16'];
    await ffn.compile(manifest.kernels.map((k) => k.name), variants);
    log(`pipelines compiled: ${ffn.pipelines.size} (${Math.round(performance.now() - t0)} ms)`);

    for (const km of manifest.kernels) {
        if (only && !only.includes(km.name)) continue;
        const golden = { f32: await fetchGolden(base, km.files.f32), f16: await fetchGolden(base, km.files.f16) };
        for (const variant of variants) {
            const why = ffn.unsupportedReason(variant);
            if (why) {
                result.skipped.push({ kernel: km.name, variant, reason: why });
                continue;
            }
            const g = golden[VARIANTS[variant].dtype];
            const tol = g.dtype === 'f16' ? TOL_F16 : TOL_F32[km.name];
            const t1 = performance.now();
            const full = await ffn.compute(km.name, inputsOf(km, g), { variant });
            const ms = performance.now() - t1;
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
            // tails, untouched padding, forced 2-D grid: bitwise against this full run
            const r0 = g.seg[0] + g.seg[1] + g.seg[2];
            for (const n of TAIL_NS) {
                result.dispatch.checked++;
                result.dispatch.failures.push(...(await checkDispatch(ffn, km, g, variant, full, r0, n)));
            }
            result.dispatch.checked++;
            const groups = dispatchGrid(FORCED_2D_N, VARIANTS[variant].lanes)[0];
            const maxWorkgroupsPerDim = Math.ceil(Math.sqrt(groups));
            if (dispatchGrid(FORCED_2D_N, VARIANTS[variant].lanes, maxWorkgroupsPerDim)[1] < 2)
                throw new Error(`forced 2-D check of ${variant} is 1-D`);
            result.dispatch.failures.push(...(await checkDispatch(ffn, km, g, variant, full, r0, FORCED_2D_N,
                { maxWorkgroupsPerDim })));
            if (doBig && variant === 'f32' && (km.name === 'gelu_inplace' || km.name === 'swiglu_combine')) {
                const b = await checkBig(ffn, km, g, full);
                result.big.push(b);
                log(`${b.fails ? 'FAIL' : 'ok  '} ${km.name} n=${b.n} on a ${b.grid[0]} x ${b.grid[1]} grid: ${b.fails} mismatches ${b.first} (${b.ms} ms)`);
            }
        }
    }
    for (const s of result.skipped.filter((s, i, a) => a.findIndex((t) => t.variant === s.variant) === i))
        log(`skip ${s.variant} variants: ${s.reason}`);
    log(`dispatch checks: ${result.dispatch.checked}, failures: ${result.dispatch.failures.length}`);
    for (const f of result.dispatch.failures.slice(0, 10)) log('FAIL ' + f);
    for (const e of result.errors) log('GPU error: ' + e);
    const fails = result.rows.reduce((s, r) => s + r.fails, 0) + result.dispatch.failures.length +
        result.big.reduce((s, b) => s + b.fails, 0) + result.errors.length;
    result.ok = fails === 0 && result.rows.length > 0;
    result.elapsedMs = Math.round(performance.now() - t0);
    log(`${result.ok ? 'PASS' : 'FAIL'} in ${result.elapsedMs} ms`);
    return result;
}

main().then(
    (r) => (window.__ffnResult = r),
    (e) => {
        log('ERROR ' + (e && e.stack ? e.stack : e));
        window.__ffnResult = { ok: false, fatal: String(e && e.stack ? e.stack : e) };
    },
);
