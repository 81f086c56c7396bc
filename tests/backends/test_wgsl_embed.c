// test_wgsl_embed.c — the WGSL files embedded in libffn (ffn_wgsl_source) are byte for byte the
// files in webgpu/, every file is listed once, and unknown names give NULL.
// Usage: test_wgsl_embed WEBGPU_DIR
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ffn.h"

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) break;
            buf = nb;
        }
        const size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_wgsl_embed WEBGPU_DIR\n");
        return 2;
    }
    ffn_check_begin("test_wgsl_embed");
    int count = 0;
    const char *expected[] = {"activation.wgsl", "activation_f16.wgsl"};
    int seen[2] = {0, 0};
    for (int i = 0; ffn_wgsl_file_name(i); i++) {
        const char *name = ffn_wgsl_file_name(i);
        count++;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], name);
        size_t len = 0;
        char *disk = read_file(path, &len);
        const char *emb = ffn_wgsl_source(name);
        if (!CHECK(disk, "%s: embedded but not readable at %s", name, path)) {
        } else if (!emb || strlen(emb) != len || memcmp(emb, disk, len) != 0) {
            size_t k = 0;
            while (emb && k < len && emb[k] == disk[k]) k++;
            FAIL(
                "%s: embedded text differs from %s (first difference at byte %zu; lengths %zu "
                "embedded, %zu on disk)",
                name, path, k, emb ? strlen(emb) : 0, len);
        } else {
            printf("ok   %s: %zu bytes, identical to the file\n", name, len);
        }
        for (int j = 0; j < 2; j++)
            if (strcmp(name, expected[j]) == 0) seen[j]++;
        free(disk);
    }
    for (int j = 0; j < 2; j++) CHECK_EQ(seen[j], 1, "%s listed once", expected[j]);
    CHECK(!ffn_wgsl_source("no_such.wgsl") && !ffn_wgsl_source(NULL) && !ffn_wgsl_file_name(-1) &&
              !ffn_wgsl_file_name(count),
          "unknown names/indices must give NULL");
    const char *src = ffn_wgsl_source("activation.wgsl");
    const char *entries[] = {"fn gelu_inplace(", "fn swiglu_combine(", "fn swiglu_backward_vec4(",
                             "fn reglu_backward_f16pk("};
    CHECK(src, "activation.wgsl is embedded");
    for (size_t j = 0; src && j < sizeof entries / sizeof *entries; j++)
        CHECK_STR_HAS(src, entries[j], "an entry point of activation.wgsl");
    printf("test_wgsl_embed: %d files checked\n", count);
    return ffn_check_summary();
}
