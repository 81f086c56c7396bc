// gelu_erf_tables.h — the tables of src/cpu/act/gelu_erf.inc: Φ(-s) and the derivative's
// H(s) = Φ(-s) - s·φ(s) by per-interval polynomials for the fast lanes (one table per lookup
// width, FFN_V_LUT_FAST of the vocabulary), and the scaled Mills ratio g(s) for the general form.
// Fits of tools/fit/avx512/tab5.c and tab.c in long double of glibc's erfcl, coefficients
// rounded to f32 one at a time with the lower ones refitted. Included by gelu_erf.inc only.
#ifndef FFN_GELU_ERF_TABLES_H
#define FFN_GELU_ERF_TABLES_H

// --- fast lanes: s = |x| ∈ [0, 5) on FFN_ERF_FAST_N intervals ----------------------------------
// The intervals are uniform in v = s·(s + 4): their width shrinks like 1/(2s + 4), about as fast
// as the logarithmic slope of Φ(-s) (≈ s) grows, so one degree fits all. j = floor(v·N/45),
// t = s - c_j (c_j the interval's midpoint), and on each interval Φ(-s) ≈ F_j(t), H(s) ≈ H_j(t),
// both of degree FFN_ERF_FAST_DEG (H has the zero of gelu_erf' at s ≈ 0.7518, where its bound is
// absolute: in ulps of Φ(-s) + s·φ(s), the larger of its terms). Rows of a table: the centres,
// F's c0..cDEG, F's c0 low part, H's c0..cDEG. One row is one lookup (lut_fast).
#if FFN_V_LUT_FAST == 32
// 32 intervals, degree 5 (`tab5 5 5 32 4 0 print`, H: mode 1): F within 0.33 ulp of f32 with c0
// as a float pair, 1.09 without its low part, which the forward leaves out (FFN_ERF_FAST_C0LO 0):
// one lookup fewer, well inside its 4-ulp tier (on Zen 4 a two-register vpermt2ps costs about as
// much as an fma). H within 1.04 ulp. The table is the one the CUDA kernels read too.
#    define FFN_ERF_FAST_N 32
#    define FFN_ERF_FAST_C0LO 0
#    include "cpu/gelu_erf_fast.h"
static const float ffn__erf_fast_tab[FFN_ERF_FAST_ROWS][32] __attribute__((aligned(64))) = {
#    include "cpu/gelu_erf_fast_tab.inc"
};
#elif FFN_V_LUT_FAST == 8
// 8 intervals, degree 8 (`tab5 8 5 8 4 0 print`, H: mode 1): one-register lookups
// for an ISA whose vpermps reads 8 entries (a 32-entry lookup costs it 4 of them and 3 blends).
// F within 0.45 ulp of f32 with c0 as a float pair (FFN_ERF_FAST_C0LO 1); H within 1.48 ulp.
#    define FFN_ERF_FAST_N 8
#    define FFN_ERF_FAST_DEG 8
#    define FFN_ERF_FAST_C0LO 1
#    define FFN_ERF_FAST_K 0x1.6c16c2p-3f  // 8/45: v·K ∈ [0, 8) for s < 5
#    include "cpu/gelu_erf_fast.h"
static const float ffn__erf_fast_tab[FFN_ERF_FAST_ROWS][8] __attribute__((aligned(32))) = {
    {
        // centre
        0x1.1a3818p-1,
        0x1.80f72cp+0,
        0x1.1e56b2p+1,
        0x1.6ddeeep+1,
        0x1.b4348cp+1,
        0x1.f3f7b8p+1,
        0x1.175cc2p+2,
        0x1.32c044p+2,
    },
    {
        // c0 (high part)
        0x1.29b918p-2,
        0x1.0fa5aap-4,
        0x1.9e44eap-7,
        0x1.17124ap-9,
        0x1.57486cp-12,
        0x1.899552p-15,
        0x1.aa7b64p-18,
        0x1.b9166ep-21,
    },
    {
        // c1
        -0x1.5ef0d6p-2,
        -0x1.07c0f8p-3,
        -0x1.0bb1ap-5,
        -0x1.b7c94ap-8,
        -0x1.3a7f7cp-10,
        -0x1.96f8e2p-13,
        -0x1.e7c262p-16,
        -0x1.12ef6ep-18,
    },
    {
        // c2
        0x1.82e22ep-4,
        0x1.8ca01cp-4,
        0x1.2b6b18p-5,
        0x1.3a447cp-7,
        0x1.0bf0d6p-9,
        0x1.8d6878p-12,
        0x1.0a22cap-14,
        0x1.4970aep-17,
    },
    {
        // c3
        0x1.45c086p-5,
        -0x1.bb92bap-6,
        -0x1.654e3ep-6,
        -0x1.06c81ap-7,
        -0x1.1628ccp-9,
        -0x1.e382b2p-12,
        -0x1.6ee86p-14,
        -0x1.f76c4cp-17,
    },
    {
        // c4
        -0x1.5bb194p-6,
        -0x1.86a31ep-8,
        0x1.90134ap-8,
        0x1.0eceaap-8,
        0x1.80a656p-10,
        0x1.95e9bcp-12,
        0x1.64090ap-14,
        0x1.1228aap-16,
    },
    {
        // c5
        -0x1.db32f4p-9,
        0x1.7f9312p-8,
        0x1.1b62fp-11,
        -0x1.2feb8p-10,
        -0x1.657552p-11,
        -0x1.e92868p-13,
        -0x1.ff8ea6p-15,
        -0x1.c210bep-17,
    },
    {
        // c6
        0x1.9de774p-9,
        -0x1.600fe2p-11,
        -0x1.0a2c52p-10,
        0x1.5cf92ap-20,
        0x1.91c8c2p-13,
        0x1.a4661cp-14,
        0x1.153b56p-15,
        0x1.1e704cp-17,
    },
    {
        // c7
        0x1.82a5fcp-13,
        -0x1.1d8092p-11,
        0x1.08f762p-12,
        0x1.210b8ap-13,
        -0x1.768dcep-17,
        -0x1.d5af56p-16,
        -0x1.c18ffp-17,
        -0x1.1fb78ap-18,
    },
    {
        // c8
        -0x1.5afbp-12,
        0x1.626f5ep-13,
        0x1.3742cep-15,
        -0x1.975658p-15,
        -0x1.046aaap-16,
        0x1.85e122p-19,
        0x1.f4ac4cp-19,
        0x1.b79928p-20,
    },
    {
        // c0 (low part)
        -0x1.27218ap-27,
        0x1.fa7368p-30,
        0x1.0cd1dcp-32,
        -0x1.ffed4ep-36,
        -0x1.b2a5a2p-37,
        0x1.42ec6p-43,
        0x1.7beb3cp-43,
        0x1.fe4c4ap-47,
    },
    {
        // H: c0
        0x1.a11ffep-4,
        -0x1.04cd48p-3,
        -0x1.ef44f6p-5,
        -0x1.176232p-6,
        -0x1.ecf89ep-9,
        -0x1.74cf24p-11,
        -0x1.f99ddep-14,
        -0x1.3ba7fcp-16,
    },
    {
        // H: c1
        -0x1.29a09ap-1,
        0x1.13b4b6p-5,
        0x1.921c76p-4,
        0x1.5332fep-5,
        0x1.79ed4cp-7,
        0x1.51327cp-9,
        0x1.03f032p-11,
        0x1.68623p-14,
    },
    {
        // H: c2
        0x1.657f1ep-2,
        0x1.58ccf4p-3,
        -0x1.2cb1c4p-5,
        -0x1.47a4d8p-5,
        -0x1.fdfd4ep-7,
        -0x1.1798cap-8,
        -0x1.f4c938p-11,
        -0x1.86a5fp-13,
    },
    {
        // H: c3
        0x1.cbdab6p-4,
        -0x1.27370cp-3,
        -0x1.0b1f9ap-5,
        0x1.f10198p-7,
        0x1.794176p-7,
        0x1.137f04p-8,
        0x1.28cccp-10,
        0x1.0994f8p-12,
    },
    {
        // H: c4
        -0x1.db87bap-4,
        0x1.d1a04p-7,
        0x1.2b8658p-5,
        0x1.0c295p-8,
        -0x1.187eaap-8,
        -0x1.575dd6p-9,
        -0x1.db4c44p-11,
        -0x1.f6d138p-13,
    },
    {
        // H: c5
        -0x1.72bda8p-7,
        0x1.dc125cp-6,
        -0x1.543eeap-7,
        -0x1.c66fbap-8,
        -0x1.6beef4p-13,
        0x1.f1d27cp-11,
        0x1.05f7fp-11,
        0x1.5a1138p-13,
    },
    {
        // H: c6
        0x1.756ccp-6,
        -0x1.587adep-7,
        -0x1.8dc83p-9,
        0x1.69be54p-9,
        0x1.13e382p-10,
        -0x1.1ea018p-14,
        -0x1.7234e2p-13,
        -0x1.5b354cp-14,
    },
    {
        // H: c7
        0x1.dad396p-16,
        -0x1.2f9dfp-9,
        0x1.5e5504p-9,
        -0x1.63cf3p-18,
        -0x1.0bf01ep-11,
        -0x1.176656p-13,
        0x1.80c31p-16,
        0x1.dd4026p-16,
    },
    {
        // H: c8
        -0x1.7fa432p-9,
        0x1.e26a2ap-10,
        -0x1.6694c8p-12,
        -0x1.9260aep-12,
        0x1.32a5c4p-14,
        0x1.43d44cp-14,
        0x1.cadca8p-17,
        -0x1.4649f8p-18,
    },
};
#else
#    error "gelu_erf_tables.h: no fast table for this FFN_V_LUT_FAST"
#endif

// --- general lanes: Φ(-s) = exp(-s²/2)·g(s) -----------------------------------------------------
// g(s) = e^{s²/2}·Φ(-s) = e^{s²/2}·erfc(s/√2)/2 on [j/2, (j+1)/2], j = 0..31, as a degree-6
// polynomial in t = s - j/2 (c0 a float pair: relative error ≤ 0.31 ulp of f32). Tables by
// coefficient (c0, c1..c6, c0's low part), then j.
#define FFN_ERF_DEG 6
#define FFN_ERF_ROW_C0LO (FFN_ERF_DEG + 1)
static const float ffn__erf_g_tab[FFN_ERF_DEG + 2][32] __attribute__((aligned(64))) = {
    {
        // c0 (high part)
        0x1p-1,        0x1.66027ap-2, 0x1.0bdb2ep-2, 0x1.a57056p-3, 0x1.5845dcp-3, 0x1.217252p-3,
        0x1.f1b89cp-4, 0x1.b396fap-4, 0x1.82b4bcp-4, 0x1.5b5acep-4, 0x1.3b0fbcp-4, 0x1.201faap-4,
        0x1.095608p-4, 0x1.eba5fep-5, 0x1.c9e12p-5,  0x1.ac6292p-5, 0x1.926972p-5, 0x1.7b5f34p-5,
        0x1.66ccb8p-5, 0x1.545298p-5, 0x1.43a38ap-5, 0x1.34805ap-5, 0x1.26b4dp-5,  0x1.1a1574p-5,
        0x1.0e7dcep-5, 0x1.03cf06p-5, 0x1.f3ddc2p-6, 0x1.e18ddcp-6, 0x1.d087aep-6, 0x1.c0a9c4p-6,
        0x1.b1d706p-6, 0x1.a3f60ap-6,
    },
    {
        // c1
        -0x1.988426p-2,  -0x1.cb0612p-3,  -0x1.195242p-3, -0x1.71c046p-4, -0x1.00f9d8p-4,
        -0x1.75ab62p-5,  -0x1.19cefp-5,   -0x1.b6038ap-6, -0x1.5cf97ap-6, -0x1.1be2c6p-6,
        -0x1.d614ecp-7,  -0x1.8b1956p-7,  -0x1.5068c2p-7, -0x1.21ae92p-7, -0x1.f7d59ep-8,
        -0x1.b9fa6ap-8,  -0x1.86b844p-8,  -0x1.5bcb3ep-8, -0x1.378124p-8, -0x1.188feep-8,
        -0x1.fbf2dp-9,   -0x1.cdeeacp-9,  -0x1.a5dac2p-9, -0x1.82bdeep-9, -0x1.63cfc8p-9,
        -0x1.486db4p-9,  -0x1.3012a8p-9,  -0x1.1a5102p-9, -0x1.06cdbep-9, -0x1.ea79b4p-10,
        -0x1.cabcdap-10, -0x1.adf8e8p-10,
    },
    {
        // c2
        0x1.fff76cp-3,  0x1.e67d08p-4,  0x1.fcc51ap-5,  0x1.203f2cp-5,  0x1.5d2f4p-6,
        0x1.bf38fap-7,  0x1.2c0884p-7,  0x1.a29ec4p-8,  0x1.2dd9e4p-8,  0x1.bfbacep-9,
        0x1.542a88p-9,  0x1.07e3ep-9,   0x1.a0eed8p-10, 0x1.4ea5p-10,   0x1.10637p-10,
        0x1.c0f9cep-11, 0x1.7625d4p-11, 0x1.3ae802p-11, 0x1.0b6e08p-11, 0x1.c9eb5cp-12,
        0x1.8af23ep-12, 0x1.56ee3cp-12, 0x1.2b9aa2p-12, 0x1.073c62p-12, 0x1.d0fb62p-13,
        0x1.9ca85p-13,  0x1.6fdc4p-13,  0x1.494a5p-13,  0x1.27e806p-13, 0x1.0ade66p-13,
        0x1.e2fd9p-14,  0x1.b6748ep-14,
    },
    {
        // c3
        -0x1.0ffc28p-3,  -0x1.c1753p-5,   -0x1.9abfb8p-6,  -0x1.99539ep-7,  -0x1.b73d92p-8,
        -0x1.f60c38p-9,  -0x1.2ecb72p-9,  -0x1.7e775p-10,  -0x1.f69a74p-11, -0x1.55b6a6p-11,
        -0x1.dea176p-12, -0x1.57fc5ep-12, -0x1.f9c8fep-13, -0x1.7b5d94p-13, -0x1.21a4dp-13,
        -0x1.c1582ep-14, -0x1.61880ep-14, -0x1.19b984p-14, -0x1.c638a8p-15, -0x1.7206ep-15,
        -0x1.30550ap-15, -0x1.f8fe92p-16, -0x1.a65aap-16,  -0x1.63da76p-16, -0x1.2ddf6ap-16,
        -0x1.01b354p-16, -0x1.ba910ep-17, -0x1.7e19a4p-17, -0x1.4b932cp-17, -0x1.211988p-17,
        -0x1.fa60b6p-18, -0x1.bd54e8p-18,
    },
    {
        // c4
        0x1.f809dp-5,   0x1.7191e6p-6,  0x1.2c7d0ap-7,  0x1.0b7546p-8,  0x1.0191b6p-9,
        0x1.099978p-10, 0x1.229d2ep-11, 0x1.4ec914p-12, 0x1.9357cep-13, 0x1.f952bcp-14,
        0x1.47953ep-14, 0x1.b5bb04p-15, 0x1.2c5d14p-15, 0x1.a61774p-16, 0x1.2ee948p-16,
        0x1.bb13b4p-17, 0x1.499ee4p-17, 0x1.f20b1cp-18, 0x1.7d8dbep-18, 0x1.280dp-18,
        0x1.d0c8c8p-19, 0x1.70bfa6p-19, 0x1.276f1ap-19, 0x1.ddaf0cp-20, 0x1.856ad4p-20,
        0x1.3fed38p-20, 0x1.08bbbap-20, 0x1.b9118ep-21, 0x1.71bbfcp-21, 0x1.37c178p-21,
        0x1.08508ap-21, 0x1.c2800ap-22,
    },
    {
        // c5
        -0x1.83b0e4p-6,  -0x1.023c56p-7,  -0x1.7d9e5ep-9,  -0x1.35233ep-10, -0x1.0f9666p-11,
        -0x1.003fcp-12,  -0x1.016becp-13, -0x1.113f44p-14, -0x1.307414p-15, -0x1.620aap-16,
        -0x1.ab928cp-17, -0x1.0aff7ap-17, -0x1.5791aap-18, -0x1.c6114ep-19, -0x1.335498p-19,
        -0x1.a91a8p-20,  -0x1.2bcc02p-20, -0x1.ae675ep-21, -0x1.39f8fcp-21, -0x1.d0dd88p-22,
        -0x1.5ccedep-22, -0x1.08fcbcp-22, -0x1.973d64p-23, -0x1.3c3f12p-23, -0x1.effdcp-24,
        -0x1.887e5cp-24, -0x1.393ap-24,   -0x1.f7e3c6p-25, -0x1.984d0ap-25, -0x1.4d22a8p-25,
        -0x1.11927ep-25, -0x1.c40f4ap-26,
    },
    {
        // c6
        0x1.728b62p-8,  0x1.ce5d12p-10, 0x1.3fc084p-11, 0x1.e4d24cp-13, 0x1.8ed536p-14,
        0x1.60bb66p-15, 0x1.4c9dbp-16,  0x1.4bf874p-17, 0x1.5c6e46p-18, 0x1.7e6daap-19,
        0x1.b4ca0ep-20, 0x1.0276eap-20, 0x1.3bc82p-21,  0x1.8d01f4p-22, 0x1.0015cap-22,
        0x1.522b98p-23, 0x1.c82092p-24, 0x1.399afcp-24, 0x1.b6e5a8p-25, 0x1.381ed8p-25,
        0x1.c28f86p-26, 0x1.49ad6ap-26, 0x1.e8951p-27,  0x1.6e4c14p-27, 0x1.159dc4p-27,
        0x1.a914f6p-28, 0x1.4884e4p-28, 0x1.00228p-28,  0x1.92b3d6p-29, 0x1.3f073ap-29,
        0x1.fd2a9cp-30, 0x1.991a82p-30,
    },
    {
        // c0 (low part)
        -0x1.3f65bcp-27, 0x1.4737c2p-27,  -0x1.c023ccp-30, -0x1.066fbp-28,  0x1.4a6b02p-28,
        0x1.5d5b2ep-30,  0x1.25414ep-32,  -0x1.774004p-31, -0x1.fb7ff4p-30, -0x1.7aff5cp-29,
        0x1.762ff4p-29,  -0x1.a666bp-29,  0x1.8d873cp-29,  0x1.55f17ap-31,  0x1.d47a1p-30,
        0x1.6d4712p-30,  0x1.99fb0cp-32,  -0x1.ef4538p-30, -0x1.f7e57ap-32, -0x1.93d914p-30,
        0x1.c9c39cp-30,  -0x1.63302cp-32, -0x1.940f06p-32, 0x1.c551bap-31,  -0x1.c84aeap-30,
        -0x1.f60dfp-30,  0x1.72f078p-32,  -0x1.cb7408p-32, -0x1.2c483cp-31, -0x1.467c6p-34,
        0x1.a7db7p-31,   0x1.4cbc06p-31,
    },
};

#endif  // FFN_GELU_ERF_TABLES_H
