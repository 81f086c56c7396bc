// tables.mjs — the Markdown tables of webgpu/README.md and docs/numerics.md from measured results:
//     node webgpu/tables.mjs accuracy NAME=results.json ...   max ulp per kernel output: one column
//         per results file (run-node.mjs or run-browser.mjs kernels output), f32 = vec4 checked
//     node webgpu/tables.mjs throughput bench.jsonl [N]       per kernel at n = N (default: the
//         largest): each variant's GB/s, ratio to the copy limit (L2 flushed) and the arithmetic's
//         share of the memory-bound time ('arith' rows); swiglu_combine's time at n = 512 x 3072
import fs from 'node:fs';

function accuracy(specs) {
    const cols = specs.map((s) => {
        const i = s.indexOf('=');
        return { name: s.slice(0, i), r: JSON.parse(fs.readFileSync(s.slice(i + 1), 'utf8')) };
    });
    const keys = [];
    const cell = new Map();  // name|kernel|output|dtype -> max ulp (f32 and vec4 must agree)
    const tol = new Map();
    for (const { name, r } of cols) {
        for (const row of r.rows) {
            const dt = row.variant === 'f32' || row.variant === 'vec4' ? 'f32' : 'f16';
            const k = `${row.kernel}|${row.output}`;
            if (!keys.includes(k)) keys.push(k);
            tol.set(`${k}|${dt}`, row.tol);
            const id = `${name}|${k}|${dt}`;
            const v = `${+row.maxUlp.toFixed(2)}${row.fails ? ' (FAIL)' : ''}`;
            const prev = cell.get(id);
            if (prev === undefined || prev === v) cell.set(id, v);
            else cell.set(id, `${prev} / ${v}`);  // f32 and vec4 differ: show both
        }
    }
    // a results file without f32 (or f16) rows, e.g. the fma run's f32 only, gets no such column
    const has = (c, dt) => keys.some((k) => cell.has(`${c.name}|${k}|${dt}`));
    const c32 = cols.filter((c) => has(c, 'f32')), c16 = cols.filter((c) => has(c, 'f16'));
    const head = ['kernel', 'output', 'f32 bound', ...c32.map((c) => c.name), 'f16 bound', ...c16.map((c) => `${c.name} (f16)`)];
    const out = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
    for (const k of keys) {
        const [kernel, output] = k.split('|');
        const f32 = c32.map((c) => cell.get(`${c.name}|${k}|f32`) ?? '-');
        const f16 = c16.map((c) => cell.get(`${c.name}|${k}|f16`) ?? '-');
        out.push(`| ${kernel} | ${output} | ${tol.get(`${k}|f32`)} | ${f32.join(' | ')} | ${tol.get(`${k}|f16`)} | ${f16.join(' | ')} |`);
    }
    for (const { name, r } of cols) {
        const a = r.adapter ?? {};
        out.push('', `${name}: ${[a.vendor, a.device, a.architecture, a.description].filter(Boolean).join(' ')}; probe ` +
            `${JSON.stringify(r.probe)}; ${r.config ? `FFN_FMA_EXACT=${r.config.fmaExact} FFN_F16_CVT=${r.config.f16Cvt}` +
            (r.config.emulateFma ? ' (fma emulated)' : '') : ''}; ${r.ok ? 'all within bounds' : 'FAILURES'}`);
    }
    return out.join('\n');
}

function throughput(file, nArg) {
    const rows = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const hdr = rows.find((r) => r.header) ?? {};
    const floor = rows.find((r) => r.floor);
    const data = rows.filter((r) => !r.header && !r.floor && !r.sweep);
    const n = Number(nArg ?? Math.max(...data.filter((r) => r.cache === 'flushed').map((r) => r.n)));
    const variants = [...new Set(data.map((r) => r.kernel_isa))];
    const base = (r) => r.kernel.replace(/_(vec4|f16pk|f16)$/, '');
    const kernels = [...new Set(data.map(base))];
    const head = ['kernel', ...variants.map((v) => `${v}: GB/s (ratio, arith.)`), 'best ratio'];
    const out = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
    let copy = null;
    for (const k of kernels) {
        const at = data.filter((r) => base(r) === k && r.n === n && r.cache === 'flushed');
        if (!at.length) continue;
        copy = at[0];
        const best = at.reduce((a, b) => (b.ratio > a.ratio ? b : a));
        const cells = variants.map((v) => {
            const r = at.find((x) => x.kernel_isa === v);
            const ar = data.find((x) => base(x) === k && x.cache === 'arith' && x.kernel_isa === v);
            return r ? `${r.gbps.toFixed(0)} (${r.ratio.toFixed(2)}, ${ar ? ar.arith_share.toFixed(2) : '-'})` : '-';
        });
        out.push(`| ${k} | ${cells.join(' | ')} | ${best.ratio.toFixed(2)} ${best.kernel_isa} |`);
    }
    out.push('', `${hdr.cpu}; n = ${n}, L2 flushed between reps; copy limit ${copy?.triad_gbps} GB/s (${copy?.triad_kernel}); ` +
        `FFN_FMA_EXACT=${hdr.fma_exact} FFN_F16_CVT=${hdr.f16_cvt}; timer: ${hdr.timer}` +
        (floor ? `; a timed pass of one workgroup: ${(floor.seconds * 1e6).toFixed(2)} us` : ''));
    for (const r of data.filter((r) => base(r) === 'swiglu_combine' && r.n === 1572864 && r.dtype === 'f32' &&
        (r.cache === 'flushed' || r.cache === 'warm')))
        out.push(`swiglu_combine n = 512 x 3072 ${r.kernel_isa} L2 ${r.cache}: ${(r.seconds * 1e6).toFixed(2)} us (min ${(r.min_seconds * 1e6).toFixed(2)})`);
    return out.join('\n');
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === 'accuracy' && rest.length) console.log(accuracy(rest));
else if (cmd === 'throughput' && rest.length) console.log(throughput(rest[0], rest[1]));
else {
    console.error('usage: node tables.mjs accuracy NAME=results.json ... | throughput bench.jsonl [N]');
    process.exit(2);
}
