// replay.c — runs a libFuzzer harness over files, without libFuzzer: built with the normal
// compiler (and with ASan/UBSan in the sanitizer build) so `make test` replays the seed corpus.
// usage: replay_<kind> FILE|DIR ...   (directories: every regular file in them)
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    // An exact-size heap copy, so ASan sees any read one byte past the input.
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    const size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!buf || got != (size_t)n) {
        free(buf);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    int files = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(sb.st_mode)) {
            errors += run_file(argv[i]), files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) errors += run_file(p), files++;
        }
        if (d) closedir(d);
    }
    printf("replay: %d inputs, %d unreadable\n", files, errors);
    return errors || files == 0;
}
