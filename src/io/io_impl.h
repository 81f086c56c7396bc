// io_impl.h — internals of the io layer (safetensors, GGUF, Hugging Face config, architecture
// maps): file mapping, hostile-JSON checks, checked arithmetic and the architecture table.
// Never installed. The io layer depends only on core.
#ifndef FFN_IO_IMPL_H
#define FFN_IO_IMPL_H

#include <cjson/cJSON.h>

#include "core/core_impl.h"

// --- limits -------------------------------------------------------------------------------------
#define FFN_IO_ST_MAX_HEADER 100000000u      // safetensors header ≤ 100 MB (reference rule)
#define FFN_IO_JSON_MAX_DEPTH 64             // deeper JSON is refused before cJSON sees it
#define FFN_IO_CONFIG_MAX_BYTES (16u << 20)  // config.json / *.index.json read fully: ≤ 16 MiB
#define FFN_IO_MAX_SHARDS 4096               // files one sharded checkpoint may name
#define FFN_IO_GGUF_MAX_ARRAY_DEPTH 8        // arrays of arrays of ... at most this deep
#define FFN_IO_GGUF_DEFAULT_ALIGNMENT 32     // general.alignment when absent (GGUF spec)

// --- checked arithmetic (every size from a file goes through these) -------------------------
static inline bool ffn_io_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool ffn_io_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

// --- file kinds --------------------------------------------------------------------------------
// What a file is, from its first bytes, before any parser reads it (so that a GGUF file given
// where safetensors is expected, or a config.json where a shard index is, is named as such).
enum ffn_io_kind {
    FFN_IO_KIND_UNKNOWN = 0,
    FFN_IO_KIND_SAFETENSORS,  // u64 LE header length < 2^48, then '{'
    FFN_IO_KIND_GGUF,         // "GGUF"
    FFN_IO_KIND_JSON,         // optional UTF-8 BOM and whitespace, then '{' or '['
};
#define FFN_IO_SNIFF_BYTES 16  // bytes ffn_io_sniff looks at (fewer when the file is shorter)
enum ffn_io_kind ffn_io_sniff(const uint8_t *p, size_t n);
// "a safetensors file", "a GGUF file", "a JSON file", "an unrecognised file".
const char *ffn_io_kind_name(enum ffn_io_kind kind);
// The kind of the file at `path` (a regular file: see ffn_io_open_regular).
enum ffn_status ffn_io_file_kind(ffn_ctx_t ctx, const char *fn, const char *path,
                                 enum ffn_io_kind *kind_out);

// --- reading files ---------------------------------------------------------------------------
// Opens `path` read-only when it is a regular file (symbolic links followed). A FIFO, a device,
// a socket or a directory is refused by stat() before anything opens it, so nothing blocks and
// no device sees an open(); the file is then opened with O_NONBLOCK | O_NOCTTY and checked again
// with fstat() (still a regular file, the same one), so a swap in between is caught too.
// *size_out gets the file's size. The caller closes *fd_out.
enum ffn_status ffn_io_open_regular(ffn_ctx_t ctx, const char *fn, const char *path, int *fd_out,
                                    uint64_t *size_out);
// "a directory", "a FIFO", "a character device", ... for a stat() mode.
const char *ffn_io_mode_name(unsigned mode);

// A read-only file mapping.
struct ffn_io_map {
    const uint8_t *data;  // NULL for an empty file
    size_t size;
    bool mapped;  // true: munmap on close; false: data is the caller's (memory "files")
};

// Maps `path` (a regular file) read-only. `fn` names the public function in messages.
enum ffn_status ffn_io_map_file(ffn_ctx_t ctx, const char *fn, const char *path,
                                struct ffn_io_map *m);
void ffn_io_unmap(struct ffn_io_map *m);
// Reads a whole small regular file (≤ max bytes) into a NUL-terminated heap buffer.
enum ffn_status ffn_io_read_file(ffn_ctx_t ctx, const char *fn, const char *path, size_t max,
                                 char **buf_out, size_t *len_out);

// --- writing files ---------------------------------------------------------------------------
// Where a write to `path` may go. Outputs are written only to a regular file (replaced) or to a
// new name in an existing directory: a directory, FIFO, device or socket is refused. A symbolic
// link is followed, as cp does: the file it points to is replaced and the link kept; a link
// that dangles or resolves to anything but a regular file is refused. *target_out (malloc'ed)
// is the path to replace.
enum ffn_status ffn_io_output_target(ffn_ctx_t ctx, const char *fn, const char *path,
                                     char **target_out);
// Writes the parts to `path` (see ffn_io_output_target) through a new temporary file beside the
// target (created with O_EXCL | O_NOFOLLOW, so nothing planted under its name is followed) and
// a rename, so a failed write never leaves a half file under the final name. A replaced file
// keeps its permission bits.
enum ffn_status ffn_io_write_file(ffn_ctx_t ctx, const char *fn, const char *path,
                                  const void *const *parts, const size_t *lens, int n_parts);
bool ffn_io_is_dir(const char *path);
bool ffn_io_exists(const char *path);
// "dir/name" into a new heap string (NULL when out of memory).
char *ffn_io_path_join(const char *dir, const char *name);
// The directory part of a path ("." when it has none), in a new heap string.
char *ffn_io_path_dir(const char *path);
char *ffn_io_strdup(const char *s);
char *ffn_io_strndup(const char *s, size_t n);

// The path of file i of an opened safetensors checkpoint (0 ≤ i < ffn_safetensors_shard_count),
// NULL when out of range: what the tensor-parallel layer hashes as a shard set's source.
const char *ffn_io_safetensors_shard_path(ffn_safetensors_t st, int i);

// --- hostile JSON ------------------------------------------------------------------------------
// Parses `text[0..len)` (need not be NUL-terminated) after checking what cJSON does not: strict
// UTF-8 (no overlong forms, no surrogates, ≤ U+10FFFF), no raw control characters or \u0000
// inside strings, nesting ≤ FFN_IO_JSON_MAX_DEPTH (so 200,000 '[' give a clean error, not a deep
// recursion), a top-level object (first non-space byte '{'), nothing but whitespace after it, and
// no duplicate key in any object. `what` names the text in messages ("<path>: header").
enum ffn_status ffn_io_json_parse(ffn_ctx_t ctx, const char *fn, const char *what, const char *text,
                                  size_t len, cJSON **out);
// A JSON number that is an exact non-negative integer ≤ 2^53 (so the double is exact).
bool ffn_io_json_u64(const cJSON *item, uint64_t *out);

// --- dtypes --------------------------------------------------------------------------------------
// Bytes per block and elements per block of a file dtype (1 element per block except the GGUF
// quantised types: 32). Bits are not needed: every supported type is byte-granular.
struct ffn_io_dtype_info {
    const char *st_name;  // safetensors spelling ("F32"), NULL when safetensors has none
    uint32_t block_elems;
    uint32_t block_bytes;
};
const struct ffn_io_dtype_info *ffn_io_dtype_info(enum ffn_file_dtype dtype);
// Bytes of `numel` elements of `dtype` (numel a whole number of blocks); false on overflow or
// a partial block.
bool ffn_io_dtype_bytes(enum ffn_file_dtype dtype, uint64_t numel, uint64_t *bytes_out);

// --- the architecture table (arch.c) ----------------------------------------------------------
// How one Hugging Face architecture names and stores its FFN. Name patterns hold one "%L" for the
// layer number and, for mixtures of experts, one "%E" for the expert number; they are relative to
// one of the layer prefixes (`prefixes`, tried in order: the first under which the FFN's first
// tensor exists wins). A NULL pattern means the architecture has no such tensor.
#define FFN_IO_ARCH_MAX_KEYS 4
#define FFN_IO_ARCH_MAX_PREFIXES 3

enum ffn_io_act_rule {
    FFN_IO_ACT_FROM_CONFIG = 0,  // the config's activation key decides
    FFN_IO_ACT_GEMMA,            // Gemma 1: config may say "gelu" but the model runs the tanh GeLU
    FFN_IO_ACT_T5,               // T5: feed_forward_proj "[gated-]act"; gated-gelu = tanh GeLU
};

enum ffn_io_m_rule {
    FFN_IO_M_CONFIG = 0,  // m from the config keys, required
    FFN_IO_M_OR_4D,       // m from the config keys, 4·d when absent or null (GPT-2, GPT-J, Falcon)
};

struct ffn_io_arch {
    const char *model_type;  // config.json "model_type"
    const char *gguf_arch;   // GGUF general.architecture (NULL: not read from GGUF)
    const char *gguf_act;    // the activation llama.cpp runs for gguf_arch (HF spelling)
    const char *d_keys[FFN_IO_ARCH_MAX_KEYS];      // hidden size, first present wins
    const char *m_keys[FFN_IO_ARCH_MAX_KEYS];      // intermediate size
    const char *layer_keys[FFN_IO_ARCH_MAX_KEYS];  // number of layers
    const char *act_keys[FFN_IO_ARCH_MAX_KEYS];    // activation name
    const char *act_default;  // transformers' default when no key is present (NULL: required)
    const char *expert_keys[FFN_IO_ARCH_MAX_KEYS];  // number of experts (MoE); none: dense
    enum ffn_io_act_rule act_rule;
    enum ffn_io_m_rule m_rule;
    bool gated;   // FFN_IO_ACT_T5: decided by the config instead
    bool fused;   // gate and up are one tensor [gate | up] (Phi-3), named by `up`
    bool conv1d;  // weights stored [in, out] (GPT-2 Conv1D)
    const char *prefixes[FFN_IO_ARCH_MAX_PREFIXES];  // e.g. "model.layers.%L.mlp."
    const char *gate, *up, *down;                    // weight names
    const char *b_gate, *b_up, *b_down;              // bias names (optional tensors)
    const char *plain_up, *b_plain_up;               // FFN_IO_ACT_T5 ungated: "wi.weight"
    // Encoder-decoder models: the decoder's FFNs follow the encoder's in the layer numbering.
    const char *dec_prefix;                            // NULL: none
    const char *dec_layer_keys[FFN_IO_ARCH_MAX_KEYS];  // absent or null: as many as the encoder
};

// The entry for a config's model_type, or NULL.
const struct ffn_io_arch *ffn_io_arch_find(const char *model_type);
// The entry whose gguf_arch is `name`, or NULL.
const struct ffn_io_arch *ffn_io_arch_find_gguf(const char *name);
// Number of entries and entry i (to list the supported names in an error).
size_t ffn_io_arch_count(void);
const struct ffn_io_arch *ffn_io_arch_at(size_t i);
// Maps a transformers activation name (ACT2FN key) to an activation; false when unknown.
bool ffn_io_act_from_hf(const char *name, enum ffn_act *act_out);
// The known activation names (for error messages).
size_t ffn_io_hf_act_count(void);
const char *ffn_io_hf_act_name(size_t i);
// Expands a name pattern ("%L", "%E") into buf. false when it does not fit.
bool ffn_io_name_expand(char *buf, size_t cap, const char *prefix, const char *pattern,
                        int64_t layer, int64_t expert);

// --- Hugging Face config (hf_config.c) -------------------------------------------------------
// Reads the FFN spec from a parsed config.json; *arch_out is the architecture's table entry.
// `what` names the file in messages.
enum ffn_status ffn_io_hf_config_read(ffn_ctx_t ctx, const char *fn, const char *what,
                                      const cJSON *root, struct ffn_hf_config *out,
                                      const struct ffn_io_arch **arch_out);

#endif  // FFN_IO_IMPL_H
