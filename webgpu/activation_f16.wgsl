// activation_f16.wgsl — array<f16> variants (suffix _f16) of the kernels in activation.wgsl, for
// adapters with the "shader-f16" feature. Not a module by itself: the host compiles
//     "enable f16;\n" + activation.wgsl + activation_f16.wgsl
// (ffn-webgpu.js does this when the device has the feature). Same ABI as the f32 kernels; the
// buffers hold the bytes of an array<f16> padded to 4 bytes, declared as array<vec2<f16>> so that
// a pair of elements is one 4-byte access. Each thread handles 4 pairs, which it moves through u32
// words (bitcast, so no f16 value is ever flushed), widens to f32, computes in f32 and rounds to
// nearest even exactly as the packed-f16 kernels do.

@group(0) @binding(0) var<storage, read_write> xh_io: array<vec2<f16>>;
@group(0) @binding(0) var<storage, read> in0_h: array<vec2<f16>>;
@group(0) @binding(1) var<storage, read> in1_h: array<vec2<f16>>;
@group(0) @binding(2) var<storage, read_write> out2_h: array<vec2<f16>>;
@group(0) @binding(2) var<storage, read> in2_h: array<vec2<f16>>;
@group(0) @binding(3) var<storage, read_write> out3_h: array<vec2<f16>>;
@group(0) @binding(4) var<storage, read_write> out4_h: array<vec2<f16>>;

// BEGIN GENERATED KERNELS (node webgpu/gen-kernels.mjs; edit the generator, not this part)

// --- f16 -------------------------------------------------------------------------------------------

fn store_xh_io(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { xh_io[i] = bitcast<vec2<f16>>(w); return; }
    xh_io[i].x = bitcast<vec2<f16>>(w).x;
}
fn store_out2_h(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { out2_h[i] = bitcast<vec2<f16>>(w); return; }
    out2_h[i].x = bitcast<vec2<f16>>(w).x;
}
fn store_out3_h(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { out3_h[i] = bitcast<vec2<f16>>(w); return; }
    out3_h[i].x = bitcast<vec2<f16>>(w).x;
}
fn store_out4_h(i: u32, w: u32, n: u32) {
    if (2u * i + 1u < n) { out4_h[i] = bitcast<vec2<f16>>(w); return; }
    out4_h[i].x = bitcast<vec2<f16>>(w).x;
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
        x_w.x = bitcast<u32>(xh_io[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(xh_io[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(xh_io[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(xh_io[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(unpack_h2(bitcast<u32>(xh_io[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        x_w.x = bitcast<u32>(xh_io[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(xh_io[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(xh_io[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(xh_io[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(unpack_h2(bitcast<u32>(xh_io[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        x_w.x = bitcast<u32>(xh_io[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(xh_io[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(xh_io[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(xh_io[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(unpack_h2(bitcast<u32>(xh_io[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        x_w.x = bitcast<u32>(xh_io[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(xh_io[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(xh_io[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(xh_io[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4_lp(select(x_1, x_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(unpack_h2(bitcast<u32>(xh_io[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_f4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
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
        x_w.x = bitcast<u32>(in0_h[u.i.x]); dy_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(in0_h[u.i.y]); dy_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(in0_h[u.i.z]); dy_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(in0_h[u.i.w]); dy_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        x_w.x = bitcast<u32>(in0_h[u.i.x]); dy_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(in0_h[u.i.y]); dy_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(in0_h[u.i.z]); dy_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(in0_h[u.i.w]); dy_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        x_w.x = bitcast<u32>(in0_h[u.i.x]); dy_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(in0_h[u.i.y]); dy_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(in0_h[u.i.z]); dy_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(in0_h[u.i.w]); dy_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        x_w.x = bitcast<u32>(in0_h[u.i.x]); dy_w.x = bitcast<u32>(in1_h[u.i.x]);
        if (u.ok.y) { x_w.y = bitcast<u32>(in0_h[u.i.y]); dy_w.y = bitcast<u32>(in1_h[u.i.y]); }
        if (u.ok.z) { x_w.z = bitcast<u32>(in0_h[u.i.z]); dy_w.z = bitcast<u32>(in1_h[u.i.z]); }
        if (u.ok.w) { x_w.w = bitcast<u32>(in0_h[u.i.w]); dy_w.w = bitcast<u32>(in1_h[u.i.w]); }
        let x_0 = V4(unpack_h2(x_w.x), unpack_h2(x_w.y));
        let x_1 = V4(unpack_h2(x_w.z), unpack_h2(x_w.w));
        let dy_0 = V4(unpack_h2(dy_w.x), unpack_h2(dy_w.y));
        let dy_1 = V4(unpack_h2(dy_w.z), unpack_h2(dy_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_d4_lp(select(x_1, x_0, g == 0u), select(dy_1, dy_0, g == 0u), ONE4);
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u], 1.0);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]); dh_w.x = bitcast<u32>(in2_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); dh_w.y = bitcast<u32>(in2_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); dh_w.z = bitcast<u32>(in2_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); dh_w.w = bitcast<u32>(in2_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = silu_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = silu_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = silu_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u]);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]); dh_w.x = bitcast<u32>(in2_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); dh_w.y = bitcast<u32>(in2_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); dh_w.z = bitcast<u32>(in2_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); dh_w.w = bitcast<u32>(in2_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_tanh_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_tanh_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_tanh_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u]);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]); dh_w.x = bitcast<u32>(in2_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); dh_w.y = bitcast<u32>(in2_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); dh_w.z = bitcast<u32>(in2_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); dh_w.w = bitcast<u32>(in2_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = gelu_erf_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = gelu_erf_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = gelu_erf_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u]);
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
        gate_w.x = bitcast<u32>(in0_h[u.i.x]); up_w.x = bitcast<u32>(in1_h[u.i.x]); dh_w.x = bitcast<u32>(in2_h[u.i.x]);
        if (u.ok.y) { gate_w.y = bitcast<u32>(in0_h[u.i.y]); up_w.y = bitcast<u32>(in1_h[u.i.y]); dh_w.y = bitcast<u32>(in2_h[u.i.y]); }
        if (u.ok.z) { gate_w.z = bitcast<u32>(in0_h[u.i.z]); up_w.z = bitcast<u32>(in1_h[u.i.z]); dh_w.z = bitcast<u32>(in2_h[u.i.z]); }
        if (u.ok.w) { gate_w.w = bitcast<u32>(in0_h[u.i.w]); up_w.w = bitcast<u32>(in1_h[u.i.w]); dh_w.w = bitcast<u32>(in2_h[u.i.w]); }
        let gate_0 = V4(unpack_h2(gate_w.x), unpack_h2(gate_w.y));
        let gate_1 = V4(unpack_h2(gate_w.z), unpack_h2(gate_w.w));
        let up_0 = V4(unpack_h2(up_w.x), unpack_h2(up_w.y));
        let up_1 = V4(unpack_h2(up_w.z), unpack_h2(up_w.w));
        let dh_0 = V4(unpack_h2(dh_w.x), unpack_h2(dh_w.y));
        let dh_1 = V4(unpack_h2(dh_w.z), unpack_h2(dh_w.w));
        let ok_0 = u.ok.xxyy;
        let ok_1 = u.ok.zzww;
        var y_0 = ZERO4; var y_1 = ZERO4;
        var z_0 = ZERO4; var z_1 = ZERO4;
        var m = 0u;
        for (var g = 0u; g < 2u; g++) {
            let r = relu_g4_lp(select(gate_1, gate_0, g == 0u), select(up_1, up_0, g == 0u), select(dh_1, dh_0, g == 0u));
            if (g == 0u) { y_0 = r.y; } else { y_1 = r.y; }
            if (g == 0u) { z_0 = r.z; } else { z_1 = r.z; }
            let bad = select(ok_1, ok_0, g == 0u) & !r.ok;
            if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }
        }
        while (m != 0u) {
            let j = countTrailingZeros(m);
            m = m & (m - 1u);
            let yj = relu_dmul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in1_h[u.i[j >> 1u]]))[j & 1u]);
            y_0 = with_lane4(y_0, j, yj);
            y_1 = with_lane4(y_1, j - 4u, yj);
            let zj = relu_mul(unpack_h2(bitcast<u32>(in0_h[u.i[j >> 1u]]))[j & 1u], unpack_h2(bitcast<u32>(in2_h[u.i[j >> 1u]]))[j & 1u]);
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
