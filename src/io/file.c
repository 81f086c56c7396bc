// file.c — the io layer's file access: read-only memory maps, whole-file reads of small text
// files (config.json, *.index.json), atomic writes (temporary name + rename), path helpers.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"

enum ffn_status ffn_io_map_file(ffn_ctx_t ctx, const char *fn, const char *path,
                                struct ffn_io_map *m) {
    memset(m, 0, sizeof *m);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ffn_error(ctx, errno == ENOENT ? FFN_STATUS_NOT_FOUND : FFN_STATUS_IO,
                         "%s: %s: cannot open: %s", fn, path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: not a regular file", fn, path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: too large to map", fn, path);
    }
    m->size = (size_t)sb.st_size;
    if (m->size == 0) {  // mmap of 0 bytes fails: an empty file is simply "no bytes"
        close(fd);
        return FFN_STATUS_OK;
    }
    void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    close(fd);  // the mapping keeps the file alive
    if (p == MAP_FAILED)
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: mmap failed: %s", fn, path, strerror(err));
    m->data = p;
    m->mapped = true;
    return FFN_STATUS_OK;
}

void ffn_io_unmap(struct ffn_io_map *m) {
    if (m && m->mapped && m->data) munmap((void *)m->data, m->size);
    if (m) memset(m, 0, sizeof *m);
}

enum ffn_status ffn_io_read_file(ffn_ctx_t ctx, const char *fn, const char *path, size_t max,
                                 char **buf_out, size_t *len_out) {
    *buf_out = NULL;
    *len_out = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ffn_error(ctx, errno == ENOENT ? FFN_STATUS_NOT_FOUND : FFN_STATUS_IO,
                         "%s: %s: cannot open: %s", fn, path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: not a regular file", fn, path);
    }
    if ((uint64_t)sb.st_size > max) {
        fclose(f);
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: %lld bytes; at most %zu accepted", fn,
                         path, (long long)sb.st_size, max);
    }
    const size_t n = (size_t)sb.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        fclose(f);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: %s: out of memory", fn, path);
    }
    const size_t got = fread(buf, 1, n, f);
    fclose(f);
    if (got != n) {
        free(buf);
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: short read (%zu of %zu bytes)", fn, path, got,
                         n);
    }
    buf[n] = '\0';
    *buf_out = buf;
    *len_out = n;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_io_write_file(ffn_ctx_t ctx, const char *fn, const char *path,
                                  const void *const *parts, const size_t *lens, int n_parts) {
    const size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    snprintf(tmp, plen + 16, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        const enum ffn_status st =
            ffn_error(ctx, FFN_STATUS_IO, "%s: %s: cannot create: %s", fn, path, strerror(errno));
        free(tmp);
        return st;
    }
    bool ok = true;
    for (int i = 0; i < n_parts && ok; i++)
        if (lens[i] && fwrite(parts[i], 1, lens[i], f) != lens[i]) ok = false;
    if (fclose(f) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) {
        const enum ffn_status st =
            ffn_error(ctx, FFN_STATUS_IO, "%s: %s: write failed: %s", fn, path, strerror(errno));
        remove(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return FFN_STATUS_OK;
}

bool ffn_io_is_dir(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool ffn_io_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

char *ffn_io_path_join(const char *dir, const char *name) {
    const size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    size_t k = a;
    if (a && dir[a - 1] != '/') p[k++] = '/';
    memcpy(p + k, name, b + 1);
    return p;
}

char *ffn_io_strndup(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *ffn_io_strdup(const char *s) { return ffn_io_strndup(s, strlen(s)); }
