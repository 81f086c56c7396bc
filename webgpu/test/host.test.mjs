// host.test.mjs — node:test unit tests of ffn-webgpu.js without a GPU: the module imports in
// Node, the dispatch grid and the kernels' grid-stride loop cover every element once, the tables
// match the entry points and bind group ABI of activation.wgsl, a mock GPUDevice sees one pipeline
// per entry point, the right bindings, grid and probe-derived constants, the generated part of
// the WGSL is up to date, and no error-free transformation is cancellable by a reassociating compiler. Run: node --test webgpu/test/host.test.mjs
import test from 'node:test';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import {
    KERNELS, KINDS, VARIANTS, WORKGROUP_SIZE, MAX_WORKGROUPS_PER_DIM,
    dispatchGrid, bufferSize, entryPoint, kernelBindings, loadWgslSources, FfnWebGPU,
} from '../ffn-webgpu.js';
import { emulateReassociation } from './fastmath.mjs';
import { computeOnlySource } from '../bench.mjs';

test('dispatchGrid: 1-D up to 65535 workgroups', () => {
    assert.deepEqual(dispatchGrid(0), [0, 1]);
    assert.deepEqual(dispatchGrid(1), [1, 1]);
    assert.deepEqual(dispatchGrid(256), [1, 1]);
    assert.deepEqual(dispatchGrid(257), [2, 1]);
    assert.deepEqual(dispatchGrid(65535 * 256), [65535, 1]);
    assert.deepEqual(dispatchGrid(1025, 4), [2, 1]);  // 257 threads of 4 lanes
    assert.deepEqual(dispatchGrid(513, 2), [2, 1]);
});

test('dispatchGrid: 2-D beyond 65535 workgroups', () => {
    assert.deepEqual(dispatchGrid(65535 * 256 + 1), [32768, 2]);
    assert.deepEqual(dispatchGrid(65535 * 256 + 1234), [32770, 2]);
    assert.deepEqual(dispatchGrid(65535 * 256 * 4 + 1, 4), [32768, 2]);
    assert.throws(() => dispatchGrid(2 ** 31), RangeError);  // the kernels need n < 2^31
    assert.deepEqual(dispatchGrid(2 ** 31 - 1, 8), [61681, 17]);
    assert.throws(() => dispatchGrid(-1), RangeError);
    assert.throws(() => dispatchGrid(1.5), RangeError);
    assert.throws(() => dispatchGrid(100, 1, 0), RangeError);
});

// Simulates the kernels' grid-stride loop: thread t (flat index t = gid.x + gid.y * nwg.x * 256)
// handles units t, t + T, t + 2T, ... below the unit count (T: threads in the grid). Every unit is
// covered exactly once, the host's grid gives no thread more units than it loads at once (4, or 2
// vec4), and no row of workgroups is wholly idle.
test('dispatchGrid: the grid-stride loop covers every unit once, for any per-dimension limit', () => {
    const unitLanes = { f32: 1, vec4: 4, f16pk: 2, f16: 2 }, unitsPerThread = { f32: 4, vec4: 2, f16pk: 4, f16: 4 };
    for (const variant of Object.keys(VARIANTS)) {
        const lanes = VARIANTS[variant].lanes;
        assert.equal(lanes, unitLanes[variant] * unitsPerThread[variant], variant);
        for (const limit of [1, 2, 3, 7, 64, MAX_WORKGROUPS_PER_DIM]) {
            for (const n of [1, 255, 256, 257, 1000, 4097, 70001]) {
                let grid;
                try {
                    grid = dispatchGrid(n, lanes, limit);
                } catch (e) {
                    assert.ok(Math.ceil(Math.ceil(n / lanes) / WORKGROUP_SIZE) > limit * limit, `${n} ${lanes} ${limit}`);
                    continue;
                }
                const [x, y] = grid;
                assert.ok(x <= limit && y <= limit, `grid ${x}x${y} over limit ${limit}`);
                const nu = Math.ceil(n / unitLanes[variant]), T = x * WORKGROUP_SIZE * y;
                const seen = new Uint8Array(nu);
                let most = 0;
                for (let t = 0; t < T; t++) {
                    let k = 0;
                    for (let u = t; u < nu; u += Math.min(T, nu)) seen[u]++, k++;
                    most = Math.max(most, k);
                }
                assert.ok(seen.every((c) => c === 1), `${variant} n=${n} limit=${limit}: not covered once`);
                assert.ok(most <= unitsPerThread[variant], `${variant} n=${n}: a thread has ${most} units`);
                assert.ok((y - 1) * x * WORKGROUP_SIZE * unitsPerThread[variant] < nu, `n=${n}: a whole row is idle`);
            }
        }
    }
});

test('bufferSize pads to the variant alignment', () => {
    assert.equal(bufferSize(1, 'f32'), 4);
    assert.equal(bufferSize(0, 'f32'), 4);
    assert.equal(bufferSize(5, 'vec4'), 32);
    assert.equal(bufferSize(3, 'f16pk'), 8);
    assert.equal(bufferSize(4, 'f16'), 8);
    assert.throws(() => bufferSize(4, 'bf16'), TypeError);
});

test('every kernel x variant is an entry point of the WGSL with the ABI of its kind', async () => {
    const src = await loadWgslSources();
    for (const [name, k] of Object.entries(KERNELS)) {
        for (const variant of Object.keys(VARIANTS)) {
            const text = variant === 'f16' ? src['activation_f16.wgsl'] : src['activation.wgsl'];
            const ep = entryPoint(name, variant);
            const m = text.match(new RegExp(`@compute @workgroup_size\\(256\\)\\s*fn ${ep}\\(([^]*?)\\n}`));
            assert.ok(m, `${ep} missing from the WGSL`);
            const body = m[1];
            const b = kernelBindings(name);
            assert.equal(b.paramsBinding, KINDS[k.kind].bindings.length);
            assert.ok(body.includes(`params${b.paramsBinding}.n`), `${ep} reads params${b.paramsBinding}`);
        }
    }
    // the uniform bindings declared in the WGSL are the ones the table uses
    for (const p of [1, 3, 5])
        assert.match(src['activation.wgsl'], new RegExp(`@binding\\(${p}\\) var<uniform> params${p}: Params`));
    assert.equal(entryPoint('swiglu_combine', 'vec4'), 'swiglu_combine_vec4');
    assert.throws(() => entryPoint('nope'), TypeError);
});

// A mock GPUDevice that records what the host asks of it.
function mockDevice(features = [], probeCount = 0) {
    const log = { pipelines: [], bindGroups: [], dispatches: [], writes: [], modules: [], constants: [] };
    const buffer = (desc) => ({ ...desc, destroyed: false, destroy() { this.destroyed = true; } });
    const device = {
        features: new Set(features),
        createShaderModule: (d) => (log.modules.push(d), { code: d.code }),
        createComputePipeline: (d) => (log.pipelines.push(d.compute.entryPoint), log.constants.push(d.compute.constants),
            { ep: d.compute.entryPoint, getBindGroupLayout: () => ({}) }),
        createBuffer: (desc) => ({
            ...buffer(desc),
            mapAsync: async () => {},
            getMappedRange: () => new Uint32Array(desc.size / 4).fill(probeCount).buffer,
            unmap() {},
        }),
        createBindGroup: (d) => (log.bindGroups.push(d), { d }),
        createCommandEncoder: () => ({
            copyBufferToBuffer() {},
            beginComputePass: () => ({
                setPipeline() {},
                setBindGroup() {},
                dispatchWorkgroups: (x, y, z) => log.dispatches.push([x, y, z]),
                end() {},
            }),
            finish: () => ({}),
        }),
        queue: { writeBuffer: (b, off, data) => log.writes.push([b, off, Array.from(data)]), submit() {} },
    };
    return { device, log };
}

test('FfnWebGPU with a mock device: pipelines once, bindings and grid per the ABI', async () => {
    const { device, log } = mockDevice();
    const ffn = await FfnWebGPU.create(device, { fma: false, f16Cvt: false });
    assert.equal(ffn.hasF16, false);
    assert.match(ffn.unsupportedReason('f16'), /shader-f16/);
    const n = 65535 * 256 + 7;
    const bufs = { gate: { size: bufferSize(n) }, up: { size: bufferSize(n) }, hidden: { size: bufferSize(n) } };
    ffn.run('swiglu_combine', 'f32', bufs, n);
    ffn.run('swiglu_combine', 'f32', bufs, 1000);
    assert.deepEqual(log.pipelines, ['swiglu_combine']);  // created once
    assert.deepEqual(log.dispatches, [[16384, 1, 1], [1, 1, 1]]);  // 4 elements per thread
    assert.deepEqual(log.constants[0], { FFN_FMA_EXACT: 0, FFN_F16_CVT: 0 });
    const bg = log.bindGroups[0].entries;
    assert.deepEqual(bg.map((e) => e.binding), [0, 1, 2, 3]);
    assert.equal(bg[0].resource.buffer, bufs.gate);
    assert.equal(bg[2].resource.buffer, bufs.hidden);
    assert.deepEqual(log.writes[0][2], [n, 0, 0, 0]);  // the uniform { n }
    ffn.run('swiglu_backward', 'vec4', { gate: {}, up: {}, dh: {}, dgate: {}, dup: {} }, 10);
    assert.deepEqual(log.bindGroups[2].entries.map((e) => e.binding), [0, 1, 2, 3, 4, 5]);
    assert.throws(() => ffn.run('gelu_inplace', 'f32', { x: { size: 8 } }, 100), RangeError);  // too small
    assert.throws(() => ffn.run('gelu_inplace', 'f32', {}, 4), TypeError);                      // missing
    assert.throws(() => ffn.run('gelu_inplace', 'f16', { x: {} }, 4), /shader-f16/);
    assert.equal(log.modules.length, 1);
});

test('FfnWebGPU builds the f16 module as enable f16 + both files when the feature exists', async () => {
    const { device, log } = mockDevice(['shader-f16']);
    const ffn = await FfnWebGPU.create(device, { fma: false, f16Cvt: false });
    ffn.run('gelu_inplace', 'f16', { x: {} }, 4);
    assert.ok(log.modules[0].code.startsWith('enable f16;\n'));
    assert.ok(log.modules[0].code.includes('fn gelu_inplace_f16('));
    assert.throws(() => new FfnWebGPU({}, {}), TypeError);
});

test('FfnWebGPU.create probes the device and passes what it found as pipeline constants', async () => {
    for (const [count, exact] of [[0, 1], [7, 0]]) {
        const { device, log } = mockDevice([], count);
        const ffn = await FfnWebGPU.create(device);
        assert.equal(log.pipelines[0], 'ffn_probe');
        assert.deepEqual(ffn.probeResult.counts, [count, count, count]);
        assert.equal(ffn.fmaExact, !!exact);
        ffn.run('gelu_inplace', 'f32', { x: {} }, 4);
        assert.deepEqual(log.constants.at(-1), { FFN_FMA_EXACT: exact, FFN_F16_CVT: exact });
    }
    const { device, log } = mockDevice([], 0);
    const ffn = await FfnWebGPU.create(device, { fma: false, f16Cvt: true });  // forced: no probe
    assert.equal(log.pipelines.length, 0);
    assert.equal(ffn.fmaExact, false);
    assert.equal(ffn.f16Cvt, true);
});

// A compiler may cancel (a + b) - a -> b (NVIDIA's does: the GeLU family's 60-225 ulp on an H200).
// Every error-free transformation of the kernels launders its intermediates through opaque(), so
// the emulation of that compiler (fastmath.mjs, which reproduces the H200 results of the unlaundered
// kernels on SwiftShader) must find nothing to cancel; and it must find the unlaundered forms.
test('no error-free transformation of the WGSL can be cancelled by a reassociating compiler', async () => {
    const src = await loadWgslSources();
    for (const [name, code] of Object.entries(src)) {
        const r = emulateReassociation(code);
        assert.deepEqual(r.where, [], `${name}: cancellable in ${r.where.join(', ')}`);
        assert.equal(r.source, code);
    }
    const unlaundered = `
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = a + b;
    let bb = s - a;
    return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}
fn fast_two_sum4(a: V4, b: V4) -> DF4 {
    let s = a + b;
    return DF4(s, b - (s - a));
}
fn split(t: DF4) -> DF4 {
    let d = t.hi - t.lo;
    return DF4(d, t.hi - d);
}
fn laundered(a: f32, b: f32) -> vec2<f32> {
    let s = opaque(a + b);
    return vec2<f32>(s, b - opaque(s - a));
}`;
    const r = emulateReassociation(unlaundered);
    assert.deepEqual(r.where, ['two_sum', 'fast_two_sum4', 'split']);
    assert.match(r.source, /vec2<f32>\(s, \(a - \(a\)\) \+ \(b - b\)\)/);  // error term 0
    assert.match(r.source, /DF4\(s, b - \(b\)\)/);
    assert.match(r.source, /DF4\(d, \(t\.lo\)\)/);  // hi - (hi - lo) -> lo
});

test('the generated kernels in the WGSL files are what gen-kernels.mjs writes', () => {
    const r = spawnSync(process.execPath, [fileURLToPath(new URL('../gen-kernels.mjs', import.meta.url)), '--check'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
});

// Dawn's null backend validates WGSL and pipelines without running them: every entry point of
// both modules (the f16 one with `enable f16;`, which SwiftShader cannot compile: it lacks
// shader-f16), with the pipeline constants the SwiftShader runs do not take (fma, f16 builtins),
// and the benchmark's compute-only form of both (bench.mjs, 'arith' rows).
test('every entry point creates a pipeline on Dawn (null backend), f16 module included', async (t) => {
    let webgpu;
    try {
        webgpu = await import('webgpu');
    } catch (e) {
        t.skip(`npm package 'webgpu' missing: ${e.message}`);
        return;
    }
    const gpu = webgpu.create(['backend=null']);
    const adapter = await gpu.requestAdapter();
    assert.ok(adapter?.features.has('shader-f16'), 'the null adapter offers shader-f16');
    const device = await adapter.requestDevice({ requiredFeatures: ['shader-f16'] });
    const plain = await loadWgslSources();
    const co = Object.fromEntries(Object.entries(plain).map(([k, v]) => [k, computeOnlySource(v)]));
    assert.notEqual(co['activation.wgsl'], plain['activation.wgsl']);
    for (const [key, variants, src] of [['f32', ['f32', 'vec4', 'f16pk'], plain], ['f16', ['f16'], plain],
        ['f32 compute-only', ['f32', 'vec4', 'f16pk'], co], ['f16 compute-only', ['f16'], co]]) {
        const code = key.startsWith('f16') ? `enable f16;\n${src['activation.wgsl']}\n${src['activation_f16.wgsl']}` : src['activation.wgsl'];
        const module = device.createShaderModule({ code });
        const info = await module.getCompilationInfo();
        assert.deepEqual(info.messages.map((m) => `${m.type} ${m.lineNum}: ${m.message}`), [], `${key} module`);
        device.pushErrorScope('validation');
        for (const kernel of Object.keys(KERNELS))
            for (const variant of variants)
                device.createComputePipeline({
                    layout: 'auto',
                    compute: { module, entryPoint: entryPoint(kernel, variant), constants: { FFN_FMA_EXACT: 1, FFN_F16_CVT: 1 } },
                });
        if (key.startsWith('f32')) device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'ffn_probe' } });
        const err = await device.popErrorScope();
        assert.equal(err, null, err?.message);
    }
    device.destroy();
    void gpu;  // dawn.node needs its GPU object alive while the device is in use
});
