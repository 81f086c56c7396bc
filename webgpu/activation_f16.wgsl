// activation_f16.wgsl — array<f16> variants (suffix _f16) of the kernels in activation.wgsl, for
// adapters with the "shader-f16" feature. Not a module by itself: the host compiles
//     "enable f16;\n" + activation.wgsl + activation_f16.wgsl
// (ffn-webgpu.js does this when the device has the feature). Same ABI as the f32 kernels, one
// element per thread; inputs widened to f32 exactly, arithmetic in f32, results rounded to nearest
// even by f32_to_f16 (WGSL's own f32 -> f16 conversion does not promise a rounding mode).

@group(0) @binding(0) var<storage, read_write> xh_io: array<f16>;
@group(0) @binding(0) var<storage, read> in0_h: array<f16>;
@group(0) @binding(1) var<storage, read> in1_h: array<f16>;
@group(0) @binding(2) var<storage, read_write> out2_h: array<f16>;
@group(0) @binding(2) var<storage, read> in2_h: array<f16>;
@group(0) @binding(3) var<storage, read_write> out3_h: array<f16>;
@group(0) @binding(4) var<storage, read_write> out4_h: array<f16>;

// f32 -> f16, round to nearest even, through the bits.
fn to_h(v: f32) -> f16 { return bitcast<vec2<f16>>(f32_to_f16(v)).x; }

@compute @workgroup_size(256)
fn gelu_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    xh_io[i] = to_h(gelu_tanh_mul(f32(xh_io[i]), 1.0));
}

@compute @workgroup_size(256)
fn gelu_erf_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    xh_io[i] = to_h(gelu_erf_mul(f32(xh_io[i]), 1.0));
}

@compute @workgroup_size(256)
fn silu_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    xh_io[i] = to_h(silu_mul(f32(xh_io[i]), 1.0));
}

@compute @workgroup_size(256)
fn relu_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params1.n) { return; }
    xh_io[i] = to_h(relu_mul(f32(xh_io[i]), 1.0));
}

@compute @workgroup_size(256)
fn swiglu_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(silu_mul(f32(in0_h[i]), f32(in1_h[i])));
}

@compute @workgroup_size(256)
fn geglu_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(gelu_tanh_mul(f32(in0_h[i]), f32(in1_h[i])));
}

@compute @workgroup_size(256)
fn geglu_erf_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(gelu_erf_mul(f32(in0_h[i]), f32(in1_h[i])));
}

@compute @workgroup_size(256)
fn reglu_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(relu_mul(f32(in0_h[i]), f32(in1_h[i])));
}

@compute @workgroup_size(256)
fn gelu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(gelu_tanh_dmul(f32(in0_h[i]), f32(in1_h[i]), 1.0));
}

@compute @workgroup_size(256)
fn gelu_erf_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(gelu_erf_dmul(f32(in0_h[i]), f32(in1_h[i]), 1.0));
}

@compute @workgroup_size(256)
fn silu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(silu_dmul(f32(in0_h[i]), f32(in1_h[i]), 1.0));
}

@compute @workgroup_size(256)
fn relu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params3.n) { return; }
    out2_h[i] = to_h(relu_dmul(f32(in0_h[i]), f32(in1_h[i]), 1.0));
}

@compute @workgroup_size(256)
fn swiglu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = f32(in0_h[i]);
    let u = f32(in1_h[i]);
    let d = f32(in2_h[i]);
    out3_h[i] = to_h(silu_dmul(g, d, u));
    out4_h[i] = to_h(silu_mul(g, d));
}

@compute @workgroup_size(256)
fn geglu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = f32(in0_h[i]);
    let u = f32(in1_h[i]);
    let d = f32(in2_h[i]);
    out3_h[i] = to_h(gelu_tanh_dmul(g, d, u));
    out4_h[i] = to_h(gelu_tanh_mul(g, d));
}

@compute @workgroup_size(256)
fn geglu_erf_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = f32(in0_h[i]);
    let u = f32(in1_h[i]);
    let d = f32(in2_h[i]);
    out3_h[i] = to_h(gelu_erf_dmul(g, d, u));
    out4_h[i] = to_h(gelu_erf_mul(g, d));
}

@compute @workgroup_size(256)
fn reglu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = flat_id(gid, nwg);
    if (i >= params5.n) { return; }
    let g = f32(in0_h[i]);
    let u = f32(in1_h[i]);
    let d = f32(in2_h[i]);
    out3_h[i] = to_h(relu_dmul(g, d, u));
    out4_h[i] = to_h(relu_mul(g, d));
}
