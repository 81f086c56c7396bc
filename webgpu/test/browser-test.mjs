// browser-test.mjs — runs in the page: the kernel suite (suite.mjs) on the browser's WebGPU
// adapter, against the golden files served next to the page. The result is left in
// window.__ffnResult for run-browser.mjs. Query: ?golden=URL&kernels=a,b&big=0
import { FfnWebGPU } from '../ffn-webgpu.js';
import { fetchManifest, fetchGolden } from './golden.mjs';
import { runKernelSuite, finishResult, VARIANT_NAMES } from './suite.mjs';

const logEl = document.getElementById('log');
function log(s) {
    logEl.textContent += s + '\n';
    console.log(s);
}

async function main() {
    const t0 = performance.now();
    const q = new URLSearchParams(location.search);
    const base = new URL(q.get('golden') ?? '/golden/', location.href);
    const only = q.get('kernels') ? q.get('kernels').split(',') : null;
    if (!navigator.gpu) throw new Error('navigator.gpu is missing: no WebGPU in this browser');
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new Error('requestAdapter() gave null: no WebGPU adapter');
    const info = adapter.info ?? {};
    const requiredFeatures = adapter.features.has('shader-f16') ? ['shader-f16'] : [];
    const device = await adapter.requestDevice({
        requiredFeatures,
        requiredLimits: {
            maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
            maxBufferSize: adapter.limits.maxBufferSize,
        },
    });
    const errors = [];
    device.addEventListener('uncapturederror', (e) => errors.push(e.error.message));
    const ffn = await FfnWebGPU.create(device);
    const manifest = await fetchManifest(base);
    await ffn.compile(manifest.kernels.map((k) => k.name), VARIANT_NAMES);
    log(`adapter: ${JSON.stringify({ vendor: info.vendor, architecture: info.architecture, description: info.description })}; ` +
        `shader-f16: ${ffn.hasF16}; probe: ${JSON.stringify(ffn.probeResult)}; pipelines: ${ffn.pipelines.size} ` +
        `(${Math.round(performance.now() - t0)} ms)`);
    const result = await runKernelSuite({
        ffn, manifest, only, doBig: q.get('big') !== '0', log,
        loadGolden: (file) => fetchGolden(base, file),
    });
    result.adapter = { vendor: info.vendor, architecture: info.architecture, description: info.description };
    result.features = [...adapter.features];
    result.probe = ffn.probeResult;
    result.config = { fmaExact: ffn.fmaExact, f16Cvt: ffn.f16Cvt, emulateFma: false };
    result.errors.push(...errors);
    for (const e of result.errors) log('GPU error: ' + e);
    finishResult(result);
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
