// sha256.c — SHA-256 (FIPS 180-4), written from the standard: the identity of a shard set's
// source files. Portable C, one block (64 bytes) at a time; ~0.3-0.5 GB/s, which hashes a
// checkpoint once per `ffn shard` and once per checked open.
#include <string.h>

#include "tp/tp_impl.h"

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
static const uint32_t ffn__k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t ffn__rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One 512-bit block: the message schedule W[0..64) and 64 rounds (FIPS 180-4 §6.2.2).
static void ffn__block(uint32_t h[8], const uint8_t *p) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        const uint32_t s0 = ffn__rotr(w[t - 15], 7) ^ ffn__rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        const uint32_t s1 = ffn__rotr(w[t - 2], 17) ^ ffn__rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        const uint32_t S1 = ffn__rotr(e, 6) ^ ffn__rotr(e, 11) ^ ffn__rotr(e, 25);
        const uint32_t ch = (e & f) ^ (~e & g);
        const uint32_t t1 = k + S1 + ch + ffn__k[t] + w[t];
        const uint32_t S0 = ffn__rotr(a, 2) ^ ffn__rotr(a, 13) ^ ffn__rotr(a, 22);
        const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        const uint32_t t2 = S0 + maj;
        k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void ffn_sha256_init(struct ffn_sha256 *s) {
    // The first 32 bits of the fractional parts of the square roots of the first 8 primes.
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->len = 0;
    s->n = 0;
}

void ffn_sha256_update(struct ffn_sha256 *s, const void *data, size_t len) {
    const uint8_t *p = data;
    s->len += len;
    if (s->n) {  // top up a partial block first
        const size_t take = len < 64 - s->n ? len : 64 - s->n;
        memcpy(s->buf + s->n, p, take);
        s->n += take, p += take, len -= take;
        if (s->n < 64) return;
        ffn__block(s->h, s->buf);
        s->n = 0;
    }
    for (; len >= 64; p += 64, len -= 64) ffn__block(s->h, p);
    memcpy(s->buf, p, len);
    s->n = len;
}

void ffn_sha256_final(struct ffn_sha256 *s, uint8_t out[32]) {
    // Padding: 0x80, zeros to 56 mod 64, then the message length in bits, big-endian.
    const uint64_t bits = s->len * 8;
    s->buf[s->n++] = 0x80;
    if (s->n > 56) {
        memset(s->buf + s->n, 0, 64 - s->n);
        ffn__block(s->h, s->buf);
        s->n = 0;
    }
    memset(s->buf + s->n, 0, 56 - s->n);
    for (int i = 0; i < 8; i++) s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    ffn__block(s->h, s->buf);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

void ffn_sha256_hex(const uint8_t digest[32], char hex[65]) {
    static const char xd[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++)
        hex[2 * i] = xd[digest[i] >> 4], hex[2 * i + 1] = xd[digest[i] & 15];
    hex[64] = '\0';
}
