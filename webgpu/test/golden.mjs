// golden.mjs — reads the golden files written by tests/backends/wgsl_golden.c (the C scalar
// reference's inputs and outputs) and compares kernel outputs with them in ulps. Shared by the
// browser test (browser-test.mjs) and the demo page; plain ES module, no DOM, no WebGPU.
// The tolerance table here is the one documented in docs/numerics.md ("WebGPU (WGSL)").

// Max error in ulps of the storage type, for results that are normal floats (the metric of
// docs/numerics.md, as the CPU's: relative for forward outputs and dup; for dx and dgate absolute,
// in ulps of max(|exact|, scale), scale = |multipliers| x the largest term of act'(x), so that
// near a zero of the derivative the bound is absolute).
export const TOL_F32 = Object.freeze({
    gelu_inplace: 4, gelu_erf_inplace: 4, silu_inplace: 2, relu_inplace: 0,
    swiglu_combine: 4, geglu_combine: 4, geglu_erf_combine: 4, reglu_combine: 0,
    gelu_backward: 8, gelu_erf_backward: 8, silu_backward: 8, relu_backward: 0,
    swiglu_backward: 8, geglu_backward: 8, geglu_erf_backward: 8, reglu_backward: 0,
});
export const TOL_F16 = 1;  // every kernel: its f32 result rounded to nearest even
export const F32_MIN_NORMAL = 2 ** -126;

const HEADER_BYTES = 48;
export const EXACT_BITS = 1;  // an input is 0, inf or NaN: a 0 / inf / NaN result matches bitwise
export const EXACT_SKIP = 2;  // the double reference underflows there: not compared

/// Parses one golden file (ArrayBuffer).
export function parseGolden(buf) {
    const magic = new TextDecoder().decode(new Uint8Array(buf, 0, 8));
    if (magic !== 'FFNWGSL1') throw new Error(`golden: bad magic '${magic}'`);
    const h = new Uint32Array(buf.slice(8, HEADER_BYTES));
    const [version, f16, n, nIn, nOut] = h;
    if (version !== 1) throw new Error(`golden: version ${version}`);
    const seg = [h[5], h[6], h[7], h[8]];
    const es = f16 ? 2 : 4;
    const need = HEADER_BYTES + (nIn + nOut) * n * es + nOut * n * 4 + n;
    if (buf.byteLength !== need) throw new Error(`golden: ${buf.byteLength} bytes, expected ${need}`);
    let off = HEADER_BYTES;
    const take = (Type, count, size) => {
        const a = new Type(buf.slice(off, off + count * size));
        off += count * size;
        return a;
    };
    const Elem = f16 ? Uint16Array : Float32Array;
    const inputs = [], outputs = [], scales = [];
    for (let j = 0; j < nIn; j++) inputs.push(take(Elem, n, es));
    for (let j = 0; j < nOut; j++) outputs.push(take(Elem, n, es));
    for (let j = 0; j < nOut; j++) scales.push(take(Float32Array, n, 4));
    const exact = take(Uint8Array, n, 1);
    return { dtype: f16 ? 'f16' : 'f32', n, nIn, nOut, seg, inputs, outputs, scales, exact };
}

// --- f16 / f32 helpers -------------------------------------------------------------------------
export function f16ToF32(h) {
    const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e === 0) return s * m * 2 ** -24;
    if (e === 31) return m ? NaN : s * Infinity;
    return s * (1 + m / 1024) * 2 ** (e - 15);
}

const f32buf = new Float32Array(1), u32buf = new Uint32Array(f32buf.buffer);
export function f32Bits(x) {
    f32buf[0] = x;
    return u32buf[0];
}
// Position on the number line in ulps (-0 and +0 are both 0).
function ordF32(x) {
    const b = f32Bits(x);
    return b & 0x80000000 ? -(b & 0x7fffffff) : b;
}
function ordF16(h) {
    return h & 0x8000 ? -(h & 0x7fff) : h;
}
// ulp of a positive normal-or-larger value v in the storage type.
function ulpOf(v, dtype) {
    const e = Math.floor(Math.log2(v));
    return dtype === 'f16' ? 2 ** (Math.max(e, -14) - 10) : 2 ** (Math.max(e, -126) - 23);
}

/// Compares kernel output `got` (same typed-array type as the golden) with golden output j.
/// Returns stats: checked, maxUlp (the metric above) and where, maxRel (plain ulp distance, for
/// information), exact (results checked bitwise), tiny (expected below the smallest normal f32:
/// only |got| tiny is required), skipped (EXACT_SKIP), fails and the first 10 failures.
export function compareOutput(g, j, got, tol, { from = 0, to = g.n } = {}) {
    const exp = g.outputs[j], scale = g.scales[j], f16 = g.dtype === 'f16';
    const st = { checked: 0, maxUlp: 0, maxUlpAt: -1, maxRel: 0, exact: 0, tiny: 0, skipped: 0, fails: 0, failures: [] };
    const val = f16 ? (i, a) => f16ToF32(a[i]) : (i, a) => a[i];
    const fail = (i, why) => {
        st.fails++;
        if (st.failures.length < 10)
            st.failures.push({
                index: i,
                inputs: g.inputs.map((a) => String(val(i, a))),
                expected: String(val(i, exp)),
                got: String(val(i, got)),
                why,
            });
    };
    for (let i = from; i < to; i++) {
        if (g.exact[i] === EXACT_SKIP) {
            st.skipped++;
            continue;
        }
        st.checked++;
        const e = val(i, exp), r = val(i, got);
        if (g.exact[i] === EXACT_BITS && (e === 0 || !Number.isFinite(e))) {
            st.exact++;
            const same = f16 ? exp[i] === got[i] : f32Bits(e) === f32Bits(r);
            if (!(same || (Number.isNaN(e) && Number.isNaN(r)))) fail(i, 'special value differs (bits)');
            continue;
        }
        if (Number.isNaN(e)) {
            if (!Number.isNaN(r)) fail(i, 'expected NaN');
            continue;
        }
        if (!Number.isFinite(e)) {
            if (r !== e) fail(i, 'expected infinity');
            continue;
        }
        if (!Number.isFinite(r)) {
            fail(i, 'got NaN or infinity');
            continue;
        }
        const s = scale[i];
        const ref = Math.max(Math.abs(e), s);
        if (!f16 && Math.abs(e) < F32_MIN_NORMAL && Math.abs(r) <= F32_MIN_NORMAL) {
            st.tiny++;  // a subnormal or zero result: the GPU may flush it
            continue;
        }
        const rel = f16 ? Math.abs(ordF16(exp[i]) - ordF16(got[i])) : Math.abs(ordF32(e) - ordF32(r));
        if (rel > st.maxRel) st.maxRel = rel;
        const err = s > 0 ? Math.abs(r - e) / ulpOf(ref, g.dtype) : rel;
        if (err > st.maxUlp) {
            st.maxUlp = err;
            st.maxUlpAt = i;
        }
        if (err > tol) fail(i, `${err.toFixed(2)} ulp`);
    }
    return st;
}

/// Fetches manifest.json and golden files from `base` (a URL ending in '/').
export async function fetchManifest(base) {
    const r = await fetch(new URL('manifest.json', base));
    if (!r.ok) throw new Error(`golden: ${r.url}: HTTP ${r.status}`);
    return r.json();
}
export async function fetchGolden(base, file) {
    const r = await fetch(new URL(file, base));
    if (!r.ok) throw new Error(`golden: ${r.url}: HTTP ${r.status}`);
    return parseGolden(await r.arrayBuffer());
}
