// fastmath.mjs — what a fast-math shader compiler may do to error-free transformations, applied to
// WGSL source text: the cancellations (a + b) - a -> b, (a + b) - b -> a, a - (a - b) -> b and
// (a - b) + b -> a, on let-bound sums and differences, followed through aliases. NVIDIA's Vulkan
// compiler applies them (no SPIR-V NoContraction decoration from Tint forbids it): the H200 results
// of the kernels before their intermediates were laundered through opaque() are reproduced exactly
// on SwiftShader by this rewrite (gelu_inplace 103 ulp, geglu_combine 142, gelu_backward 201, ...).
// Used by host.test.mjs (activation.wgsl must offer no such cancellation) and by run-node.mjs
// --emulate-reassoc (the suite on the rewritten source).

const ATOM = String.raw`-?[A-Za-z_]\w*(?:\.(?:x|y|z|w|hi|lo|m|e))?`;
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Rewrites one function body; returns [body, rewrites].
function rewriteBody(body) {
    const sums = new Map();   // name -> [a, b] for `let name = a + b;`
    const diffs = new Map();  // name -> [a, b] for `let name = a - b;`
    const aliases = new Map();  // name -> atom for `let name = atom;` (after a rewrite)
    let count = 0;
    const simplify = (expr) => {
        for (let changed = true; changed; ) {
            changed = false;
            for (const [name, atom] of aliases) {
                const re = new RegExp(String.raw`(^|[^\w.])${esc(name)}(?![\w(])`, 'g');
                const e2 = expr.replace(re, (m, pre) => `${pre}${atom}`);
                if (e2 !== expr) {
                    expr = e2;
                    changed = true;
                }
            }
            for (const [name, [a, b]] of sums) {
                for (const [x, y] of [[a, b], [b, a]]) {
                    // (name - x) or name - x as a whole term -> y
                    const re = new RegExp(String.raw`(^|[^\w.])${esc(name)}\s*-\s*${esc(x)}(?![\w.(])`);
                    if (re.test(expr)) {
                        expr = expr.replace(re, (m, pre) => `${pre}(${y})`);
                        changed = true;
                        count++;
                    }
                }
            }
            for (const [name, [a, b]] of diffs) {
                const re1 = new RegExp(String.raw`(^|[^\w.])${esc(a)}\s*-\s*(?:\(\s*${esc(name)}\s*\)|${esc(name)}(?![\w.(]))`);
                if (re1.test(expr)) {  // a - (a - b) -> b
                    expr = expr.replace(re1, (m, pre) => `${pre}(${b})`);
                    changed = true;
                    count++;
                }
                const re2 = new RegExp(String.raw`(^|[^\w.])${esc(name)}\s*\+\s*${esc(b)}(?![\w.(])`);
                if (re2.test(expr)) {  // (a - b) + b -> a
                    expr = expr.replace(re2, (m, pre) => `${pre}(${a})`);
                    changed = true;
                    count++;
                }
            }
            // a parenthesised atom is the atom
            const bare = expr.replace(new RegExp(String.raw`\(\((${ATOM})\)\)`, 'g'), '($1)');
            if (bare !== expr) {
                expr = bare;
                changed = true;
            }
        }
        return expr;
    };
    const lines = body.split('\n').map((line) => {
        const m = line.match(/^(\s*(?:let|var)\s+(\w+)(?:\s*:\s*[\w<>]+)?\s*=\s*)(.*);(.*)$/);
        if (!m) return simplify(line);
        const [, head, name, rhs0, tail] = m;
        const rhs = simplify(rhs0);
        aliases.delete(name);
        const atom = rhs !== rhs0 && rhs.match(new RegExp(String.raw`^\(?\s*(${ATOM})\s*\)?$`));
        if (atom) aliases.set(name, atom[1]);
        const sum = rhs.match(new RegExp(String.raw`^\(?\s*(${ATOM})\s*\+\s*(${ATOM})\s*\)?$`));
        const diff = rhs.match(new RegExp(String.raw`^\(?\s*(${ATOM})\s*-\s*(${ATOM})\s*\)?$`));
        sums.delete(name);
        diffs.delete(name);
        if (sum) sums.set(name, [sum[1], sum[2]]);
        else if (diff) diffs.set(name, [diff[1], diff[2]]);
        return `${head}${rhs};${tail}`;
    });
    return [lines.join('\n'), count];
}

/// Applies the cancellations to every function of `src`. Returns { source, rewrites, where }
/// (where: the names of the functions that changed).
export function emulateReassociation(src) {
    let out = '', rewrites = 0, pos = 0;
    const where = [];
    const fnRe = /\bfn\s+(\w+)\s*\([^)]*\)[^{]*\{/g;
    for (let m; (m = fnRe.exec(src)); ) {
        const start = m.index + m[0].length;
        let depth = 1, i = start;
        while (i < src.length && depth > 0) {
            if (src[i] === '{') depth++;
            else if (src[i] === '}') depth--;
            i++;
        }
        const [body, n] = rewriteBody(src.slice(start, i - 1));
        out += src.slice(pos, start) + body;
        pos = i - 1;
        fnRe.lastIndex = i;
        if (n) {
            rewrites += n;
            where.push(m[1]);
        }
    }
    out += src.slice(pos);
    return { source: out, rewrites, where };
}
