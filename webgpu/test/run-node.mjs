// run-node.mjs — the kernel suite (suite.mjs) from Node through Dawn (npm `webgpu`), on whatever
// Vulkan driver the machine has: SwiftShader on a CPU (VK_ICD_FILENAMES=
// /usr/lib/chromium/vk_swiftshader_icd.json), a GPU's driver elsewhere. Registered with CTest.
//     node run-node.mjs --golden DIR [--out DIR] [--kernels a,b] [--variants f32,vec4] [--big 0]
//                       [--fma auto|0|1] [--f16cvt auto|0|1] [--emulate-fma] [--adapter NAME]
//                       [--emulate-reassoc] [--tag NAME] [--timeout S] [--no-f16-toggle]
// --fma / --f16cvt force the kernels' FFN_FMA_EXACT / FFN_F16_CVT instead of the probe's answer
// (--fma 0 runs the split products on a GPU whose fma is fused). --emulate-fma replaces fma() in
// the exact products by an exact software fma and sets FFN_FMA_EXACT: the fma code path, tested
// on a device whose fma is two roundings (SwiftShader). --emulate-reassoc rewrites the sources as a
// compiler that cancels (a + b) - a -> b would (fastmath.mjs; NVIDIA's does). Exit status 0 when
// every kernel is within its bound; writes OUT/webgpu-node-results[-TAG].json.
import fs from 'node:fs';
import path from 'node:path';
import { FfnWebGPU, loadWgslSources } from '../ffn-webgpu.js';
import { requestNodeDevice, adapterSummary } from '../ffn-webgpu-node.mjs';
import { parseGolden } from './golden.mjs';
import { emulateReassociation } from './fastmath.mjs';
import { runKernelSuite, finishResult, kernelTable, VARIANT_NAMES } from './suite.mjs';

function arg(name, def) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}
const flag = (name) => process.argv.includes(name);
const tri = (v) => (v === 'auto' ? 'auto' : v === '1' || v === 'true');

// An exact fma from the split product (exact where products round once and are not fused, as on
// SwiftShader): a*b + c = p + e + c, summed with one final rounding (double rounding only when
// s.y + p.y is itself inexact, which the kernels' uses - fma(a, b, -p), fma(-q, d, a) - avoid).
const FMA_EMULATION = {
    'fn fmx(a: f32, b: f32, c: f32) -> f32 { return fma(a, b, c); }':
        'fn fmx(a: f32, b: f32, c: f32) -> f32 { let p = two_prod_split(a, b); let s = two_sum(p.x, c); return s.x + (s.y + p.y); }',
    'fn fmx4(a: V4, b: V4, c: V4) -> V4 { return fma(a, b, c); }':
        'fn fmx4(a: V4, b: V4, c: V4) -> V4 { return V4(fmx(a.x, b.x, c.x), fmx(a.y, b.y, c.y), fmx(a.z, b.z, c.z), fmx(a.w, b.w, c.w)); }',
};
export function emulateFma(src) {
    for (const [from, to] of Object.entries(FMA_EMULATION)) {
        if (!src.includes(from)) throw new Error(`run-node: --emulate-fma: '${from}' not found in activation.wgsl`);
        src = src.replace(from, to);
    }
    return src;
}

async function main() {
    const golden = arg('--golden');
    const out = arg('--out', '.');
    const tag = arg('--tag', '');
    const timeoutMs = Number(arg('--timeout', 600)) * 1000;
    if (!golden) {
        console.error('usage: node run-node.mjs --golden DIR [--out DIR] [--kernels a,b] [--variants ...] [--fma auto|0|1] ' +
            '[--f16cvt auto|0|1] [--emulate-fma] [--big 0] [--adapter NAME] [--tag NAME] [--timeout S]');
        return 2;
    }
    if (!fs.existsSync(path.join(golden, 'manifest.json'))) {
        console.error(`run-node: ${golden}/manifest.json missing (run wgsl_golden first)`);
        return 1;
    }
    const watchdog = setTimeout(() => {
        console.error(`run-node: timed out after ${timeoutMs / 1000} s`);
        process.exit(1);
    }, timeoutMs);
    watchdog.unref();
    const t0 = performance.now();
    const { adapter, device, errors } = await requestNodeDevice({
        adapterName: arg('--adapter'), toggles: flag('--no-f16-toggle') ? [] : undefined,
    });
    const sources = await loadWgslSources();
    let fma = tri(arg('--fma', 'auto')), f16Cvt = tri(arg('--f16cvt', 'auto'));
    if (flag('--emulate-reassoc')) {
        for (const name of Object.keys(sources)) {
            const r = emulateReassociation(sources[name]);
            sources[name] = r.source;
            console.log(`--emulate-reassoc: ${name}: ${r.rewrites} cancellations${r.where.length ? ' in ' + r.where.join(', ') : ''}`);
        }
    }
    if (flag('--emulate-fma')) {
        sources['activation.wgsl'] = emulateFma(sources['activation.wgsl']);
        fma = true;
    }
    const ffn = await FfnWebGPU.create(device, { sources, fma, f16Cvt });
    const manifest = JSON.parse(fs.readFileSync(path.join(golden, 'manifest.json'), 'utf8'));
    const variants = arg('--variants') ? arg('--variants').split(',') : VARIANT_NAMES;
    const only = arg('--kernels') ? arg('--kernels').split(',') : null;
    const summary = adapterSummary(adapter);
    console.log(`adapter: ${summary.vendor} ${summary.device} (${summary.description}); shader-f16: ${ffn.hasF16}; ` +
        `probe: ${JSON.stringify(ffn.probeResult)}; FFN_FMA_EXACT=${ffn.fmaExact} FFN_F16_CVT=${ffn.f16Cvt}` +
        `${flag('--emulate-fma') ? ' (fma emulated)' : ''}`);
    const t1 = performance.now();
    await ffn.compile(manifest.kernels.map((k) => k.name).filter((k) => !only || only.includes(k)), variants);
    console.log(`pipelines: ${ffn.pipelines.size} compiled in ${Math.round(performance.now() - t1)} ms`);
    const result = await runKernelSuite({
        ffn, manifest, only, variants, doBig: arg('--big', '1') !== '0',
        log: process.env.FFN_WEB_VERBOSE ? console.log : () => {},
        loadGolden: async (file) => {
            const b = fs.readFileSync(path.join(golden, file));
            return parseGolden(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
        },
    });
    await device.queue.onSubmittedWorkDone();
    result.errors.push(...errors);
    result.adapter = summary;
    result.probe = ffn.probeResult;
    result.config = {
        fmaExact: ffn.fmaExact, f16Cvt: ffn.f16Cvt, emulateFma: flag('--emulate-fma'),
        emulateReassoc: flag('--emulate-reassoc'), variants,
    };
    finishResult(result);
    result.elapsedMs = Math.round(performance.now() - t0);
    console.log(kernelTable(result));
    fs.mkdirSync(out, { recursive: true });
    const file = path.join(out, `webgpu-node-results${tag ? '-' + tag : ''}.json`);
    fs.writeFileSync(file, JSON.stringify(result, null, 1));
    console.log(`${result.ok ? 'PASS' : 'FAIL'}: ${result.rows.length} kernel outputs checked in ${result.elapsedMs} ms (results: ${file})`);
    device.destroy();
    return result.ok ? 0 : 1;
}

main().then(
    (rc) => process.exit(rc),
    (e) => {
        console.error('run-node:', e && e.stack ? e.stack : e);
        process.exit(1);
    },
);
