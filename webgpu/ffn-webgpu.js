// ffn-webgpu.js — the small ES-module host of libffn's WGSL activation kernels (activation.wgsl):
// creates each compute pipeline once, dispatches with the right grid (2-D beyond 65535
// workgroups), and reads results back. Works in a page (navigator.gpu) and imports cleanly in
// Node, where it accepts a GPUDevice from any provider; it never creates a device itself.
// Not here: the kernels' math (activation.wgsl) and the tests (test/). See README.md.

export const WORKGROUP_SIZE = 256;            // @workgroup_size of every kernel
export const MAX_WORKGROUPS_PER_DIM = 65535;  // WebGPU's default maxComputeWorkgroupsPerDimension

// Bind group ABI per kind: binding i holds bindings[i]; the uniform { n: u32 } follows them.
// The unary kernels work in place: binding 0 (x) is both input and output.
export const KINDS = Object.freeze({
    unary: { inputs: ['x'], outputs: ['x'], bindings: ['x'] },
    unary_bwd: { inputs: ['x', 'dy'], outputs: ['dx'], bindings: ['x', 'dy', 'dx'] },
    gated: { inputs: ['gate', 'up'], outputs: ['hidden'], bindings: ['gate', 'up', 'hidden'] },
    gated_bwd: {
        inputs: ['gate', 'up', 'dh'],
        outputs: ['dgate', 'dup'],
        bindings: ['gate', 'up', 'dh', 'dgate', 'dup'],
    },
});

// Every kernel of activation.wgsl (f32 entry point names; variants add a suffix).
export const KERNELS = Object.freeze({
    gelu_inplace: { kind: 'unary', act: 'gelu_tanh' },
    gelu_erf_inplace: { kind: 'unary', act: 'gelu_erf' },
    silu_inplace: { kind: 'unary', act: 'silu' },
    relu_inplace: { kind: 'unary', act: 'relu' },
    swiglu_combine: { kind: 'gated', act: 'silu' },
    geglu_combine: { kind: 'gated', act: 'gelu_tanh' },
    geglu_erf_combine: { kind: 'gated', act: 'gelu_erf' },
    reglu_combine: { kind: 'gated', act: 'relu' },
    gelu_backward: { kind: 'unary_bwd', act: 'gelu_tanh' },
    gelu_erf_backward: { kind: 'unary_bwd', act: 'gelu_erf' },
    silu_backward: { kind: 'unary_bwd', act: 'silu' },
    relu_backward: { kind: 'unary_bwd', act: 'relu' },
    swiglu_backward: { kind: 'gated_bwd', act: 'silu' },
    geglu_backward: { kind: 'gated_bwd', act: 'gelu_tanh' },
    geglu_erf_backward: { kind: 'gated_bwd', act: 'gelu_erf' },
    reglu_backward: { kind: 'gated_bwd', act: 'relu' },
});

// Storage variants. lanes = elements per thread in the grids this host dispatches (the kernels
// take any grid: they loop with a stride of the grid's thread count); align = buffer size
// granularity in bytes. f32/vec4 data are Float32Arrays; f16pk/f16 data are Uint16Arrays of f16
// bit patterns (the two share one memory layout: element 2k in the low half of u32 word k).
export const VARIANTS = Object.freeze({
    f32: { suffix: '', lanes: 4, elemBytes: 4, align: 4, dtype: 'f32' },
    vec4: { suffix: '_vec4', lanes: 8, elemBytes: 4, align: 16, dtype: 'f32' },
    f16pk: { suffix: '_f16pk', lanes: 8, elemBytes: 2, align: 4, dtype: 'f16' },
    f16: { suffix: '_f16', lanes: 8, elemBytes: 2, align: 4, dtype: 'f16', feature: 'shader-f16' },
});

// n is below 2^31 (the kernels rely on it; no storage binding holds more elements anyway).
export const MAX_ELEMENTS = 2 ** 31 - 1;

function kernelInfo(kernel) {
    const k = KERNELS[kernel];
    if (!k) throw new TypeError(`ffn-webgpu: unknown kernel '${kernel}'`);
    return { ...k, ...KINDS[k.kind], paramsBinding: KINDS[k.kind].bindings.length };
}

function variantInfo(variant) {
    const v = VARIANTS[variant];
    if (!v) throw new TypeError(`ffn-webgpu: unknown variant '${variant}'`);
    return v;
}

/// The WGSL entry point of `kernel` in storage `variant` ("swiglu_combine_vec4").
export function entryPoint(kernel, variant = 'f32') {
    kernelInfo(kernel);
    return kernel + variantInfo(variant).suffix;
}

/// Input names, output names and the uniform's binding number of a kernel.
export function kernelBindings(kernel) {
    const k = kernelInfo(kernel);
    return { inputs: k.inputs, outputs: k.outputs, bindings: k.bindings, paramsBinding: k.paramsBinding };
}

/// Workgroup grid [x, y] for n elements at `lanes` elements per thread: 256 threads per workgroup;
/// more than `maxPerDim` workgroups become a 2-D grid of ceil(groups / y) x y, which the kernels
/// flatten as i = gid.x + gid.y * (nwg.x * 256).
export function dispatchGrid(n, lanes = 1, maxPerDim = MAX_WORKGROUPS_PER_DIM) {
    if (!Number.isInteger(n) || n < 0 || n > MAX_ELEMENTS)
        throw new RangeError(`ffn-webgpu: n=${n} must be an integer in [0, 2^31)`);
    if (!Number.isInteger(lanes) || lanes < 1) throw new RangeError(`ffn-webgpu: lanes=${lanes}`);
    if (!Number.isInteger(maxPerDim) || maxPerDim < 1)
        throw new RangeError(`ffn-webgpu: maxPerDim=${maxPerDim}`);
    const groups = Math.ceil(Math.ceil(n / lanes) / WORKGROUP_SIZE);
    if (groups <= maxPerDim) return [groups, 1];
    const y = Math.ceil(groups / maxPerDim);
    if (y > maxPerDim)
        throw new RangeError(`ffn-webgpu: n=${n} needs ${groups} workgroups, more than ${maxPerDim}^2`);
    const x = Math.ceil(groups / y);
    if (x * WORKGROUP_SIZE * y > 0xffffffff)
        throw new RangeError(`ffn-webgpu: n=${n}: the grid's flat index would overflow u32`);
    return [x, y];
}

/// Bytes of a buffer holding n elements of `variant`, padded to its alignment (at least one
/// aligned unit: WebGPU has no empty storage binding).
export function bufferSize(n, variant = 'f32') {
    const v = variantInfo(variant);
    return Math.max(v.align, Math.ceil((n * v.elemBytes) / v.align) * v.align);
}

/// The WGSL sources: { 'activation.wgsl': text, 'activation_f16.wgsl': text }. In a page they
/// are fetched next to this module (or from `base`); in Node they are read from disk.
export async function loadWgslSources(base = new URL('./', import.meta.url)) {
    const names = ['activation.wgsl', 'activation_f16.wgsl'];
    const out = {};
    const url = (name) => new URL(name, base);
    if (url(names[0]).protocol === 'file:') {
        const fs = await import('node:fs/promises');
        for (const name of names) out[name] = await fs.readFile(url(name), 'utf8');
    } else {
        for (const name of names) {
            const r = await fetch(url(name));
            if (!r.ok) throw new Error(`ffn-webgpu: fetching ${url(name)}: HTTP ${r.status}`);
            out[name] = await r.text();
        }
    }
    return out;
}

// GPUBufferUsage / GPUMapMode values (WebGPU spec), so the module needs no globals in Node.
const USAGE = { MAP_READ: 0x1, COPY_SRC: 0x4, COPY_DST: 0x8, UNIFORM: 0x40, STORAGE: 0x80 };
const MAP_READ = 0x1;

/// One prepared dispatch: its pipeline, bind group and grid. encode() may be called many times
/// (benchmarks); destroy() frees its uniform buffer.
class Dispatch {
    constructor(pipeline, bindGroup, grid, uniform) {
        this.pipeline = pipeline;
        this.bindGroup = bindGroup;
        this.grid = grid;
        this.uniform = uniform;
    }
    encode(pass) {
        pass.setPipeline(this.pipeline);
        pass.setBindGroup(0, this.bindGroup);
        if (this.grid[0] > 0) pass.dispatchWorkgroups(this.grid[0], this.grid[1], 1);
    }
    destroy() {
        this.uniform.destroy();
    }
}

export class FfnWebGPU {
    /// device: a GPUDevice (request 'shader-f16' on it to use the f16 variants).
    /// sources: from loadWgslSources() (default: loaded next to this module).
    /// fma, f16Cvt: 'auto' (default: decided by a probe dispatch on the device), true or false —
    /// whether the kernels may rely on a fused fma() and on exact f16 conversion builtins. false
    /// is correct on every device; true is faster where it holds, and wrong where it does not.
    static async create(device, { sources, fma = 'auto', f16Cvt = 'auto' } = {}) {
        const ffn = new FfnWebGPU(device, sources ?? (await loadWgslSources()));
        const probe = fma === 'auto' || f16Cvt === 'auto' ? await ffn.probe() : null;
        ffn.fmaExact = fma === 'auto' ? probe.fmaExact : !!fma;
        ffn.f16Cvt = f16Cvt === 'auto' ? probe.f16Cvt : !!f16Cvt;
        return ffn;
    }

    constructor(device, sources) {
        if (!device || typeof device.createShaderModule !== 'function')
            throw new TypeError('ffn-webgpu: a GPUDevice is required');
        if (!sources || typeof sources['activation.wgsl'] !== 'string')
            throw new TypeError("ffn-webgpu: sources['activation.wgsl'] is required");
        this.device = device;
        this.sources = sources;
        this.hasF16 = !!device.features?.has?.('shader-f16');
        this.fmaExact = false;       // the pipelines' FFN_FMA_EXACT (set by create())
        this.f16Cvt = false;         // the pipelines' FFN_F16_CVT
        this.probeResult = null;     // what probe() counted
        this.modules = new Map();    // 'f32' | 'f16' -> GPUShaderModule
        this.pipelines = new Map();  // entry point -> GPUComputePipeline (created once)
    }

    /// Runs the kernel ffn_probe once: counts the products where fma(a, b, -a*b) is not the exact
    /// error, and the f16 values or rounding boundaries where unpack2x16float / pack2x16float are
    /// not exact round-to-nearest-even. Returns { fmaExact, f16Cvt, counts }.
    async probe() {
        const d = this.device;
        const pipeline = d.createComputePipeline({
            label: 'ffn_probe', layout: 'auto', compute: { module: this.module('f32'), entryPoint: 'ffn_probe' },
        });
        const buf = d.createBuffer({ size: 16, usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST });
        d.queue.writeBuffer(buf, 0, new Uint32Array(4));
        const bindGroup = d.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] });
        const enc = d.createCommandEncoder(), pass = enc.beginComputePass();
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup);
        pass.dispatchWorkgroups(256, 1, 1);
        pass.end();
        d.queue.submit([enc.finish()]);
        const counts = new Uint32Array((await this.read(buf, 4, 'f32')).buffer);
        buf.destroy();
        this.probeResult = { fmaExact: counts[0] === 0, f16Cvt: counts[1] === 0 && counts[2] === 0, counts: [...counts.slice(0, 3)] };
        return this.probeResult;
    }

    /// null if `variant` can run on this device, else the reason why not.
    unsupportedReason(variant) {
        const v = variantInfo(variant);
        if (v.feature && !this.device.features?.has?.(v.feature))
            return `the device lacks the '${v.feature}' feature`;
        if (v.feature === 'shader-f16' && typeof this.sources['activation_f16.wgsl'] !== 'string')
            return 'activation_f16.wgsl was not loaded';
        return null;
    }

    module(variant) {
        const key = variant === 'f16' ? 'f16' : 'f32';
        if (!this.modules.has(key)) {
            const code = key === 'f16'
                ? 'enable f16;\n' + this.sources['activation.wgsl'] + '\n' + this.sources['activation_f16.wgsl']
                : this.sources['activation.wgsl'];
            this.modules.set(key, this.device.createShaderModule({ label: `ffn ${key}`, code }));
        }
        return this.modules.get(key);
    }

    pipelineDescriptor(ep, variant) {
        return {
            label: ep,
            layout: 'auto',
            compute: {
                module: this.module(variant),
                entryPoint: ep,
                constants: { FFN_FMA_EXACT: this.fmaExact ? 1 : 0, FFN_F16_CVT: this.f16Cvt ? 1 : 0 },
            },
        };
    }

    /// The compute pipeline of a kernel variant, created on first use and cached.
    pipeline(kernel, variant = 'f32') {
        const ep = entryPoint(kernel, variant);
        let p = this.pipelines.get(ep);
        if (!p) {
            const why = this.unsupportedReason(variant);
            if (why) throw new Error(`ffn-webgpu: ${ep}: ${why}`);
            p = this.device.createComputePipeline(this.pipelineDescriptor(ep, variant));
            this.pipelines.set(ep, p);
        }
        return p;
    }

    /// Creates the pipelines of several kernels ahead of time (asynchronously, in parallel).
    async compile(kernels = Object.keys(KERNELS), variants = ['f32']) {
        const todo = [];
        for (const variant of variants) {
            if (this.unsupportedReason(variant)) continue;
            for (const kernel of kernels) {
                const ep = entryPoint(kernel, variant);
                if (this.pipelines.has(ep)) continue;
                const desc = this.pipelineDescriptor(ep, variant);
                todo.push(
                    (this.device.createComputePipelineAsync
                        ? this.device.createComputePipelineAsync(desc)
                        : Promise.resolve(this.device.createComputePipeline(desc))
                    ).then((p) => this.pipelines.set(ep, p)),
                );
            }
        }
        await Promise.all(todo);
    }

    /// Prepares a dispatch of `kernel` over n elements. buffers: { name: GPUBuffer } with the
    /// names of kernelBindings(kernel).bindings, each created with STORAGE usage and at least
    /// bufferSize(n, variant) bytes. opts.maxWorkgroupsPerDim forces 2-D grids, opts.grid = [x, y]
    /// any other grid (tests: the kernels cover n elements with any grid).
    prepare(kernel, variant, buffers, n, opts = {}) {
        const k = kernelInfo(kernel);
        const v = variantInfo(variant);
        const grid = opts.grid ?? dispatchGrid(n, v.lanes, opts.maxWorkgroupsPerDim ?? MAX_WORKGROUPS_PER_DIM);
        const need = bufferSize(n, variant);
        const entries = k.bindings.map((name, binding) => {
            const b = buffers[name];
            if (!b) throw new TypeError(`ffn-webgpu: ${kernel}: buffer '${name}' missing`);
            if (typeof b.size === 'number' && b.size < need)
                throw new RangeError(`ffn-webgpu: ${kernel}: buffer '${name}' has ${b.size} bytes, n=${n} needs ${need}`);
            return { binding, resource: { buffer: b } };
        });
        const pipeline = this.pipeline(kernel, variant);
        const uniform = this.device.createBuffer({ size: 16, usage: USAGE.UNIFORM | USAGE.COPY_DST });
        this.device.queue.writeBuffer(uniform, 0, new Uint32Array([n, 0, 0, 0]));
        entries.push({ binding: k.paramsBinding, resource: { buffer: uniform } });
        const bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
        return new Dispatch(pipeline, bindGroup, grid, uniform);
    }

    /// Encodes and submits one dispatch (no readback).
    run(kernel, variant, buffers, n, opts = {}) {
        const d = this.prepare(kernel, variant, buffers, n, opts);
        const enc = this.device.createCommandEncoder();
        const pass = enc.beginComputePass();
        d.encode(pass);
        pass.end();
        this.device.queue.submit([enc.finish()]);
        return d;
    }

    /// A storage buffer for n elements of `variant`, optionally filled with `data` (a typed array:
    /// Float32Array for f32/vec4, Uint16Array of f16 bits for f16pk/f16).
    createBuffer(n, variant = 'f32', data = null, label = '') {
        const size = bufferSize(n, variant);
        const buf = this.device.createBuffer({
            label,
            size,
            usage: USAGE.STORAGE | USAGE.COPY_SRC | USAGE.COPY_DST,
        });
        if (data) {
            const bytes = new Uint8Array(size);
            bytes.set(new Uint8Array(data.buffer, data.byteOffset, Math.min(data.byteLength, size)));
            this.device.queue.writeBuffer(buf, 0, bytes);
        }
        return buf;
    }

    /// Copies `count` elements of `variant` out of a storage buffer.
    async read(buffer, count, variant = 'f32') {
        const v = variantInfo(variant);
        const size = bufferSize(count, variant);
        const staging = this.device.createBuffer({ size, usage: USAGE.MAP_READ | USAGE.COPY_DST });
        const enc = this.device.createCommandEncoder();
        enc.copyBufferToBuffer(buffer, 0, staging, 0, size);
        this.device.queue.submit([enc.finish()]);
        await staging.mapAsync(MAP_READ);
        const bytes = staging.getMappedRange().slice(0, count * v.elemBytes);
        staging.unmap();
        staging.destroy();
        return v.elemBytes === 4 ? new Float32Array(bytes) : new Uint16Array(bytes);
    }

    /// Uploads typed arrays, runs the kernel, reads the outputs back.
    /// arrays: { x } | { x, dy } | { gate, up } | { gate, up, dh } (kernelBindings().inputs);
    /// returns { x } | { dx } | { hidden } | { dgate, dup }. n defaults to the first input's length.
    async compute(kernel, arrays, { variant = 'f32', n, maxWorkgroupsPerDim, grid } = {}) {
        const k = kernelInfo(kernel);
        const count = n ?? arrays[k.inputs[0]]?.length;
        if (!Number.isInteger(count)) throw new TypeError(`ffn-webgpu: ${kernel}: no input '${k.inputs[0]}'`);
        for (const name of k.inputs) {
            if (!arrays[name] || arrays[name].length < count)
                throw new RangeError(`ffn-webgpu: ${kernel}: input '${name}' needs ${count} elements`);
        }
        const buffers = {};
        for (const name of k.bindings) buffers[name] = this.createBuffer(count, variant, arrays[name] ?? null, name);
        const d = this.run(kernel, variant, buffers, count, { maxWorkgroupsPerDim, grid });
        const out = {};
        for (const name of k.outputs) out[name] = await this.read(buffers[name], count, variant);
        d.destroy();
        for (const b of Object.values(buffers)) b.destroy();
        return out;
    }
}
