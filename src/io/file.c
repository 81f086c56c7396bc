// file.c — the io layer's file access: file kinds from their first bytes, regular-file opens
// that never block on a FIFO or touch a device, read-only memory maps, whole-file reads of small
// text files (config.json, *.index.json), output targets and atomic writes (a new temporary file
// + rename), path helpers.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"

#define FFN_IO_TMP_TRIES 100  // temporary names tried before giving up (each O_EXCL)

// --- file kinds ----------------------------------------------------------------------------------

enum ffn_io_kind ffn_io_sniff(const uint8_t *p, size_t n) {
    if (n >= 4 && !memcmp(p, "GGUF", 4)) return FFN_IO_KIND_GGUF;
    // safetensors: the u64 header length (≤ 100 MB, so bytes 6 and 7 are zero), then the JSON
    // header's '{'. JSON text never holds a NUL byte, so the two cannot be confused.
    if (n >= 9 && p[6] == 0 && p[7] == 0 && p[8] == '{') return FFN_IO_KIND_SAFETENSORS;
    size_t i = 0;
    if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) i = 3;  // UTF-8 BOM
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
    if (i < n && (p[i] == '{' || p[i] == '[')) return FFN_IO_KIND_JSON;
    return FFN_IO_KIND_UNKNOWN;
}

const char *ffn_io_kind_name(enum ffn_io_kind kind) {
    switch (kind) {
    case FFN_IO_KIND_SAFETENSORS: return "a safetensors file";
    case FFN_IO_KIND_GGUF: return "a GGUF file";
    case FFN_IO_KIND_JSON: return "a JSON file";
    default: return "an unrecognised file";
    }
}

const char *ffn_io_mode_name(unsigned mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

// --- reading -------------------------------------------------------------------------------------

static enum ffn_status ffn__open_errno(ffn_ctx_t ctx, const char *fn, const char *path, int err) {
    return ffn_error(ctx, err == ENOENT ? FFN_STATUS_NOT_FOUND : FFN_STATUS_IO,
                     "%s: %s: cannot open: %s", fn, path, strerror(err));
}

enum ffn_status ffn_io_open_regular(ffn_ctx_t ctx, const char *fn, const char *path, int *fd_out,
                                    uint64_t *size_out) {
    *fd_out = -1;
    *size_out = 0;
    struct stat before, after;
    if (stat(path, &before) != 0) return ffn__open_errno(ctx, fn, path, errno);
    if (!S_ISREG(before.st_mode))
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: is %s; a regular file is expected", fn, path,
                         ffn_io_mode_name((unsigned)before.st_mode));
    // O_NONBLOCK: should the name now be a FIFO, the open returns at once instead of waiting for
    // a writer; O_NOCTTY: a terminal never becomes our controlling terminal.
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return ffn__open_errno(ctx, fn, path, errno);
    if (fstat(fd, &after) != 0 || !S_ISREG(after.st_mode) || after.st_dev != before.st_dev ||
        after.st_ino != before.st_ino) {
        close(fd);
        return ffn_error(ctx, FFN_STATUS_IO,
                         "%s: %s: changed while being opened (not a regular "
                         "file any more)",
                         fn, path);
    }
    // Back to blocking reads: a regular file ignores the flag, but a caller may read() it.
    const int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *fd_out = fd;
    *size_out = (uint64_t)after.st_size;
    return FFN_STATUS_OK;
}

// Reads up to n bytes at the start of fd (fewer at the end of the file). -1 on a read error.
static ssize_t ffn__read_full(int fd, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        const ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

enum ffn_status ffn_io_file_kind(ffn_ctx_t ctx, const char *fn, const char *path,
                                 enum ffn_io_kind *kind_out) {
    *kind_out = FFN_IO_KIND_UNKNOWN;
    int fd;
    uint64_t size;
    const enum ffn_status s = ffn_io_open_regular(ctx, fn, path, &fd, &size);
    if (s) return s;
    uint8_t head[FFN_IO_SNIFF_BYTES];
    const ssize_t n = ffn__read_full(fd, head, sizeof head);
    const int err = errno;
    close(fd);
    if (n < 0)
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: read failed: %s", fn, path, strerror(err));
    *kind_out = ffn_io_sniff(head, (size_t)n);
    return FFN_STATUS_OK;
}

enum ffn_status ffn_io_map_file(ffn_ctx_t ctx, const char *fn, const char *path,
                                struct ffn_io_map *m) {
    memset(m, 0, sizeof *m);
    int fd;
    uint64_t size;
    const enum ffn_status s = ffn_io_open_regular(ctx, fn, path, &fd, &size);
    if (s) return s;
    if (size > (uint64_t)SIZE_MAX) {
        close(fd);
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: too large to map", fn, path);
    }
    m->size = (size_t)size;
    if (m->size == 0) {  // mmap of 0 bytes fails: an empty file is simply "no bytes"
        close(fd);
        return FFN_STATUS_OK;
    }
    void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    close(fd);  // the mapping keeps the file alive
    if (p == MAP_FAILED) {
        m->size = 0;
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: mmap failed: %s", fn, path, strerror(err));
    }
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
    int fd;
    uint64_t size;
    const enum ffn_status s = ffn_io_open_regular(ctx, fn, path, &fd, &size);
    if (s) return s;
    if (size > max) {
        close(fd);
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: %llu bytes; at most %zu accepted", fn,
                         path, (unsigned long long)size, max);
    }
    const size_t n = (size_t)size;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: %s: out of memory for its %zu bytes",
                         fn, path, n);
    }
    const ssize_t got = ffn__read_full(fd, buf, n);
    const int err = errno;
    close(fd);
    if (got < 0 || (size_t)got != n) {
        free(buf);
        if (got < 0)
            return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: read failed: %s", fn, path,
                             strerror(err));
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: short read (%zd of %zu bytes)", fn, path, got,
                         n);
    }
    buf[n] = '\0';
    *buf_out = buf;
    *len_out = n;
    return FFN_STATUS_OK;
}

// --- writing -------------------------------------------------------------------------------------

enum ffn_status ffn_io_output_target(ffn_ctx_t ctx, const char *fn, const char *path,
                                     char **target_out) {
    *target_out = NULL;
    if (!path[0]) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: empty output path", fn);
    struct stat sb;
    char *target = NULL;
    if (lstat(path, &sb) != 0) {
        if (errno != ENOENT)
            return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: %s", fn, path, strerror(errno));
        // A new file: its directory must exist (and be one).
        char *dir = ffn_io_path_dir(path);
        if (!dir) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        const bool ok = ffn_io_is_dir(dir);
        free(dir);
        if (!ok)
            return ffn_error(ctx, FFN_STATUS_NOT_FOUND,
                             "%s: %s: cannot create: its directory does not exist", fn, path);
        target = ffn_io_strdup(path);
    } else if (S_ISLNK(sb.st_mode)) {
        // Followed (as cp does): the file the link points to is replaced, the link stays.
        target = realpath(path, NULL);
        struct stat tb;
        if (!target || stat(target, &tb) != 0) {
            free(target);
            return ffn_error(ctx, FFN_STATUS_IO,
                             "%s: %s: a symbolic link to a missing file; not written through a "
                             "dangling link",
                             fn, path);
        }
        if (!S_ISREG(tb.st_mode)) {
            const enum ffn_status st = ffn_error(
                ctx, FFN_STATUS_IO,
                "%s: %s: a symbolic link to %s (%s); outputs are written only to regular files", fn,
                path, ffn_io_mode_name((unsigned)tb.st_mode), target);
            free(target);
            return st;
        }
    } else if (S_ISREG(sb.st_mode)) {
        target = ffn_io_strdup(path);
    } else {
        return ffn_error(ctx, FFN_STATUS_IO,
                         "%s: %s: is %s; outputs are written only to regular files or new names",
                         fn, path, ffn_io_mode_name((unsigned)sb.st_mode));
    }
    if (!target) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    *target_out = target;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_file_check_output(ffn_ctx_t ctx, const char *path) {
    static const char fn[] = "ffn_file_check_output";
    ffn_error_clear(ctx);
    if (!path) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL path", fn);
    char *target;
    const enum ffn_status s = ffn_io_output_target(ctx, fn, path, &target);
    if (!s) free(target);
    return s;
}

// Writes all of buf to fd. false on an error (errno set).
static bool ffn__write_full(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n) {
        const ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w, n -= (size_t)w;
    }
    return true;
}

enum ffn_status ffn_io_write_file(ffn_ctx_t ctx, const char *fn, const char *path,
                                  const void *const *parts, const size_t *lens, int n_parts) {
    char *target;
    enum ffn_status s = ffn_io_output_target(ctx, fn, path, &target);
    if (s) return s;
    const size_t tlen = strlen(target);
    char *tmp = malloc(tlen + 48);
    if (!tmp) {
        free(target);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    // A new file under a fresh name: O_EXCL | O_NOFOLLOW, so a file or link someone placed under
    // the name is never written through.
    int fd = -1, err = 0;
    for (int i = 0; i < FFN_IO_TMP_TRIES && fd < 0; i++) {
        snprintf(tmp, tlen + 48, "%s.tmp%ld.%d", target, (long)getpid(), i);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        err = errno;
        if (fd < 0 && err != EEXIST) break;
    }
    if (fd < 0) {
        s = ffn_error(ctx, FFN_STATUS_IO, "%s: %s: cannot create: %s", fn, path, strerror(err));
        free(tmp), free(target);
        return s;
    }
    struct stat old;
    if (stat(target, &old) == 0 && S_ISREG(old.st_mode))
        (void)fchmod(fd, old.st_mode & 0777);  // a replaced file keeps its permissions
    bool ok = true;
    for (int i = 0; i < n_parts && ok; i++)
        if (lens[i] && !ffn__write_full(fd, parts[i], lens[i])) ok = false;
    err = errno;
    if (close(fd) != 0 && ok) ok = false, err = errno;
    // The target may have changed since it was checked: never rename over anything but a
    // regular file.
    struct stat now;
    if (ok && lstat(target, &now) == 0 && !S_ISREG(now.st_mode)) {
        ok = false;
        err = EEXIST;
    }
    if (!ok || rename(tmp, target) != 0) {
        if (ok) err = errno;
        s = ffn_error(ctx, FFN_STATUS_IO, "%s: %s: write failed: %s", fn, path, strerror(err));
        unlink(tmp);
    }
    free(tmp), free(target);
    return s;
}

// --- paths ---------------------------------------------------------------------------------------

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

char *ffn_io_path_dir(const char *path) {
    const size_t n = strlen(path);
    char *dir = malloc(n + 2);  // room for "." whatever the path
    if (!dir) return NULL;
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';  // "/name": the root
    else if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    return dir;
}

char *ffn_io_strndup(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *ffn_io_strdup(const char *s) { return ffn_io_strndup(s, strlen(s)); }
