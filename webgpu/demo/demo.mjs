// demo.mjs — the demo page's logic: runs each kernel (f32) on the golden sample (the random
// segment of the C reference's goldens), reports its max ulp error (golden.mjs metric) and its
// throughput on 2^18 elements, and plots GeLU (tanh, erf), SiLU, ReLU and their derivatives as
// computed by the GPU. Leaves window.__demoResult for the screenshot test (run-browser.mjs demo).
import { FfnWebGPU, KERNELS } from '../ffn-webgpu.js';
import { fetchManifest, fetchGolden, compareOutput, TOL_F32 } from '../test/golden.mjs';

const BENCH_N = 1 << 18;
const BENCH_REPS = 3;
const $ = (id) => document.getElementById(id);

async function timeKernel(ffn, device, km, g, r0) {
    // inputs: the sample tiled to BENCH_N elements
    const buffers = {};
    const bindings = km.kind === 'unary' ? ['x'] : [...km.inputs, ...km.outputs];
    for (const name of bindings) {
        const j = km.inputs.indexOf(name);
        let data = null;
        if (j >= 0) {
            data = new Float32Array(BENCH_N);
            const src = g.inputs[j].subarray(r0, r0 + g.seg[3]);
            for (let off = 0; off < BENCH_N; off += src.length) data.set(src.subarray(0, Math.min(src.length, BENCH_N - off)), off);
        }
        buffers[name] = ffn.createBuffer(BENCH_N, 'f32', data, name);
    }
    const d = ffn.prepare(km.name, 'f32', buffers, BENCH_N);
    const times = [];
    for (let rep = 0; rep <= BENCH_REPS; rep++) {
        const enc = device.createCommandEncoder();
        const pass = enc.beginComputePass();
        d.encode(pass);
        pass.end();
        const t0 = performance.now();
        device.queue.submit([enc.finish()]);
        await device.queue.onSubmittedWorkDone();
        if (rep > 0) times.push(performance.now() - t0);  // rep 0 warms up
    }
    d.destroy();
    for (const b of Object.values(buffers)) b.destroy();
    times.sort((a, b) => a - b);
    const ms = times[times.length >> 1];
    const bytes = 4 * BENCH_N * (km.kind === 'unary' ? 2 : km.inputs.length + km.outputs.length);
    return { ms, melem: BENCH_N / ms / 1e3, gbs: bytes / ms / 1e6 };
}

// Curves from the GPU: act(x) with the in-place kernels and act'(x) with the backward ones (dy = 1).
async function plot(ffn) {
    const N = 601, X0 = -5, X1 = 3;
    const xs = Float32Array.from({ length: N }, (_, i) => X0 + ((X1 - X0) * i) / (N - 1));
    const ones = new Float32Array(N).fill(1);
    const curves = [
        { name: 'GeLU (tanh)', k: 'gelu_inplace', d: 'gelu_backward', color: '#1f6feb' },
        { name: 'GeLU (erf)', k: 'gelu_erf_inplace', d: 'gelu_erf_backward', color: '#8250df' },
        { name: 'SiLU', k: 'silu_inplace', d: 'silu_backward', color: '#d1242f' },
        { name: 'ReLU', k: 'relu_inplace', d: 'relu_backward', color: '#1a7f37' },
    ];
    for (const c of curves) {
        c.y = (await ffn.compute(c.k, { x: xs })).x;
        c.dy = (await ffn.compute(c.d, { x: xs, dy: ones })).dx;
    }
    const cv = $('plot'), ctx = cv.getContext('2d');
    const W = cv.width, H = cv.height, L = 46, R = 14, T = 30, B = 36, Y0 = -1.2, Y1 = 3.2;
    const px = (x) => L + ((x - X0) / (X1 - X0)) * (W - L - R);
    const py = (y) => T + ((Y1 - y) / (Y1 - Y0)) * (H - T - B);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    ctx.font = '12px system-ui, sans-serif';
    ctx.strokeStyle = '#e4e7ec';
    ctx.fillStyle = '#556';
    for (let x = X0; x <= X1; x++) {
        ctx.beginPath(); ctx.moveTo(px(x), T); ctx.lineTo(px(x), H - B); ctx.stroke();
        ctx.fillText(String(x), px(x) - 4, H - B + 16);
    }
    for (let y = -1; y <= 3; y++) {
        ctx.beginPath(); ctx.moveTo(L, py(y)); ctx.lineTo(W - R, py(y)); ctx.stroke();
        ctx.fillText(String(y), L - 20, py(y) + 4);
    }
    ctx.strokeStyle = '#99a';
    ctx.beginPath(); ctx.moveTo(px(0), T); ctx.lineTo(px(0), H - B); ctx.moveTo(L, py(0)); ctx.lineTo(W - R, py(0)); ctx.stroke();
    ctx.fillStyle = '#1d2330';
    ctx.fillText('activations (solid) and derivatives (dashed), computed by the WGSL kernels', L, 18);
    curves.forEach((c, ci) => {
        for (const [arr, dash] of [[c.y, []], [c.dy, [5, 4]]]) {
            ctx.strokeStyle = c.color;
            ctx.lineWidth = 2;
            ctx.setLineDash(dash);
            ctx.beginPath();
            for (let i = 0; i < N; i++) (i ? ctx.lineTo : ctx.moveTo).call(ctx, px(xs[i]), py(arr[i]));
            ctx.stroke();
        }
        ctx.setLineDash([]);
        ctx.fillStyle = c.color;
        ctx.fillRect(L + 12, T + 10 + ci * 18, 18, 3);
        ctx.fillStyle = '#1d2330';
        ctx.fillText(c.name, L + 36, T + 15 + ci * 18);
    });
    // how much was drawn (the test checks the canvas is not empty)
    const img = ctx.getImageData(0, 0, W, H).data;
    let coloured = 0;
    for (let i = 0; i < img.length; i += 4) if (Math.max(img[i], img[i + 1], img[i + 2]) - Math.min(img[i], img[i + 1], img[i + 2]) > 60) coloured++;
    return coloured;
}

async function main() {
    if (!navigator.gpu) throw new Error('this browser has no WebGPU (navigator.gpu is missing)');
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new Error('no WebGPU adapter');
    const device = await adapter.requestDevice();
    const info = adapter.info ?? {};
    $('info').textContent = `adapter: ${info.vendor || '?'} ${info.architecture || ''} ${info.description || ''} — ` +
        `f32 kernels, sample = ${'65,536'} random inputs per kernel vs the C scalar reference; throughput on 2^18 elements (median of ${BENCH_REPS})`;
    const ffn = await FfnWebGPU.create(device);
    $('status').textContent = 'compiling pipelines…';
    await ffn.compile(Object.keys(KERNELS), ['f32']);
    const base = new URL('/golden/', location.href);
    const manifest = await fetchManifest(base);
    const rows = [];
    const tbody = $('table').querySelector('tbody');
    for (const km of manifest.kernels) {
        $('status').textContent = `running ${km.name}…`;
        const g = await fetchGolden(base, km.files.f32);
        const r0 = g.seg[0] + g.seg[1] + g.seg[2];
        const arrays = {};
        km.inputs.forEach((name, j) => (arrays[name] = g.inputs[j]));
        const out = await ffn.compute(km.name, arrays);
        let maxUlp = 0, fails = 0;
        km.outputs.forEach((name, j) => {
            const st = compareOutput(g, j, out[name], TOL_F32[km.name], { from: r0, to: r0 + g.seg[3] });
            maxUlp = Math.max(maxUlp, st.maxUlp);
            fails += st.fails;
        });
        const t = await timeKernel(ffn, device, km, g, r0);
        const row = {
            kernel: km.name, maxUlp: +maxUlp.toFixed(2), tol: TOL_F32[km.name], sample: g.seg[3],
            ms: t.ms.toFixed(1), melemPerS: t.melem.toFixed(1), gbPerS: t.gbs.toFixed(2), status: fails ? 'FAIL' : 'ok',
        };
        rows.push(row);
        const tr = document.createElement('tr');
        for (const v of [row.kernel, row.maxUlp, row.tol, row.sample.toLocaleString('en'), row.ms, row.melemPerS, row.gbPerS])
            tr.appendChild(Object.assign(document.createElement('td'), { textContent: v }));
        tr.appendChild(Object.assign(document.createElement('td'), { textContent: row.status, className: fails ? 'bad' : 'ok' }));
        tr.dataset.kernel = row.kernel;
        tbody.appendChild(tr);
    }
    $('status').textContent = 'plotting…';
    const plotPixels = await plot(ffn);
    $('status').textContent = `done: ${rows.filter((r) => r.status === 'ok').length} of ${rows.length} kernels within tolerance`;
    return { rows, plotPixels, adapter: info.architecture };
}

main().then(
    (r) => (window.__demoResult = r),
    (e) => {
        $('status').textContent = 'error: ' + (e && e.message ? e.message : e);
        window.__demoResult = { fatal: String(e && e.stack ? e.stack : e), rows: [] };
    },
);
