// host.test.mjs — node:test unit tests of ffn-webgpu.js without a GPU: the module imports in
// Node, the dispatch grid covers exactly what the kernels' flat index needs, the tables match
// the entry points and bind group ABI of activation.wgsl, and a mock GPUDevice sees one pipeline
// per entry point and the right bindings and grid. Run: node --test webgpu/test/host.test.mjs
import test from 'node:test';
import assert from 'node:assert/strict';
import {
    KERNELS, KINDS, VARIANTS, WORKGROUP_SIZE, MAX_WORKGROUPS_PER_DIM,
    dispatchGrid, bufferSize, entryPoint, kernelBindings, loadWgslSources, FfnWebGPU,
} from '../ffn-webgpu.js';

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
    assert.throws(() => dispatchGrid(2 ** 32), RangeError);
    assert.throws(() => dispatchGrid(-1), RangeError);
    assert.throws(() => dispatchGrid(1.5), RangeError);
    assert.throws(() => dispatchGrid(100, 1, 0), RangeError);
});

// Simulates the kernels' flat index i = gid.x + gid.y * nwg.x * 256 over the grid: every element
// below n is covered exactly once, and no row of workgroups is wholly idle.
test('dispatchGrid: the flat index covers [0, n) once, for any per-dimension limit', () => {
    for (const lanes of [1, 2, 4]) {
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
                const threads = Math.ceil(n / lanes);
                const seen = new Uint8Array(threads);
                for (let gy = 0; gy < y; gy++)
                    for (let gx = 0; gx < x * WORKGROUP_SIZE; gx++) {
                        const i = gx + gy * (x * WORKGROUP_SIZE);
                        if (i < threads) seen[i]++;
                    }
                assert.ok(seen.every((c) => c === 1), `n=${n} lanes=${lanes} limit=${limit}: not covered once`);
                assert.ok((y - 1) * x * WORKGROUP_SIZE < threads, `n=${n}: a whole row is idle`);
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
function mockDevice(features = []) {
    const log = { pipelines: [], bindGroups: [], dispatches: [], writes: [], modules: [] };
    const buffer = (desc) => ({ ...desc, destroyed: false, destroy() { this.destroyed = true; } });
    const device = {
        features: new Set(features),
        createShaderModule: (d) => (log.modules.push(d), { code: d.code }),
        createComputePipeline: (d) => (log.pipelines.push(d.compute.entryPoint), { ep: d.compute.entryPoint, getBindGroupLayout: () => ({}) }),
        createBuffer: buffer,
        createBindGroup: (d) => (log.bindGroups.push(d), { d }),
        createCommandEncoder: () => ({
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
    const ffn = await FfnWebGPU.create(device);
    assert.equal(ffn.hasF16, false);
    assert.match(ffn.unsupportedReason('f16'), /shader-f16/);
    const n = 65535 * 256 + 7;
    const bufs = { gate: { size: bufferSize(n) }, up: { size: bufferSize(n) }, hidden: { size: bufferSize(n) } };
    ffn.run('swiglu_combine', 'f32', bufs, n);
    ffn.run('swiglu_combine', 'f32', bufs, 1000);
    assert.deepEqual(log.pipelines, ['swiglu_combine']);  // created once
    assert.deepEqual(log.dispatches, [[32768, 2, 1], [4, 1, 1]]);
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
    const ffn = await FfnWebGPU.create(device);
    ffn.run('gelu_inplace', 'f16', { x: {} }, 4);
    assert.ok(log.modules[0].code.startsWith('enable f16;\n'));
    assert.ok(log.modules[0].code.includes('fn gelu_inplace_f16('));
    assert.throws(() => new FfnWebGPU({}, {}), TypeError);
});
