// ffn-webgpu-node.mjs — a GPUDevice for ffn-webgpu.js in Node, from Dawn's npm package `webgpu`
// (Google's WebGPU implementation; on Linux it runs on any Vulkan driver: a GPU's, or SwiftShader
// on the CPU). Not here: the kernels and their host (ffn-webgpu.js), which need no Node APIs.
//     import { requestNodeDevice } from './ffn-webgpu-node.mjs';
//     const { device, adapter } = await requestNodeDevice({ features: ['timestamp-query'] });
//     const ffn = await FfnWebGPU.create(device);
// Needs `npm ci` in webgpu/ (webgpu is a pinned devDependency) and a Vulkan loader (libvulkan1);
// VK_ICD_FILENAMES picks a driver, e.g. SwiftShader's /usr/lib/chromium/vk_swiftshader_icd.json.

// Dawn refuses shader-f16 on NVIDIA's Vulkan driver unless this adapter toggle is on (its f16
// conformance tests were failing there: crbug.com/42251215). The WGSL kernels only move f16 data
// through u32 words and compute in f32, so they do not depend on the driver's f16 arithmetic.
export const NVIDIA_F16_TOGGLE = 'vulkan_enable_f16_on_nvidia';

// Dawn's GPU objects must outlive their devices: dawn.node crashes (SIGSEGV) when the garbage
// collector frees a GPU instance whose device is still in use. Held here for the process's life.
const LIVE_GPUS = [];

/// Creates Dawn's GPU object, then an adapter and a device.
/// backend: Dawn backend ('vulkan' on Linux); adapterName: a substring of the adapter's name;
/// features: wanted features, requested where the adapter offers them ('shader-f16' is always
/// wanted); toggles: Dawn toggles to enable (default: the NVIDIA f16 toggle; pass [] for none);
/// disabledToggles: Dawn toggles to disable (benchmarks: 'timestamp_quantization', which
/// otherwise rounds GPU timestamps to 65.5 us).
/// Returns { gpu, adapter, device, features, errors } (errors: uncaptured GPU error messages).
export async function requestNodeDevice({
    backend = 'vulkan', adapterName, features = [], toggles = [NVIDIA_F16_TOGGLE], disabledToggles = [],
    powerPreference = 'high-performance',
} = {}) {
    let webgpu;
    try {
        webgpu = await import('webgpu');
    } catch (e) {
        throw new Error(`ffn-webgpu-node: the npm package 'webgpu' is missing (npm ci in webgpu/): ${e.message}`);
    }
    const flags = [`backend=${backend}`];
    if (adapterName) flags.push(`adapter=${adapterName}`);
    if (toggles.length) flags.push(`enable-dawn-features=${toggles.join(',')}`);
    if (disabledToggles.length) flags.push(`disable-dawn-features=${disabledToggles.join(',')}`);
    const gpu = webgpu.create(flags);
    LIVE_GPUS.push(gpu);
    // The GPU* globals (GPUBufferUsage, GPUMapMode, ...) that browser code expects.
    for (const [k, v] of Object.entries(webgpu.globals)) if (!(k in globalThis)) globalThis[k] = v;
    const adapter = await gpu.requestAdapter({ powerPreference });
    if (!adapter) throw new Error(`ffn-webgpu-node: no ${backend} adapter (is a Vulkan driver installed? VK_ICD_FILENAMES?)`);
    const want = new Set(['shader-f16', ...features]);
    const requiredFeatures = [...want].filter((f) => adapter.features.has(f));
    const device = await adapter.requestDevice({
        requiredFeatures,
        requiredLimits: {
            maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
            maxBufferSize: adapter.limits.maxBufferSize,
        },
    });
    const errors = [];
    device.addEventListener?.('uncapturederror', (e) => errors.push(e.error.message));
    return { gpu, adapter, device, features: requiredFeatures, errors };
}

/// The adapter's description as a plain object (for logs and JSON).
export function adapterSummary(adapter) {
    const i = adapter.info ?? {};
    return {
        vendor: i.vendor, architecture: i.architecture, device: i.device, description: i.description,
        features: [...adapter.features].sort(),
        maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    };
}
