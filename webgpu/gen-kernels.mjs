// gen-kernels.mjs — writes the entry points of activation.wgsl and activation_f16.wgsl (the part
// between the "BEGIN GENERATED KERNELS" and "END GENERATED KERNELS" lines), one per kernel and
// storage variant: the grid-stride loop, the loads of 4 units per thread (2 for vec4), the fast
// path on four lanes at a time, the general path for the lanes it flags, and the stores. The math
// lives in the hand-written part of activation.wgsl; this file only repeats the same skeleton 64
// times, which WGSL (no generics, no pointers to storage in functions) cannot express once.
//     node webgpu/gen-kernels.mjs           rewrite the two files
//     node webgpu/gen-kernels.mjs --check   exit 1 if they differ from what would be written
import { readFileSync, writeFileSync } from 'node:fs';

const BEGIN = '// BEGIN GENERATED KERNELS (node webgpu/gen-kernels.mjs; edit the generator, not this part)';
const END = '// END GENERATED KERNELS';

// Kernels: name -> [kind, act] (the same table as ffn-webgpu.js KERNELS).
const KERNELS = [
    ['gelu_inplace', 'unary', 'gelu_tanh'], ['gelu_erf_inplace', 'unary', 'gelu_erf'],
    ['silu_inplace', 'unary', 'silu'], ['relu_inplace', 'unary', 'relu'],
    ['swiglu_combine', 'gated', 'silu'], ['geglu_combine', 'gated', 'gelu_tanh'],
    ['geglu_erf_combine', 'gated', 'gelu_erf'], ['reglu_combine', 'gated', 'relu'],
    ['gelu_backward', 'unary_bwd', 'gelu_tanh'], ['gelu_erf_backward', 'unary_bwd', 'gelu_erf'],
    ['silu_backward', 'unary_bwd', 'silu'], ['relu_backward', 'unary_bwd', 'relu'],
    ['swiglu_backward', 'gated_bwd', 'silu'], ['geglu_backward', 'gated_bwd', 'gelu_tanh'],
    ['geglu_erf_backward', 'gated_bwd', 'gelu_erf'], ['reglu_backward', 'gated_bwd', 'relu'],
];

// Per kind: inputs and outputs as [name, binding], the params variable, the fast call and the
// general (per lane) expressions. IO: the unary kernels read and write binding 0.
const KINDS = {
    unary: {
        ins: [['x', 'io']], outs: [['x', 'io']], params: 'params1',
        fast: (a, v) => `${a}_f4${v}(x_G, ONE4)`,
        rare: (a) => [`${a}_mul(X, 1.0)`],
    },
    unary_bwd: {
        ins: [['x', 0], ['dy', 1]], outs: [['dx', 2]], params: 'params3',
        fast: (a, v) => `${a}_d4${v}(x_G, dy_G, ONE4)`,
        rare: (a) => [`${a}_dmul(X, DY, 1.0)`],
    },
    gated: {
        ins: [['gate', 0], ['up', 1]], outs: [['hidden', 2]], params: 'params3',
        fast: (a, v) => `${a}_f4${v}(gate_G, up_G)`,
        rare: (a) => [`${a}_mul(GATE, UP)`],
    },
    gated_bwd: {
        ins: [['gate', 0], ['up', 1], ['dh', 2]], outs: [['dgate', 3], ['dup', 4]], params: 'params5',
        fast: (a, v) => `${a}_g4${v}(gate_G, up_G, dh_G)`,
        rare: (a) => [`${a}_dmul(GATE, DH, UP)`, `${a}_mul(GATE, DH)`],
    },
};

// Storage variants: binding variable suffix, units per thread, unit count, groups of 4 lanes.
const VARIANTS = {
    f32: { suffix: '', sfx: '', units: 4, nu: 'n', groups: 1, lp: '' },
    vec4: { suffix: '_vec4', sfx: '_4', units: 2, nu: '(n + 3u) / 4u', groups: 2, lp: '' },
    f16pk: { suffix: '_f16pk', sfx: '_p', units: 4, nu: '(n + 1u) / 2u', groups: 2, lp: '_lp' },
    f16: { suffix: '_f16', sfx: '_h', units: 4, nu: '(n + 1u) / 2u', groups: 2, lp: '_lp' },
};

function bufName(binding, dir, sfx) {
    if (binding === 'io') return `x${sfx === '' ? '' : sfx === '_4' ? '4' : sfx === '_p' ? 'p' : 'h'}_io`;
    return `${dir}${binding}${sfx}`;
}

const LANES = ['x', 'y', 'z', 'w'];

function kernel(name, kindName, act, vname) {
    const K = KINDS[kindName], V = VARIANTS[vname];
    const ins = K.ins.map(([nm, b]) => [nm, bufName(b, 'in', V.sfx)]);
    const outs = K.outs.map(([nm, b]) => [nm, bufName(b, 'out', V.sfx)]);
    const L = [];
    const put = (s, ind = 2) => L.push('    '.repeat(ind) + s);
    L.push('@compute @workgroup_size(256)');
    L.push(`fn ${name}${V.suffix}(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {`);
    put(`let n = ${K.params}.n;`, 1);
    put('ffn_zero = n & SIGN_MASK;', 1);
    put(`let nu = ${V.nu};`, 1);
    put('let st = min(grid_threads(nwg), nu);', 1);
    put('var u0 = flat_id(gid, nwg);', 1);
    put('while (u0 < nu) {', 1);
    put(`let u = units${V.units}(u0, st, nu);`);
    // --- loads ---
    if (vname === 'f32') {
        for (const [nm] of ins) put(`var ${nm}_0 = ZERO4;`);
        for (let k = 0; k < 4; k++) {
            const body = ins.map(([nm, buf]) => `${nm}_0.${LANES[k]} = ${buf}[u.i.${LANES[k]}];`).join(' ');
            put(k === 0 ? body : `if (u.ok.${LANES[k]}) { ${body} }`);
        }
        put('let ok_0 = u.ok;');
    } else if (vname === 'vec4') {
        for (const [nm, buf] of ins) {
            put(`let ${nm}_0 = ${buf}[u.i.x];`);
            put(`var ${nm}_1 = ZERO4;`);
        }
        put(`if (u.ok.y) { ${ins.map(([nm, buf]) => `${nm}_1 = ${buf}[u.i.y];`).join(' ')} }`);
        put('let ok_0 = B4(u.ok.x);');
        put('let ok_1 = B4(u.ok.y);');
    } else {
        const word = (buf, i) => vname === 'f16pk' ? `${buf}[${i}]` : `bitcast<u32>(${buf}[${i}])`;
        for (const [nm] of ins) put(`var ${nm}_w = U4(0u);`);
        for (let k = 0; k < 4; k++) {
            const body = ins.map(([nm, buf]) => `${nm}_w.${LANES[k]} = ${word(buf, `u.i.${LANES[k]}`)};`).join(' ');
            put(k === 0 ? body : `if (u.ok.${LANES[k]}) { ${body} }`);
        }
        for (const [nm] of ins) {
            put(`let ${nm}_0 = V4(unpack_h2(${nm}_w.x), unpack_h2(${nm}_w.y));`);
            put(`let ${nm}_1 = V4(unpack_h2(${nm}_w.z), unpack_h2(${nm}_w.w));`);
        }
        put('let ok_0 = u.ok.xxyy;');
        put('let ok_1 = u.ok.zzww;');
    }
    // --- lanes: a lane is valid when its unit is (u.ok); the lanes past n of the last, partial vec4
    // or f16 pair are computed from the buffer's padding (and perhaps by the general path) but
    // never stored, which costs nothing per element, unlike lane-exact masks ---
    // --- fast path: one call per group of 4 lanes (with 2 groups, a loop over the two: the GPU
    // compiler unrolls it, a CPU renderer's JIT compiles the fast path once) ---
    const G = V.groups, two = outs.length === 2;
    const targets = two ? ['y', 'z'] : ['y'];
    if (G === 1) {
        put(`let r_0 = ${K.fast(act, V.lp).replaceAll('_G', '_0')};`);
        for (const t of targets) put(`var ${t}_0 = r_0.${t};`);
        put('let bad = ok_0 & !r_0.ok;');
        put('var m = 0u;');
        put('if (any(bad)) { m = bits4(bad); }');
    } else {
        for (const t of targets) put(`var ${t}_0 = ZERO4; var ${t}_1 = ZERO4;`);
        put('var m = 0u;');
        put('for (var g = 0u; g < 2u; g++) {');
        const sel = (nm) => `select(${nm}_1, ${nm}_0, g == 0u)`;
        let call = K.fast(act, V.lp);
        for (const [nm] of ins) call = call.replaceAll(`${nm}_G`, sel(nm));
        put(`let r = ${call};`, 3);
        for (const t of targets) put(`if (g == 0u) { ${t}_0 = r.${t}; } else { ${t}_1 = r.${t}; }`, 3);
        put('let bad = select(ok_1, ok_0, g == 0u) & !r.ok;', 3);
        put('if (any(bad)) { m = m | (bits4(bad) << (4u * g)); }', 3);
        put('}');
    }
    // --- general path for the flagged lanes, one at a time (a loop the compiler cannot unroll, so
    // the general functions appear once in the compiled kernel). It reads its inputs again from
    // memory (the outputs are stored after it, so an in-place x is still the input): the fast
    // path's input registers are dead here, which leaves more registers for the general path
    // without lowering the occupancy the fast path has (measured: up to 20 % for f16 storage). ---
    put('while (m != 0u) {');
    put('let j = countTrailingZeros(m);', 3);
    put('m = m & (m - 1u);', 3);
    const inBuf = Object.fromEntries(ins);
    const lane = (nm) => {
        const buf = inBuf[nm];
        if (vname === 'f32') return `${buf}[u.i[j]]`;
        if (vname === 'vec4') return `${buf}[u.i[j >> 2u]][j & 3u]`;
        if (vname === 'f16pk') return `unpack_h2(${buf}[u.i[j >> 1u]])[j & 1u]`;
        return `unpack_h2(bitcast<u32>(${buf}[u.i[j >> 1u]]))[j & 1u]`;
    };
    const subst = (e) => e.replace('GATE', lane('gate')).replace('UP', lane('up')).replace('DH', lane('dh'))
        .replace('DY', lane('dy')).replace(/\bX\b/, lane('x'));
    const rares = K.rare(act).map(subst);
    targets.forEach((t, q) => {
        put(`let ${t}j = ${rares[q]};`, 3);
        put(`${t}_0 = with_lane4(${t}_0, j, ${t}j);`, 3);
        if (G === 2) put(`${t}_1 = with_lane4(${t}_1, j - 4u, ${t}j);`, 3);
    });
    put('}');
    // --- stores ---
    outs.forEach(([, buf], q) => {
        const t = targets[q];
        if (vname === 'f32') {
            for (let k = 0; k < 4; k++) {
                const body = `${buf}[u.i.${LANES[k]}] = ${t}_0.${LANES[k]};`;
                put(k === 0 ? body : `if (u.ok.${LANES[k]}) { ${body} }`);
            }
        } else if (vname === 'vec4') {
            put(`store_${buf}(u.i.x, ${t}_0, n);`);
            put(`if (u.ok.y) { store_${buf}(u.i.y, ${t}_1, n); }`);
        } else {
            const words = [[0, 'x', 'y'], [0, 'z', 'w'], [1, 'x', 'y'], [1, 'z', 'w']];
            for (let k = 0; k < 4; k++) {
                const [g, a, b] = words[k];
                const body = `store_${buf}(u.i.${LANES[k]}, pack_h2(${t}_${g}.${a}, ${t}_${g}.${b}), n);`;
                put(k === 0 ? body : `if (u.ok.${LANES[k]}) { ${body} }`);
            }
        }
    });
    put('u0 = u.next;');
    put('}', 1);
    L.push('}');
    return L.join('\n');
}

// Partial-unit stores: a vec4 or an f16 pair that straddles n writes only its lanes below n.
function storeHelpers(vname) {
    const bufs = {
        vec4: ['x4_io', 'out2_4', 'out3_4', 'out4_4'],
        f16pk: ['xp_io', 'out2_p', 'out3_p', 'out4_p'],
        f16: ['xh_io', 'out2_h', 'out3_h', 'out4_h'],
    }[vname] ?? [];
    const L = [];
    for (const buf of bufs) {
        if (vname === 'vec4') {
            L.push(`fn store_${buf}(i: u32, y: V4, n: u32) {`);
            L.push(`    if (4u * i + 3u < n) { ${buf}[i] = y; return; }`);
            L.push(`    for (var l = 0u; 4u * i + l < n; l++) { ${buf}[i][l] = y[l]; }`);
        } else if (vname === 'f16pk') {
            L.push(`fn store_${buf}(i: u32, w: u32, n: u32) {`);
            L.push(`    if (2u * i + 1u < n) { ${buf}[i] = w; return; }`);
            L.push(`    ${buf}[i] = (${buf}[i] & 0xffff0000u) | (w & 0xffffu);`);
        } else {
            L.push(`fn store_${buf}(i: u32, w: u32, n: u32) {`);
            L.push(`    if (2u * i + 1u < n) { ${buf}[i] = bitcast<vec2<f16>>(w); return; }`);
            L.push(`    ${buf}[i].x = bitcast<vec2<f16>>(w).x;`);
        }
        L.push('}');
    }
    return L.join('\n');
}

function section(variants) {
    const parts = [BEGIN, ''];
    for (const v of variants) {
        parts.push(`// --- ${v} ${'-'.repeat(94 - v.length)}`, '');
        const helpers = storeHelpers(v);
        if (helpers) parts.push(helpers, '');
        for (const [name, kind, act] of KERNELS) parts.push(kernel(name, kind, act, v), '');
    }
    parts.push(END);
    return parts.join('\n');
}

function splice(text, body, file) {
    const a = text.indexOf(BEGIN), b = text.indexOf(END);
    if (a < 0 || b < a) throw new Error(`${file}: the generated-kernels markers are missing`);
    return text.slice(0, a) + body + text.slice(b + END.length);
}

const here = new URL('./', import.meta.url);
const files = [['activation.wgsl', ['f32', 'vec4', 'f16pk']], ['activation_f16.wgsl', ['f16']]];
let stale = 0;
for (const [file, variants] of files) {
    const url = new URL(file, here);
    const old = readFileSync(url, 'utf8');
    const now = splice(old, section(variants), file);
    if (now === old) continue;
    if (process.argv.includes('--check')) {
        console.error(`gen-kernels: ${file} is out of date: run node webgpu/gen-kernels.mjs`);
        stale++;
    } else {
        writeFileSync(url, now);
        console.log(`gen-kernels: wrote ${file}`);
    }
}
process.exit(stale ? 1 : 0);
