// activation_f16.wgsl — array<f16> variants (suffix _f16) of the kernels in activation.wgsl, for
// adapters with the "shader-f16" feature. Not a module by itself: the host compiles
//     "enable f16;\n" + activation.wgsl + activation_f16.wgsl
// (ffn-webgpu.js does this when the device has the feature). Same ABI as the f32 kernels; each
// thread handles 4 pairs of elements, which it moves through u32 words (bitcast, so no f16 value
// is ever flushed), widens to f32, computes in f32 and rounds to nearest even exactly as the
// packed-f16 kernels do.

@group(0) @binding(0) var<storage, read_write> xh_io: array<f16>;
@group(0) @binding(0) var<storage, read> in0_h: array<f16>;
@group(0) @binding(1) var<storage, read> in1_h: array<f16>;
@group(0) @binding(2) var<storage, read_write> out2_h: array<f16>;
@group(0) @binding(2) var<storage, read> in2_h: array<f16>;
@group(0) @binding(3) var<storage, read_write> out3_h: array<f16>;
@group(0) @binding(4) var<storage, read_write> out4_h: array<f16>;

// BEGIN GENERATED KERNELS (node webgpu/gen-kernels.mjs; edit the generator, not this part)

// --- f16 -------------------------------------------------------------------------------------------

fn store_xh_io(i: u32, w: u32, n: u32) {
    let h = bitcast<vec2<f16>>(w);
    xh_io[2u * i] = h.x;
    if (2u * i + 1u < n) { xh_io[2u * i + 1u] = h.y; }
}
fn store_out2_h(i: u32, w: u32, n: u32) {
    let h = bitcast<vec2<f16>>(w);
    out2_h[2u * i] = h.x;
    if (2u * i + 1u < n) { out2_h[2u * i + 1u] = h.y; }
}
fn store_out3_h(i: u32, w: u32, n: u32) {
    let h = bitcast<vec2<f16>>(w);
    out3_h[2u * i] = h.x;
    if (2u * i + 1u < n) { out3_h[2u * i + 1u] = h.y; }
}
fn store_out4_h(i: u32, w: u32, n: u32) {
    let h = bitcast<vec2<f16>>(w);
    out4_h[2u * i] = h.x;
    if (2u * i + 1u < n) { out4_h[2u * i + 1u] = h.y; }
}

@compute @workgroup_size(256)
fn gelu_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.x], xh_io[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.y], xh_io[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.z], xh_io[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.w], xh_io[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(lane8(x_0, x_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xh_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xh_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xh_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xh_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.x], xh_io[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.y], xh_io[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.z], xh_io[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.w], xh_io[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(lane8(x_0, x_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xh_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xh_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xh_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xh_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.x], xh_io[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.y], xh_io[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.z], xh_io[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.w], xh_io[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(lane8(x_0, x_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xh_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xh_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xh_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xh_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_inplace_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params1.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.x], xh_io[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.y], xh_io[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.z], xh_io[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(xh_io[2u * u.i.w], xh_io[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(lane8(x_0, x_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_xh_io(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_xh_io(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_xh_io(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_xh_io(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(lane8(gate_0, gate_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(lane8(gate_0, gate_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(lane8(gate_0, gate_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_combine_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(lane8(gate_0, gate_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); dy_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); dy_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); dy_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); dy_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(lane8(x_0, x_1, j), lane8(dy_0, dy_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn gelu_erf_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); dy_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); dy_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); dy_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); dy_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(lane8(x_0, x_1, j), lane8(dy_0, dy_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn silu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); dy_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); dy_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); dy_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); dy_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(lane8(x_0, x_1, j), lane8(dy_0, dy_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn relu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params3.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var x_w = U4(0u);
        var dy_w = U4(0u);
        x_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); dy_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u]));
        if (u.ok.y) { x_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); dy_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { x_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); dy_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { x_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); dy_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(lane8(x_0, x_1, j), lane8(dy_0, dy_1, j), 1.0);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
        }
        store_out2_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out2_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out2_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out2_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn swiglu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u])); dh_w.x = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.x], in2_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); dh_w.y = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.y], in2_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); dh_w.z = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.z], in2_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); dh_w.w = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.w], in2_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = silu_mul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j));
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_h(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_h(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_h(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_h(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u])); dh_w.x = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.x], in2_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); dh_w.y = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.y], in2_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); dh_w.z = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.z], in2_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); dh_w.w = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.w], in2_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_tanh_mul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j));
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_h(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_h(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_h(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_h(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn geglu_erf_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u])); dh_w.x = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.x], in2_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); dh_w.y = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.y], in2_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); dh_w.z = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.z], in2_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); dh_w.w = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.w], in2_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_erf_mul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j));
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_h(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_h(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_h(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_h(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

@compute @workgroup_size(256)
fn reglu_backward_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params5.n;
    ffn_zero = n & SIGN_MASK;
    let nu = (n + 1u) / 2u;
    let st = min(grid_threads(nwg), nu);
    var u0 = flat_id(gid, nwg);
    while (u0 < nu) {
        let u = units4(u0, st, nu);
        var gate_w = U4(0u);
        var up_w = U4(0u);
        var dh_w = U4(0u);
        gate_w.x = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.x], in0_h[2u * u.i.x + 1u])); up_w.x = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.x], in1_h[2u * u.i.x + 1u])); dh_w.x = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.x], in2_h[2u * u.i.x + 1u]));
        if (u.ok.y) { gate_w.y = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.y], in0_h[2u * u.i.y + 1u])); up_w.y = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.y], in1_h[2u * u.i.y + 1u])); dh_w.y = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.y], in2_h[2u * u.i.y + 1u])); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.z], in0_h[2u * u.i.z + 1u])); up_w.z = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.z], in1_h[2u * u.i.z + 1u])); dh_w.z = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.z], in2_h[2u * u.i.z + 1u])); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(vec2<f16>(in0_h[2u * u.i.w], in0_h[2u * u.i.w + 1u])); up_w.w = bitcast<u32>(vec2<f16>(in1_h[2u * u.i.w], in1_h[2u * u.i.w + 1u])); dh_w.w = bitcast<u32>(vec2<f16>(in2_h[2u * u.i.w], in2_h[2u * u.i.w + 1u])); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = pair_lanes(u.i.xy, u.ok.xy, n);
        let ok_1 = pair_lanes(u.i.zw, u.ok.zw, n);
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            m = m | (bits4(select(ok_1, ok_0, g == 0u) & !r.ok) << (4u * g));
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j), lane8(up_0, up_1, j));
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = relu_mul(lane8(gate_0, gate_1, j), lane8(dh_0, dh_1, j));
            z_0 = with_lane4(z_0, j, zj);
            z_1 = with_lane4(z_1, j - 4u, zj);
        }
        store_out3_h(u.i.x, pack_h2(y_0.x, y_0.y), n);
        if (u.ok.y) { store_out3_h(u.i.y, pack_h2(y_0.z, y_0.w), n); }
        if (u.ok.z) { store_out3_h(u.i.z, pack_h2(y_1.x, y_1.y), n); }
        if (u.ok.w) { store_out3_h(u.i.w, pack_h2(y_1.z, y_1.w), n); }
        store_out4_h(u.i.x, pack_h2(z_0.x, z_0.y), n);
        if (u.ok.y) { store_out4_h(u.i.y, pack_h2(z_0.z, z_0.w), n); }
        if (u.ok.z) { store_out4_h(u.i.z, pack_h2(z_1.x, z_1.y), n); }
        if (u.ok.w) { store_out4_h(u.i.w, pack_h2(z_1.z, z_1.w), n); }
        u0 = u.next;
    }
}

// END GENERATED KERNELS
