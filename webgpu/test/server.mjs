// server.mjs — a tiny static HTTP server on 127.0.0.1 for the browser tests and the demo:
// webgpu/ at /, the golden directory (written by wgsl_golden) at /golden/. Loopback only; paths
// are resolved and confined to their root. CLI (make demo-web):
//     node webgpu/test/server.mjs --golden DIR [--port 8123]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIME = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8',
    '.mjs': 'text/javascript; charset=utf-8',
    '.wgsl': 'text/plain; charset=utf-8',
    '.json': 'application/json',
    '.bin': 'application/octet-stream',
    '.css': 'text/css',
    '.png': 'image/png',
    '.md': 'text/plain; charset=utf-8',
};

export const WEBGPU_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/// Starts the server. mounts: { '/golden/': '/abs/dir', ... } (prefix -> directory); everything
/// else is served from `root`. Resolves to { port, url, close() }.
export function startServer({ root = WEBGPU_DIR, mounts = {}, port = 0, host = '127.0.0.1' } = {}) {
    const table = Object.entries(mounts).sort((a, b) => b[0].length - a[0].length);
    const server = http.createServer((req, res) => {
        let rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
        let base = root;
        for (const [prefix, dir] of table) {
            if (rel.startsWith(prefix)) {
                base = dir;
                rel = rel.slice(prefix.length - 1);
                break;
            }
        }
        const file = path.resolve(base, '.' + rel);
        if (file !== base && !file.startsWith(base + path.sep)) {
            res.writeHead(403).end('forbidden');
            return;
        }
        fs.stat(file, (err, st) => {
            const target = !err && st.isDirectory() ? path.join(file, 'index.html') : file;
            fs.readFile(target, (err2, data) => {
                if (err2) {
                    res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${rel}`);
                    return;
                }
                res.writeHead(200, {
                    'content-type': MIME[path.extname(target)] ?? 'application/octet-stream',
                    'cache-control': 'no-store',
                });
                res.end(data);
            });
        });
    });
    return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
            const p = server.address().port;
            resolve({ port: p, url: `http://${host}:${p}/`, close: () => new Promise((r) => server.close(r)) });
        });
    });
}

function arg(name, def) {
    const i = process.argv.indexOf(name);
    return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    const golden = arg('--golden');
    if (!golden) {
        console.error('usage: node server.mjs --golden DIR [--port N]');
        process.exit(2);
    }
    const srv = await startServer({ mounts: { '/golden/': path.resolve(golden) }, port: Number(arg('--port', 8123)) });
    console.log(`ffn WebGPU demo: ${srv.url}demo/  (tests: ${srv.url}test/browser-test.html); Ctrl-C stops`);
    console.log('Open it in a browser with WebGPU (Chromium: --enable-unsafe-webgpu where needed).');
}
