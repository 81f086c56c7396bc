// plan.c — tensor-parallel sharding plans: the partition of d_ff over the ranks, where each
// gate / up output lies in every stored layout, each rank's block spec, and the plan as text
// (printable, parseable as untrusted input, comparable field by field). Pure data: no weights
// are touched here (shard.c copies them), no communication (tp_block.c).
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/tp_impl.h"

#define FFN_TP_PLAN_MAGIC "ffn-tp-plan/1"
#define FFN_TP_DIM_MAX (((int64_t)1 << 30) - 1)  // as the block API: widths below 2^30

static const char *const ffn__layout_names[] = {"separate", "fused", "fused_up_first",
                                                "interleaved", "blocked"};
static const char *const ffn__orient_names[] = {"out_in", "in_out"};
static const char *const ffn__bias_names[] = {"rank0", "after_reduce"};

// --- partition and positions -------------------------------------------------------------------

// units = ceil(m / align); rank r gets units [u_r, u_{r+1}) with u_r = r·q + min(r, rem),
// q = units / P, rem = units mod P; columns are align·u clipped to m (the last unit may be
// short). Every rank needs at least one unit.
bool ffn_tp_partition(int64_t m, int64_t world, int64_t align, int64_t r, int64_t *c0, int64_t *n) {
    if (m < 1 || world < 1 || align < 1 || r < 0 || r >= world) return false;
    const int64_t units = m / align + (m % align != 0);
    if (units < world) return false;
    const int64_t q = units / world, rem = units % world;
    const int64_t u0 = r * q + (r < rem ? r : rem), u1 = (r + 1) * q + (r + 1 < rem ? r + 1 : rem);
    const int64_t a = u0 * align, b = u1 * align;
    *c0 = a;
    *n = (b < m ? b : m) - a;
    return true;
}

void ffn_tp_first_pos(bool gated, enum ffn_gate_up_layout layout, int64_t groups, int64_t m,
                      bool up, int64_t j, enum ffn_tp_member *member, int64_t *pos) {
    if (!gated || layout == FFN_GATE_UP_SEPARATE) {
        *member = up || !gated ? FFN_TP_UP : FFN_TP_GATE;
        *pos = j;
        return;
    }
    *member = FFN_TP_GATE_UP;
    switch (layout) {
    case FFN_GATE_UP_FUSED: *pos = up ? m + j : j; return;           // [g | u]
    case FFN_GATE_UP_FUSED_UP_FIRST: *pos = up ? j : m + j; return;  // [u | g]
    case FFN_GATE_UP_INTERLEAVED: *pos = 2 * j + up; return;         // g0 u0 g1 u1 ...
    case FFN_GATE_UP_BLOCKED:
    default: {
        // [g_0 u_0 | g_1 u_1 | ...], groups of gw = m / groups outputs each.
        const int64_t gw = m / groups;
        *pos = (j / gw) * 2 * gw + (up ? gw : 0) + j % gw;
        return;
    }
    }
}

// --- validation ----------------------------------------------------------------------------------

static bool ffn__fused(const struct ffn_block_spec *s) {
    return s->gated && s->gate_up_layout != FFN_GATE_UP_SEPARATE;
}

static enum ffn_status ffn__check_spec(ffn_ctx_t ctx, const char *fn,
                                       const struct ffn_block_spec *s) {
    if (s->size < sizeof *s)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: spec.size=%zu, expected %zu (start from "
                         "FFN_BLOCK_SPEC_INIT)",
                         fn, s->size, sizeof *s);
    if (s->d_model < 1 || s->d_ff < 1 || s->d_model > FFN_TP_DIM_MAX || s->d_ff > FFN_TP_DIM_MAX)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_model=%" PRId64 ", d_ff=%" PRId64 "; both must be in [1, 2^30)", fn,
                         s->d_model, s->d_ff);
    if ((unsigned)s->act >= FFN_ACT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: act=%d is not an activation", fn,
                         (int)s->act);
    if ((unsigned)s->gate_up_layout >= FFN_GATE_UP_LAYOUT_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: gate_up_layout=%d is not a layout", fn,
                         (int)s->gate_up_layout);
    if (!s->gated && s->bias_gate)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: spec.bias_gate is set but the block is "
                         "plain (no gate)",
                         fn);
    if (s->gated && s->gate_up_layout == FFN_GATE_UP_BLOCKED &&
        (s->tp_groups < 1 || s->d_ff % s->tp_groups != 0))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_ff=%" PRId64
                         " is not a multiple of "
                         "tp_groups=%" PRId64,
                         fn, s->d_ff, s->tp_groups);
    if (ffn__fused(s) && s->bias_gate != s->bias_up)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: a fused gate/up has one bias for both "
                         "halves; spec.bias_gate (%d) and spec.bias_up (%d) must agree",
                         fn, (int)s->bias_gate, (int)s->bias_up);
    return FFN_STATUS_OK;
}

static bool ffn__orient_ok(enum ffn_weight_orient o) {
    return (unsigned)o < FFN_WEIGHT_ORIENT_COUNT;
}

enum ffn_status ffn_tp_plan_check(ffn_ctx_t ctx, const char *fn, const struct ffn_tp_plan *p) {
    if (p->size < sizeof *p)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: plan.size=%zu, expected %zu (start from "
                         "FFN_TP_PLAN_INIT)",
                         fn, p->size, sizeof *p);
    enum ffn_status st = ffn__check_spec(ctx, fn, &p->block);
    if (st) return st;
    const struct ffn_block_spec *s = &p->block;
    if (p->world < 1 || p->world > FFN_TP_MAX_WORLD)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: world=%" PRId64 "; expected 1 to %d", fn,
                         p->world, FFN_TP_MAX_WORLD);
    if (p->align < 1 || p->align > FFN_TP_DIM_MAX)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: align=%" PRId64
                         "; expected an integer "
                         "≥ 1",
                         fn, p->align);
    int64_t c0, n;
    if (!ffn_tp_partition(s->d_ff, p->world, p->align, 0, &c0, &n)) {
        const int64_t units = s->d_ff / p->align + (s->d_ff % p->align != 0);
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: d_ff=%" PRId64 " makes %" PRId64 " unit%s of align=%" PRId64
                         "; %" PRId64 " ranks need at least one each",
                         fn, s->d_ff, units, units == 1 ? "" : "s", p->align, p->world);
    }
    const enum ffn_weight_orient os[6] = {p->orient_gate,     p->orient_up,
                                          p->orient_down,     p->shard_orient_gate,
                                          p->shard_orient_up, p->shard_orient_down};
    for (int k = 0; k < 6; k++)
        if (!ffn__orient_ok(os[k]))
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: orientation %d is not one", fn,
                             (int)os[k]);
    if ((unsigned)p->shard_layout >= FFN_GATE_UP_LAYOUT_COUNT ||
        (unsigned)p->down_bias >= FFN_TP_DOWN_BIAS_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: shard_layout=%d, down_bias=%d; expected "
                         "a layout and a down-bias rule",
                         fn, (int)p->shard_layout, (int)p->down_bias);
    // The normal form (what ffn_tp_plan_make writes), so that equal plans compare equal.
    const bool plain = !s->gated;
    if (plain &&
        (s->gate_up_layout != FFN_GATE_UP_SEPARATE || p->shard_layout != FFN_GATE_UP_SEPARATE))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: a plain block has no gate/up layout "
                         "(layout and shard_layout must be separate)",
                         fn);
    if (s->tp_groups != (s->gated && s->gate_up_layout == FFN_GATE_UP_BLOCKED ? s->tp_groups : 1))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: tp_groups=%" PRId64
                         " without a blocked "
                         "layout; expected 1",
                         fn, s->tp_groups);
    if ((plain || ffn__fused(s)) && p->orient_gate != p->orient_up)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: one stored tensor holds gate and up "
                         "(or there is no gate): orient_gate must equal orient_up",
                         fn);
    if ((plain || p->shard_layout != FFN_GATE_UP_SEPARATE) &&
        p->shard_orient_gate != p->shard_orient_up)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: the shard keeps gate and up in one "
                         "tensor (or has no gate): shard_orient_gate must equal shard_orient_up",
                         fn);
    if (p->shard_layout == FFN_GATE_UP_BLOCKED)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: a rank's shard holds one group; use "
                         "the fused layout [g_r | u_r] instead of blocked",
                         fn);
    if (s->gated && s->gate_up_layout == FFN_GATE_UP_INTERLEAVED &&
        p->orient_gate != FFN_WEIGHT_OUT_IN)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: a row-interleaved gate_up must be stored "
                         "[out, in]",
                         fn);
    if (p->shard_layout == FFN_GATE_UP_INTERLEAVED && p->shard_orient_gate != FFN_WEIGHT_OUT_IN)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: an interleaved shard layout needs the "
                         "[out, in] orientation (the block API reads interleaved rows only)",
                         fn);
    if (!s->bias_down && p->down_bias != FFN_TP_DOWN_BIAS_RANK0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: down_bias=after_reduce for a block "
                         "without b_down; expected rank0",
                         fn);
    return FFN_STATUS_OK;
}

// --- make, range, shard spec ------------------------------------------------------------------

enum ffn_status ffn_tp_plan_make(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                 const struct ffn_block_weights *w, int64_t world,
                                 const struct ffn_tp_plan_opts *opts, struct ffn_tp_plan *plan) {
    static const char fn[] = "ffn_tp_plan_make";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!spec || !plan)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: spec and plan must not be NULL", fn);
    if (plan->size < sizeof *plan)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: plan.size=%zu, expected %zu (start from "
                         "FFN_TP_PLAN_INIT)",
                         fn, plan->size, sizeof *plan);
    if (w && w->size < sizeof *w)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: weights.size=%zu, expected %zu", fn,
                         w->size, sizeof *w);
    struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
    if (opts) {
        if (opts->size < sizeof o)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "%s: opts.size=%zu, expected %zu (start "
                             "from FFN_TP_PLAN_OPTS_INIT)",
                             fn, opts->size, sizeof o);
        o = *opts;
    }
    enum ffn_status st = ffn__check_spec(ctx, fn, spec);
    if (st) return st;
    if ((unsigned)o.layout > FFN_GATE_UP_LAYOUT_COUNT ||
        (unsigned)o.orient > FFN_WEIGHT_ORIENT_COUNT ||
        (unsigned)o.down_bias >= FFN_TP_DOWN_BIAS_COUNT)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: opts has layout=%d, orient=%d, "
                         "down_bias=%d; expected enum values",
                         fn, (int)o.layout, (int)o.orient, (int)o.down_bias);
    struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
    p.world = world;
    p.align = o.align;
    p.block = *spec;
    p.block.size = sizeof p.block;
    const bool gated = spec->gated, fused = ffn__fused(spec);
    if (!gated) p.block.gate_up_layout = FFN_GATE_UP_SEPARATE;
    if (!gated || spec->gate_up_layout != FFN_GATE_UP_BLOCKED) p.block.tp_groups = 1;
    // Stored orientations, from the weight views (the only thing read from them).
    const enum ffn_weight_orient def = FFN_WEIGHT_OUT_IN;
    enum ffn_weight_orient og = def, ou = def, od = def;
    if (w) {
        if (fused)
            og = ou = w->gate_up.orient;
        else {
            ou = w->up.orient;
            og = gated ? w->gate.orient : ou;
        }
        od = w->down.orient;
    }
    p.orient_gate = og, p.orient_up = ou, p.orient_down = od;
    // Each rank's layout: as stored unless asked (a blocked source gives fused [g_r | u_r]).
    if (!gated)
        p.shard_layout = FFN_GATE_UP_SEPARATE;
    else if (o.layout == FFN_GATE_UP_LAYOUT_COUNT)
        p.shard_layout =
            spec->gate_up_layout == FFN_GATE_UP_BLOCKED ? FFN_GATE_UP_FUSED : spec->gate_up_layout;
    else
        p.shard_layout = o.layout;
    const bool as_stored = o.orient == FFN_WEIGHT_ORIENT_COUNT;
    p.shard_orient_gate = as_stored ? og : o.orient;
    p.shard_orient_up = as_stored ? ou : o.orient;
    p.shard_orient_down = as_stored ? od : o.orient;
    if (!gated || p.shard_layout != FFN_GATE_UP_SEPARATE) p.shard_orient_up = p.shard_orient_gate;
    if (p.shard_layout == FFN_GATE_UP_INTERLEAVED && as_stored &&
        p.shard_orient_gate != FFN_WEIGHT_OUT_IN)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: an interleaved shard layout needs the "
                         "[out, in] orientation; the gate/up weights are stored [in, out] (ask for "
                         "orient out_in)",
                         fn);
    p.down_bias = spec->bias_down ? o.down_bias : FFN_TP_DOWN_BIAS_RANK0;
    if ((st = ffn_tp_plan_check(ctx, fn, &p))) return st;
    *plan = p;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tp_plan_range(ffn_ctx_t ctx, const struct ffn_tp_plan *plan, int64_t rank,
                                  int64_t *col0_out, int64_t *cols_out) {
    static const char fn[] = "ffn_tp_plan_range";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!plan || !col0_out || !cols_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    enum ffn_status st = ffn_tp_plan_check(ctx, fn, plan);
    if (st) return st;
    if (rank < 0 || rank >= plan->world)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: rank %" PRId64 " is outside [0, %" PRId64 ")", fn, rank, plan->world);
    ffn_tp_partition(plan->block.d_ff, plan->world, plan->align, rank, col0_out, cols_out);
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tp_plan_shard_spec(ffn_ctx_t ctx, const struct ffn_tp_plan *plan, int64_t rank,
                                       struct ffn_block_spec *spec_out) {
    static const char fn[] = "ffn_tp_plan_shard_spec";
    int64_t c0, n;
    enum ffn_status st = ffn_tp_plan_range(ctx, plan, rank, &c0, &n);
    if (st) return st;
    if (!spec_out) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: spec_out is NULL", fn);
    struct ffn_block_spec s = plan->block;
    s.d_ff = n;
    s.gate_up_layout = plan->shard_layout;
    s.tp_groups = 1;
    s.bias_down = plan->block.bias_down && plan->down_bias == FFN_TP_DOWN_BIAS_RANK0 && rank == 0;
    *spec_out = s;
    return FFN_STATUS_OK;
}

// --- text ----------------------------------------------------------------------------------------

// "58x1,57x2": every rank's width, run-length encoded (a partition has at most three runs).
static void ffn__cols_text(const struct ffn_tp_plan *p, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = '\0';
    int64_t r = 0;
    while (r < p->world && k < cap) {
        int64_t c0 = 0, n = 0, c, m, run = 1;
        ffn_tp_partition(p->block.d_ff, p->world, p->align, r, &c0, &n);
        while (r + run < p->world &&
               ffn_tp_partition(p->block.d_ff, p->world, p->align, r + run, &c, &m) && m == n)
            run++;
        k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64 "x%" PRId64, r ? "," : "", n, run);
        r += run;
    }
}

enum ffn_status ffn_tp_plan_to_string(ffn_ctx_t ctx, const struct ffn_tp_plan *p, char *buf,
                                      size_t cap) {
    static const char fn[] = "ffn_tp_plan_to_string";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!p || !buf) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    enum ffn_status st = ffn_tp_plan_check(ctx, fn, p);
    if (st) return st;
    const struct ffn_block_spec *s = &p->block;
    char cols[96];
    ffn__cols_text(p, cols, sizeof cols);
    char text[FFN_TP_PLAN_TEXT_MAX];
    const int len = snprintf(
        text, sizeof text,
        FFN_TP_PLAN_MAGIC " world=%" PRId64 " d_model=%" PRId64 " d_ff=%" PRId64
                          " act=%s gated=%d layout=%s tp_groups=%" PRId64
                          " orient=%s,%s,%s bias=%d,%d,%d align=%" PRId64
                          " shard_layout=%s shard_orient=%s,%s,%s down_bias=%s cols=%s",
        p->world, s->d_model, s->d_ff, ffn_act_name(s->act), (int)s->gated,
        ffn__layout_names[s->gate_up_layout], s->tp_groups, ffn__orient_names[p->orient_gate],
        ffn__orient_names[p->orient_up], ffn__orient_names[p->orient_down], (int)s->bias_gate,
        (int)s->bias_up, (int)s->bias_down, p->align, ffn__layout_names[p->shard_layout],
        ffn__orient_names[p->shard_orient_gate], ffn__orient_names[p->shard_orient_up],
        ffn__orient_names[p->shard_orient_down], ffn__bias_names[p->down_bias], cols);
    if (len < 0 || (size_t)len >= cap)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: the text needs %d bytes, buf has %zu",
                         fn, len + 1, cap);
    memcpy(buf, text, (size_t)len + 1);
    return FFN_STATUS_OK;
}

// A decimal integer in [lo, hi], the whole of s[0..n).
static bool ffn__int(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out) {
    if (n == 0 || n > 18) return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

static int ffn__name(const char *s, size_t n, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && !memcmp(s, names[i], n)) return i;
    return -1;
}

// Splits "a,b,c" (s[0..n)) into exactly `k` parts.
static bool ffn__split(const char *s, size_t n, int k, const char **part, size_t *len) {
    int i = 0;
    size_t start = 0;
    for (size_t j = 0; j <= n; j++) {
        if (j == n || s[j] == ',') {
            if (i == k) return false;
            part[i] = s + start, len[i] = j - start, i++;
            start = j + 1;
        }
    }
    return i == k;
}

enum {
    K_WORLD,
    K_DMODEL,
    K_DFF,
    K_ACT,
    K_GATED,
    K_LAYOUT,
    K_GROUPS,
    K_ORIENT,
    K_BIAS,
    K_ALIGN,
    K_SLAYOUT,
    K_SORIENT,
    K_DBIAS,
    K_COLS,
    K_COUNT
};
static const char *const ffn__keys[K_COUNT] = {
    "world",  "d_model", "d_ff",  "act",          "gated",        "layout",    "tp_groups",
    "orient", "bias",    "align", "shard_layout", "shard_orient", "down_bias", "cols"};

enum ffn_status ffn_tp_plan_parse(ffn_ctx_t ctx, const char *text, struct ffn_tp_plan *plan) {
    static const char fn[] = "ffn_tp_plan_parse";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!text || !plan) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    if (plan->size < sizeof *plan)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: plan.size=%zu, expected %zu (start from "
                         "FFN_TP_PLAN_INIT)",
                         fn, plan->size, sizeof *plan);
    const size_t tl = strnlen(text, FFN_TP_PLAN_TEXT_MAX);
    if (tl >= FFN_TP_PLAN_TEXT_MAX)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: plan text longer than %d bytes", fn,
                         FFN_TP_PLAN_TEXT_MAX - 1);
    const size_t ml = strlen(FFN_TP_PLAN_MAGIC);
    if (strncmp(text, FFN_TP_PLAN_MAGIC, ml) || (text[ml] != ' ' && text[ml] != '\0'))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: plan text does not start with \"%s\" "
                         "(another format or version)",
                         fn, FFN_TP_PLAN_MAGIC);
    const char *val[K_COUNT] = {0};
    size_t vlen[K_COUNT] = {0};
    const char *p = text + ml;
    while (*p) {
        if (*p != ' ' || p[1] == ' ' || p[1] == '\0')
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: plan text: fields must be separated "
                             "by single spaces",
                             fn);
        p++;
        const char *eq = p;
        while (*eq && *eq != '=' && *eq != ' ') eq++;
        const char *end = eq;
        while (*end && *end != ' ') end++;
        if (*eq != '=')
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: plan text: '%.*s' is not key=value",
                             fn, (int)(end - p > 40 ? 40 : end - p), p);
        const int k = ffn__name(p, (size_t)(eq - p), ffn__keys, K_COUNT);
        if (k < 0)
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: plan text: unknown key '%.*s'", fn,
                             (int)(eq - p > 40 ? 40 : eq - p), p);
        if (val[k])
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: plan text: key '%s' appears twice",
                             fn, ffn__keys[k]);
        val[k] = eq + 1, vlen[k] = (size_t)(end - eq - 1);
        p = end;
    }
    for (int k = 0; k < K_COUNT; k++)
        if (!val[k])
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: plan text: key '%s' is missing", fn,
                             ffn__keys[k]);
#define FFN__BAD(k, what)                                                                          \
    ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: plan text: %s=%.*s; expected %s", fn, ffn__keys[k], \
              (int)(vlen[k] > 40 ? 40 : vlen[k]), val[k], what)
    struct ffn_tp_plan r = FFN_TP_PLAN_INIT;
    struct ffn_block_spec *s = &r.block;
    int64_t v;
    if (!ffn__int(val[K_WORLD], vlen[K_WORLD], 1, FFN_TP_MAX_WORLD, &r.world))
        return FFN__BAD(K_WORLD, "an integer in [1, 65536]");
    if (!ffn__int(val[K_DMODEL], vlen[K_DMODEL], 1, FFN_TP_DIM_MAX, &s->d_model))
        return FFN__BAD(K_DMODEL, "an integer in [1, 2^30)");
    if (!ffn__int(val[K_DFF], vlen[K_DFF], 1, FFN_TP_DIM_MAX, &s->d_ff))
        return FFN__BAD(K_DFF, "an integer in [1, 2^30)");
    char act[32];
    if (vlen[K_ACT] >= sizeof act) return FFN__BAD(K_ACT, "an activation name");
    memcpy(act, val[K_ACT], vlen[K_ACT]);
    act[vlen[K_ACT]] = '\0';
    if (ffn_act_from_name(act, &s->act)) return FFN__BAD(K_ACT, "an activation name");
    if (!ffn__int(val[K_GATED], vlen[K_GATED], 0, 1, &v)) return FFN__BAD(K_GATED, "0 or 1");
    s->gated = v;
    int e = ffn__name(val[K_LAYOUT], vlen[K_LAYOUT], ffn__layout_names, FFN_GATE_UP_LAYOUT_COUNT);
    if (e < 0) return FFN__BAD(K_LAYOUT, "separate, fused, fused_up_first, interleaved or blocked");
    s->gate_up_layout = (enum ffn_gate_up_layout)e;
    if (!ffn__int(val[K_GROUPS], vlen[K_GROUPS], 1, FFN_TP_DIM_MAX, &s->tp_groups))
        return FFN__BAD(K_GROUPS, "an integer ≥ 1");
    const char *part[3];
    size_t plen[3];
    enum ffn_weight_orient o[3];
    for (int pass = 0; pass < 2; pass++) {
        const int k = pass ? K_SORIENT : K_ORIENT;
        if (!ffn__split(val[k], vlen[k], 3, part, plen)) return FFN__BAD(k, "three orientations");
        for (int i = 0; i < 3; i++) {
            e = ffn__name(part[i], plen[i], ffn__orient_names, FFN_WEIGHT_ORIENT_COUNT);
            if (e < 0) return FFN__BAD(k, "out_in or in_out, three times");
            o[i] = (enum ffn_weight_orient)e;
        }
        if (pass)
            r.shard_orient_gate = o[0], r.shard_orient_up = o[1], r.shard_orient_down = o[2];
        else
            r.orient_gate = o[0], r.orient_up = o[1], r.orient_down = o[2];
    }
    if (!ffn__split(val[K_BIAS], vlen[K_BIAS], 3, part, plen)) return FFN__BAD(K_BIAS, "three 0/1");
    bool b[3];
    for (int i = 0; i < 3; i++) {
        if (!ffn__int(part[i], plen[i], 0, 1, &v)) return FFN__BAD(K_BIAS, "three 0/1");
        b[i] = v;
    }
    s->bias_gate = b[0], s->bias_up = b[1], s->bias_down = b[2];
    if (!ffn__int(val[K_ALIGN], vlen[K_ALIGN], 1, FFN_TP_DIM_MAX, &r.align))
        return FFN__BAD(K_ALIGN, "an integer ≥ 1");
    e = ffn__name(val[K_SLAYOUT], vlen[K_SLAYOUT], ffn__layout_names, FFN_GATE_UP_LAYOUT_COUNT);
    if (e < 0) return FFN__BAD(K_SLAYOUT, "separate, fused, fused_up_first or interleaved");
    r.shard_layout = (enum ffn_gate_up_layout)e;
    e = ffn__name(val[K_DBIAS], vlen[K_DBIAS], ffn__bias_names, FFN_TP_DOWN_BIAS_COUNT);
    if (e < 0) return FFN__BAD(K_DBIAS, "rank0 or after_reduce");
    r.down_bias = (enum ffn_tp_down_bias)e;
#undef FFN__BAD
    enum ffn_status st = ffn_tp_plan_check(ctx, fn, &r);
    if (st) {  // the same message, as a format error: the text is what is wrong
        char msg[sizeof ctx->err];
        snprintf(msg, sizeof msg, "%s", ctx->err);
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s (in the plan text)", msg);
    }
    char cols[96];
    ffn__cols_text(&r, cols, sizeof cols);
    if (strlen(cols) != vlen[K_COLS] || memcmp(cols, val[K_COLS], vlen[K_COLS]))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: plan text: cols=%.*s, but d_ff=%" PRId64 ", world=%" PRId64
                         ", align=%" PRId64 " give cols=%s",
                         fn, (int)(vlen[K_COLS] > 60 ? 60 : vlen[K_COLS]), val[K_COLS], s->d_ff,
                         r.world, r.align, cols);
    *plan = r;
    return FFN_STATUS_OK;
}

// One field of a plan for the comparison: its name, both values, and the names of an enum's
// values (NULL: print the integers).
struct ffn__field {
    const char *name;
    int64_t a, b;
    const char *const *names;
    unsigned count;
};

static const char *ffn__value_name(const struct ffn__field *f, int64_t v, char *buf, size_t cap) {
    if (f->names) return v >= 0 && (uint64_t)v < f->count ? f->names[v] : "?";
    if (f->names == NULL && f->count == 1) return ffn_act_name((enum ffn_act)v);
    snprintf(buf, cap, "%" PRId64, v);
    return buf;
}

bool ffn_tp_plan_equal(const struct ffn_tp_plan *a, const struct ffn_tp_plan *b, char *why,
                       size_t why_cap) {
    char tmp[8];
    if (!why || why_cap == 0) why = tmp, why_cap = sizeof tmp;
    why[0] = '\0';
    if (!a || !b) {
        snprintf(why, why_cap, "a plan is NULL");
        return a == b;
    }
    const struct ffn_block_spec *x = &a->block, *y = &b->block;
    const char *const *L = ffn__layout_names, *const *O = ffn__orient_names;
    // In the order of the text form; count 1 without names marks the activation.
    const struct ffn__field f[] = {
        {"world", a->world, b->world, NULL, 0},
        {"d_model", x->d_model, y->d_model, NULL, 0},
        {"d_ff", x->d_ff, y->d_ff, NULL, 0},
        {"act", x->act, y->act, NULL, 1},
        {"gated", x->gated, y->gated, NULL, 0},
        {"layout", x->gate_up_layout, y->gate_up_layout, L, 5},
        {"tp_groups", x->tp_groups, y->tp_groups, NULL, 0},
        {"orient (gate)", a->orient_gate, b->orient_gate, O, 2},
        {"orient (up)", a->orient_up, b->orient_up, O, 2},
        {"orient (down)", a->orient_down, b->orient_down, O, 2},
        {"bias_gate", x->bias_gate, y->bias_gate, NULL, 0},
        {"bias_up", x->bias_up, y->bias_up, NULL, 0},
        {"bias_down", x->bias_down, y->bias_down, NULL, 0},
        {"align", a->align, b->align, NULL, 0},
        {"shard_layout", a->shard_layout, b->shard_layout, L, 5},
        {"shard_orient (gate)", a->shard_orient_gate, b->shard_orient_gate, O, 2},
        {"shard_orient (up)", a->shard_orient_up, b->shard_orient_up, O, 2},
        {"shard_orient (down)", a->shard_orient_down, b->shard_orient_down, O, 2},
        {"down_bias", a->down_bias, b->down_bias, ffn__bias_names, 2},
    };
    for (size_t i = 0; i < FFN_ARRAY_LEN(f); i++) {
        if (f[i].a == f[i].b) continue;
        char ba[24], bb[24];
        snprintf(why, why_cap, "%s: %s vs %s", f[i].name,
                 ffn__value_name(&f[i], f[i].a, ba, sizeof ba),
                 ffn__value_name(&f[i], f[i].b, bb, sizeof bb));
        return false;
    }
    return true;
}

// --- cost ---------------------------------------------------------------------------------------

enum ffn_status ffn_tp_plan_cost(ffn_ctx_t ctx, const struct ffn_tp_plan *plan, int64_t rank,
                                 int64_t n_tokens, enum ffn_dtype act_dtype,
                                 struct ffn_tp_cost *cost) {
    static const char fn[] = "ffn_tp_plan_cost";
    int64_t c0, n;
    enum ffn_status st = ffn_tp_plan_range(ctx, plan, rank, &c0, &n);
    if (st) return st;
    if (!cost || cost->size < sizeof *cost || n_tokens < 0 || ffn_dtype_size(act_dtype) == 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: cost (size set from FFN_TP_COST_INIT), "
                         "n_tokens ≥ 0 and a known dtype expected",
                         fn);
    const struct ffn_block_spec *s = &plan->block;
    const int64_t d = s->d_model, k = s->gated ? 3 : 2;
    const bool has_bd =
        s->bias_down && (plan->down_bias == FFN_TP_DOWN_BIAS_AFTER_REDUCE || rank == 0);
    cost->d_ff = n;
    cost->n_params =
        k * d * n + (s->bias_up ? n : 0) + (s->gated && s->bias_gate ? n : 0) + (has_bd ? d : 0);
    const double payload = (double)n_tokens * (double)d * (double)ffn_dtype_size(act_dtype);
    const double ring = 2.0 * (double)(plan->world - 1) / (double)plan->world;
    cost->allreduce_bytes_fwd = cost->allreduce_bytes_bwd = payload;
    cost->sent_bytes_fwd = cost->sent_bytes_bwd = ring * payload;
    return FFN_STATUS_OK;
}
