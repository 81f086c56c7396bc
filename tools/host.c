// host.c — the machine a benchmark ran on, as its output names it, and its memory.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools.h"

void ffn_tool_cpu_name(char *buf, size_t cap, double *mhz) {
    char line[512], name[192] = "unknown CPU", fam[16] = "?", model[16] = "?";
    double hz = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        // The first processor's block only: the next "processor" line ends it.
        if (!strncmp(line, "processor", 9) && strcmp(name, "unknown CPU")) break;
        const char *v = strchr(line, ':');
        if (!v) continue;
        for (v++; *v == ' ' || *v == '\t';) v++;
        const int n = (int)strcspn(v, "\r\n");
        if (!strncmp(line, "model name", 10))
            snprintf(name, sizeof name, "%.*s", n, v);
        else if (!strncmp(line, "cpu family", 10))
            snprintf(fam, sizeof fam, "%.*s", n, v);
        else if (!strncmp(line, "model\t", 6))
            snprintf(model, sizeof model, "%.*s", n, v);
        else if (!strncmp(line, "cpu MHz", 7))
            hz = strtod(v, NULL);
    }
    if (f) fclose(f);
    if (strcmp(fam, "?"))
        snprintf(buf, cap, "%s, family %s model %s", name, fam, model);
    else
        snprintf(buf, cap, "%s", name);
    if (mhz) *mhz = hz;
}

long ffn_tool_huge_kib(void) {
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

#define FFN_TOOL_HUGE ((size_t)2 << 20)

void *ffn_tool_alloc_touched(size_t bytes, bool huge) {
    void *p = NULL;
    if (!bytes) bytes = 64;
    if (huge) bytes = (bytes + FFN_TOOL_HUGE - 1) / FFN_TOOL_HUGE * FFN_TOOL_HUGE;
    if (posix_memalign(&p, huge ? FFN_TOOL_HUGE : 64, bytes)) return NULL;
#ifdef MADV_HUGEPAGE
    if (huge) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    memset(p, 0, bytes);
    return p;
}

size_t ffn_tool_llc_bytes(void) {
    size_t best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char path[96], buf[64];
        int level = 0;
        unsigned long kib = 0;
        char unit = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        const bool ok = fgets(buf, sizeof buf, f) && sscanf(buf, "%d", &level) == 1;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!ok || !(f = fopen(path, "r"))) continue;
        if (fgets(buf, sizeof buf, f) && sscanf(buf, "%lu%c", &kib, &unit) >= 1 &&
            level >= best_level) {
            const size_t b = (size_t)kib << (unit == 'M' ? 20 : unit == 'K' ? 10 : 0);
            if (level > best_level || b > best) best = b, best_level = level;
        }
        fclose(f);
    }
    if (best) return best;
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? (size_t)l3 : (size_t)64 << 20;
}
