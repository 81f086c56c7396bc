// host.c — the machine a benchmark ran on, as its output names it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
