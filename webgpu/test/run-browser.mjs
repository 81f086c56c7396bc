// run-browser.mjs — drives Debian's Chromium headless (WebGPU on SwiftShader, no GPU needed)
// with playwright-core, against pages served by server.mjs on 127.0.0.1. Registered with CTest
// (tests/backends/CMakeLists.txt):
//     node run-browser.mjs kernels --golden DIR --out DIR   every kernel vs the C reference
//     node run-browser.mjs demo    --golden DIR --out DIR   the demo page: screenshot + table check
// Exit status 0 on success. Writes OUT/webgpu-results.json (kernels) or OUT/webgpu-demo.png and
// OUT/webgpu-demo.json (demo). Stops itself after --timeout seconds (default 240).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from './server.mjs';
import { TOL_F32 } from './golden.mjs';
import { kernelTable } from './suite.mjs';

const CHROMIUM = process.env.FFN_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
    '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader',
    '--use-webgpu-adapter=swiftshader', '--no-sandbox', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
    '--headless=new',
];

function arg(name, def) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

async function loadPlaywright() {
    try {
        return await import('playwright-core');
    } catch (e) {
        console.error('run-browser: playwright-core is not installed: run scripts/web-deps.sh (npm ci in webgpu/)');
        throw e;
    }
}

function printKernelTable(r) {
    console.log(`adapter: ${JSON.stringify(r.adapter)}; probe: ${JSON.stringify(r.probe)}`);
    console.log(kernelTable(r));
}

// The demo page's table: every kernel present, max ulp within its f32 tolerance, throughput > 0.
function checkDemo(d) {
    const errs = [];
    const names = new Set(d.rows.map((r) => r.kernel));
    for (const k of Object.keys(TOL_F32)) if (!names.has(k)) errs.push(`kernel ${k} missing from the table`);
    for (const r of d.rows) {
        const ulp = Number(r.maxUlp), mel = Number(r.melemPerS);
        if (!Number.isFinite(ulp) || ulp > TOL_F32[r.kernel]) errs.push(`${r.kernel}: max ulp '${r.maxUlp}' above ${TOL_F32[r.kernel]}`);
        if (!(mel > 0)) errs.push(`${r.kernel}: throughput '${r.melemPerS}' is not positive`);
        if (r.status !== 'ok') errs.push(`${r.kernel}: status '${r.status}'`);
    }
    if (!(d.plotPixels > 1000)) errs.push(`the plot canvas looks empty (${d.plotPixels} coloured pixels)`);
    return errs;
}

async function main() {
    const mode = process.argv[2];
    const golden = arg('--golden');
    const out = arg('--out', '.');
    const timeoutMs = Number(arg('--timeout', 240)) * 1000;
    if (!['kernels', 'demo'].includes(mode) || !golden) {
        console.error('usage: node run-browser.mjs kernels|demo --golden DIR --out DIR [--timeout S] [--query Q]');
        return 2;
    }
    if (!fs.existsSync(path.join(golden, 'manifest.json'))) {
        console.error(`run-browser: ${golden}/manifest.json missing (run wgsl_golden first)`);
        return 1;
    }
    if (!fs.existsSync(CHROMIUM)) {
        console.error(`run-browser: ${CHROMIUM} missing: run scripts/web-deps.sh`);
        return 1;
    }
    const { chromium } = await loadPlaywright();
    const srv = await startServer({ mounts: { '/golden/': path.resolve(golden) } });
    const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ffn-chromium-'));
    const watchdog = setTimeout(() => {
        console.error(`run-browser: timed out after ${timeoutMs / 1000} s`);
        process.exit(1);
    }, timeoutMs);
    let ctx;
    try {
        ctx = await chromium.launchPersistentContext(userDir, {
            executablePath: CHROMIUM,
            headless: true,
            args: CHROMIUM_ARGS,
            viewport: { width: 1280, height: 1000 },
        });
        const page = await ctx.newPage();
        page.on('pageerror', (e) => console.error('page error:', e.message));
        page.on('console', (m) => {
            if (m.type() === 'error') console.error('console error:', m.text());
            else if (process.env.FFN_WEB_VERBOSE) console.log('page:', m.text());
        });
        fs.mkdirSync(out, { recursive: true });
        if (mode === 'kernels') {
            const query = arg('--query', '');
            await page.goto(`${srv.url}test/browser-test.html${query ? '?' + query : ''}`);
            await page.waitForFunction(() => window.__ffnResult !== undefined, null, { timeout: timeoutMs, polling: 500 });
            const r = await page.evaluate(() => window.__ffnResult);
            fs.writeFileSync(path.join(out, 'webgpu-results.json'), JSON.stringify(r, null, 1));
            if (r.fatal) {
                console.error('run-browser: the test page failed: ' + r.fatal);
                return 1;
            }
            printKernelTable(r);
            console.log(`${r.ok ? 'PASS' : 'FAIL'}: ${r.rows.length} kernel outputs checked in ${r.elapsedMs} ms ` +
                `(results: ${path.join(out, 'webgpu-results.json')})`);
            return r.ok ? 0 : 1;
        }
        await page.goto(`${srv.url}demo/index.html`);
        await page.waitForFunction(() => window.__demoResult !== undefined, null, { timeout: timeoutMs, polling: 500 });
        const d = await page.evaluate(() => window.__demoResult);
        const shot = path.join(out, 'webgpu-demo.png');
        await page.screenshot({ path: shot, fullPage: true });
        fs.writeFileSync(path.join(out, 'webgpu-demo.json'), JSON.stringify(d, null, 1));
        if (d.fatal) {
            console.error('run-browser: the demo page failed: ' + d.fatal);
            return 1;
        }
        for (const r of d.rows) console.log(`${r.kernel.padEnd(20)} max ulp ${String(r.maxUlp).padEnd(4)} ${r.melemPerS} Melem/s  ${r.status}`);
        const errs = checkDemo(d);
        for (const e of errs) console.log('FAIL ' + e);
        console.log(`${errs.length ? 'FAIL' : 'PASS'}: demo table of ${d.rows.length} kernels; screenshot ${shot}`);
        return errs.length ? 1 : 0;
    } finally {
        clearTimeout(watchdog);
        if (ctx) await ctx.close();
        await srv.close();
        fs.rmSync(userDir, { recursive: true, force: true });
    }
}

main().then(
    (rc) => process.exit(rc),
    (e) => {
        console.error('run-browser:', e && e.stack ? e.stack : e);
        process.exit(1);
    },
);
