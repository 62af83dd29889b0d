/* ahbm_arith.c: the AHBM PE's composite arithmetic as compiled VPI system functions, for Icarus only
 * (docs/ahbm.md, "Speed on Icarus").
 *
 * Why: Icarus interprets the fp32 functions of rtl/ahbm/fp32/fp32_lib.vh at 1-2 us a call (f32_exp 37 us),
 * and an ATTN_TILE's S2 and S6 are ROWS x KEYS x D multiply-adds each, computed at the edge the stage
 * starts (pe_engine): at d = 128 that was most of an AHBM bench's time. The same arithmetic in
 * C, on the same arrays, at the same edge, changes no bit and no cycle: pe_arith.vh calls these functions
 * where AHBM_ARITH_VPI is defined (tb/run/arith_vpi.py builds this file and defines it on Icarus builds
 * of the AHBM benches) and keeps its Verilog loops for Verilator, for lint and as the fallback.
 *
 * Bit identity with fp32_lib.vh: + - * / are the machine's IEEE binary32 operations (round to nearest
 * even, subnormals kept: the Verilog functions are that, bit for bit, against numpy), every NaN result made
 * the canonical 0x7FC00000 as the Verilog functions return it; max, exp and the bf16 conversions follow the
 * Verilog functions step for step. tests/unit/ahbm/test_ahbm_arith_vpi.py compares every function here with
 * its Verilog twin on edge and random operands, and each stage on random tiles with NaN, inf, subnormal
 * and tie operands, both through Icarus.
 *
 * Each stage function reads every operand word first, then computes, then writes: it returns 0 having
 * written nothing when an operand word has an x or z bit, or when the floating-point unit flushes
 * subnormals (a mode no default process sets), and the Verilog loop then runs as before, so a run's
 * verdicts never depend on this file. Array words are read and written through VPI at the call (blocking,
 * vpiNoDelay), as the Verilog loop's blocking writes.
 *
 * Build (tb/run/arith_vpi.py): cc $(iverilog-vpi --cflags) -ffp-contract=off -o ahbm_arith.vpi ahbm_arith.c
 * $(iverilog-vpi --ldflags) $(iverilog-vpi --ldlibs); -ffp-contract=off keeps a multiply and an add two
 * roundings on machines with a fused multiply-add.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <vpi_user.h>

typedef uint32_t u32;

#define CANON_NAN 0x7FC00000u
#define NEG_INF 0xFF800000u

/* ------------------------------------------------------------------ fp32, bit patterns in and out */
static inline float f_of(u32 b) { float f; memcpy(&f, &b, sizeof f); return f; }
static inline u32 b_of(float f) { u32 b; memcpy(&b, &f, sizeof b); return b; }
static inline u32 canon(float f) { return (f != f) ? CANON_NAN : b_of(f); }

static inline u32 f32_add(u32 a, u32 b) { return canon(f_of(a) + f_of(b)); }
static inline u32 f32_sub(u32 a, u32 b) { return f32_add(a, b ^ 0x80000000u); }
static inline u32 f32_mul(u32 a, u32 b) { return canon(f_of(a) * f_of(b)); }
static inline u32 f32_div(u32 a, u32 b) { return canon(f_of(a) / f_of(b)); }
/* x*y + z*w with three roundings: a MERGE's scaled sum of two states (fp32_lib.vh's f32_add of two f32_mul) */
static inline u32 f32_mac2(u32 x, u32 y, u32 z, u32 w) { return f32_add(f32_mul(x, y), f32_mul(z, w)); }

/* numpy.maximum as fp32_lib.vh: a NaN operand gives the canonical NaN; equal values (+0, -0) give b */
static inline u32 f32_max(u32 a, u32 b)
{
    u32 am = a & 0x7FFFFFFFu, bm = b & 0x7FFFFFFFu;
    int gt;
    if (am > 0x7F800000u || bm > 0x7F800000u) return CANON_NAN;
    if ((a >> 31) != (b >> 31)) gt = !(a >> 31) && (am != 0 || bm != 0);
    else if (!(a >> 31)) gt = am > bm;
    else gt = am < bm;
    return gt ? a : b;
}

/* numerics.exp_f32, the steps E0..E7 of fp32_lib.vh's f32_exp */
static u32 f32_exp(u32 x)
{
    u32 xm = x & 0x7FFFFFFFu, t, nmag, nf, r, p;
    int32_t n, esum;
    if (xm > 0x7F800000u) return CANON_NAN;                                  /* E0 */
    if (!(x >> 31) && xm > 0x42B16666u) return 0x7F800000u;
    if ((x >> 31) && xm > 0x42B00000u) return 0;
    t = f32_mul(x, 0x3FB8AA3Bu);                                             /* E1 */
    if (((t >> 23) & 0xFFu) < 126u) {                                        /* E2 */
        nmag = 0;
    } else {
        u32 mt = 0x800000u | (t & 0x7FFFFFu);
        u32 sh = (22u - ((t >> 23) & 0x1Fu)) & 0x1Fu;                        /* 150 - exponent */
        u32 ip = (mt >> sh) & 0x1FFu;
        u32 rem = mt & ~(0xFFFFFFu << sh) & 0xFFFFFFu;
        u32 half = (1u << ((sh - 1u) & 0x1Fu)) & 0xFFFFFFu;
        nmag = (ip + ((rem > half) || (rem == half && (ip & 1u)))) & 0x1FFu;
    }
    n = (t >> 31) ? -(int32_t)nmag : (int32_t)nmag;
    /* E3 and the negation: -nf, which is -0 for n = 0 */
    nf = (nmag == 0) ? 0x80000000u : b_of((t >> 31) ? (float)nmag : -(float)nmag);
    r = f32_add(x, f32_mul(nf, 0x3F317200u));                                /* E4 */
    r = f32_add(r, f32_mul(nf, 0x35BFBE8Eu));                                /* E5 */
    p = f32_add(f32_mul(0x39500D01u, r), 0x3AB60B61u);                       /* E6 */
    p = f32_add(f32_mul(p, r), 0x3C088889u);
    p = f32_add(f32_mul(p, r), 0x3D2AAAABu);
    p = f32_add(f32_mul(p, r), 0x3E2AAAABu);
    p = f32_add(f32_mul(p, r), 0x3F000000u);
    p = f32_add(f32_mul(p, r), 0x3F800000u);
    p = f32_add(f32_mul(p, r), 0x3F800000u);
    esum = (int32_t)((p >> 23) & 0xFFu) + n;                                 /* E7 */
    if (esum <= 0) return 0;
    if (esum >= 255) return 0x7F800000u;
    return p + ((u32)n << 23);
}

static inline u32 f32_to_bf16(u32 x)
{
    u32 lo = x & 0xFFFFu;
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (x & 0x80000000u) >> 16 | 0x7FC0u;
    return ((x >> 16) + (lo > 0x8000u || (lo == 0x8000u && ((x >> 16) & 1u)))) & 0xFFFFu;
}

static inline u32 bf16_to_f32(u32 h) { return (h & 0xFFFFu) << 16; }

/* subnormal operands and results kept (no flush-to-zero, no denormals-are-zero) */
static int ieee_subnormals(void)
{
    volatile float tiny = 1e-40f, one = 1.0f, zero = 0.0f;
    return tiny * one != 0.0f && tiny + zero == tiny;
}

/* One row of a MERGE of states (m_a, l_a) and (m_b, l_b) (attention.merge, pe_arith.vh's do_merge): the new
 * m, the row scales ea = exp(m_a - m), eb = exp(m_b - m), and the new l = l_a ea + l_b eb */
static void merge_row(u32 ma, u32 mb, u32 la, u32 lb, u32 *m, u32 *l, u32 *ea, u32 *eb)
{
    u32 mx = f32_max(ma, mb), msub = (mx == NEG_INF) ? 0 : mx;
    *ea = f32_exp(f32_sub(ma, msub));
    *eb = f32_exp(f32_sub(mb, msub));
    *l = f32_mac2(la, *ea, lb, *eb);
    *m = mx;
}

/* ------------------------------------------------------------------ VPI access */
typedef struct {
    vpiHandle h[16];
    int n;
    int ok;      /* no argument had an x or z bit */
} args_t;

static void get_args(args_t *a)
{
    vpiHandle call = vpi_handle(vpiSysTfCall, NULL), it = vpi_iterate(vpiArgument, call), h;
    a->n = 0;
    a->ok = 1;
    while (it && (h = vpi_scan(it)) != NULL) {
        if (a->n < 16) a->h[a->n++] = h;
    }
}

static u32 arg_int(args_t *a, int i)
{
    s_vpi_value v;
    v.format = vpiVectorVal;
    vpi_get_value(a->h[i], &v);
    if (v.value.vector[0].bval) a->ok = 0;
    return (u32)v.value.vector[0].aval;
}

/* words [base, base + n) of the array argument i into out; 0 on an x / z bit or a word out of range */
static int rd(args_t *a, int i, u32 base, u32 n, u32 *out)
{
    for (u32 k = 0; k < n; k++) {
        vpiHandle w = vpi_handle_by_index(a->h[i], (PLI_INT32)(base + k));
        s_vpi_value v;
        if (!w) return 0;
        v.format = vpiVectorVal;
        vpi_get_value(w, &v);
        if (v.value.vector[0].bval) return 0;
        out[k] = (u32)v.value.vector[0].aval;
    }
    return 1;
}

static void wr(args_t *a, int i, u32 base, u32 n, const u32 *in)
{
    for (u32 k = 0; k < n; k++) {
        vpiHandle w = vpi_handle_by_index(a->h[i], (PLI_INT32)(base + k));
        s_vpi_vecval vec;
        s_vpi_value v;
        vec.aval = (PLI_INT32)in[k];
        vec.bval = 0;
        v.format = vpiVectorVal;
        v.value.vector = &vec;
        vpi_put_value(w, &v, NULL, vpiNoDelay);
    }
}

static void ret(u32 value)
{
    vpiHandle call = vpi_handle(vpiSysTfCall, NULL);
    s_vpi_value v;
    s_vpi_vecval vec;
    vec.aval = (PLI_INT32)value;
    vec.bval = 0;
    v.format = vpiVectorVal;
    v.value.vector = &vec;
    vpi_put_value(call, &v, NULL, vpiNoDelay);
}

/* scratch buffers, grown as needed (one simulation thread) */
static u32 *scratch(int which, u32 n)
{
    static u32 *buf[6];
    static u32 cap[6];
    if (n > cap[which]) {
        free(buf[which]);
        buf[which] = malloc(sizeof(u32) * (n ? n : 1));
        cap[which] = buf[which] ? n : 0;
    }
    return buf[which];
}

/* ------------------------------------------------------------------ the stages (pe_arith.vh's tasks) */

/* $ahbm_s2(qbuf, kbuf, sp, qbase, kbase, rows, keys, D, MAXKEYS, SCALE): S = dot(Q, K^T) * scale */
static PLI_INT32 s2_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 qbase, kbase, rows, keys, d, mk, scale, *q, *kt, *s;
    (void)ud;
    get_args(&a);
    qbase = arg_int(&a, 3); kbase = arg_int(&a, 4); rows = arg_int(&a, 5); keys = arg_int(&a, 6);
    d = arg_int(&a, 7); mk = arg_int(&a, 8); scale = arg_int(&a, 9);
    q = scratch(0, rows * d); kt = scratch(1, keys * d); s = scratch(2, rows * mk);
    if (!a.ok || !ieee_subnormals() || !q || !kt || !s || !rd(&a, 0, qbase, rows * d, q)
        || !rd(&a, 1, kbase, keys * d, kt)) { ret(0); return 0; }
    for (u32 i = 0; i < rows * d; i++) q[i] = bf16_to_f32(q[i]);
    for (u32 i = 0; i < keys * d; i++) kt[i] = bf16_to_f32(kt[i]);
    for (u32 r = 0; r < rows; r++)
        for (u32 k = 0; k < keys; k++) {
            u32 acc = 0;
            for (u32 c = 0; c < d; c++) acc = f32_add(acc, f32_mul(q[r * d + c], kt[k * d + c]));
            s[r * keys + k] = f32_mul(acc, scale);
        }
    for (u32 r = 0; r < rows; r++) wr(&a, 2, r * mk, keys, s + r * keys);
    ret(1);
    return 0;
}

/* $ahbm_s34(sp, mbuf, st_m, st_l, st_o, srow, mbase, mstride, rows, keys, men, D, MAXKEYS): the mask add
 * and the online softmax update of state rows srow .. srow + rows - 1 */
static PLI_INT32 s34_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 srow, mbase, mstride, rows, keys, men, d, mk, *s, *m, *sm, *sl, *so;
    (void)ud;
    get_args(&a);
    srow = arg_int(&a, 5); mbase = arg_int(&a, 6); mstride = arg_int(&a, 7); rows = arg_int(&a, 8);
    keys = arg_int(&a, 9); men = arg_int(&a, 10) & 1u; d = arg_int(&a, 11); mk = arg_int(&a, 12);
    s = scratch(0, rows * keys); m = scratch(1, rows * keys); sm = scratch(2, rows); sl = scratch(3, rows);
    so = scratch(4, rows * d);
    if (!a.ok || !ieee_subnormals() || !s || !m || !sm || !sl || !so) { ret(0); return 0; }
    for (u32 r = 0; r < rows; r++) {
        if (!rd(&a, 0, r * mk, keys, s + r * keys)) { ret(0); return 0; }
        if (men && !rd(&a, 1, mbase + r * mstride, keys, m + r * keys)) { ret(0); return 0; }
    }
    if (!rd(&a, 2, srow, rows, sm) || !rd(&a, 3, srow, rows, sl) || !rd(&a, 4, srow * d, rows * d, so)) {
        ret(0);
        return 0;
    }
    for (u32 r = 0; r < rows; r++) {
        u32 *sr = s + r * keys, mx, msub, rs = 0, alpha;
        if (men)
            for (u32 k = 0; k < keys; k++) sr[k] = f32_add(sr[k], bf16_to_f32(m[r * keys + k]));
        mx = sm[r];
        for (u32 k = 0; k < keys; k++) mx = f32_max(mx, sr[k]);
        msub = (mx == NEG_INF) ? 0 : mx;
        for (u32 k = 0; k < keys; k++) {
            sr[k] = f32_exp(f32_sub(sr[k], msub));
            rs = f32_add(rs, sr[k]);
        }
        alpha = f32_exp(f32_sub(sm[r], msub));
        sl[r] = f32_add(f32_mul(sl[r], alpha), rs);
        for (u32 c = 0; c < d; c++) so[r * d + c] = f32_mul(so[r * d + c], alpha);
        sm[r] = mx;
    }
    for (u32 r = 0; r < rows; r++) wr(&a, 0, r * mk, keys, s + r * keys);
    wr(&a, 3, srow, rows, sl);
    wr(&a, 4, srow * d, rows * d, so);
    wr(&a, 2, srow, rows, sm);
    ret(1);
    return 0;
}

/* $ahbm_s6(sp, vbuf, st_o, vbase, obase, rows, keys, D, MAXKEYS): O += P V */
static PLI_INT32 s6_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 vbase, obase, rows, keys, d, mk, *p, *vt, *o;
    (void)ud;
    get_args(&a);
    vbase = arg_int(&a, 3); obase = arg_int(&a, 4); rows = arg_int(&a, 5); keys = arg_int(&a, 6);
    d = arg_int(&a, 7); mk = arg_int(&a, 8);
    p = scratch(0, rows * keys); vt = scratch(1, keys * d); o = scratch(2, rows * d);
    if (!a.ok || !ieee_subnormals() || !p || !vt || !o || !rd(&a, 1, vbase, keys * d, vt)
        || !rd(&a, 2, obase, rows * d, o)) { ret(0); return 0; }
    for (u32 r = 0; r < rows; r++)
        if (!rd(&a, 0, r * mk, keys, p + r * keys)) { ret(0); return 0; }
    for (u32 i = 0; i < keys * d; i++) vt[i] = bf16_to_f32(vt[i]);
    for (u32 r = 0; r < rows; r++)
        for (u32 c = 0; c < d; c++) {
            u32 acc = 0;
            for (u32 t = 0; t < keys; t++) acc = f32_add(acc, f32_mul(p[r * keys + t], vt[t * d + c]));
            o[r * d + c] = f32_add(o[r * d + c], acc);
        }
    wr(&a, 2, obase, rows * d, o);
    ret(1);
    return 0;
}

/* $ahbm_init(st_m, st_l, st_o, srow, rows, D): INIT, state rows srow .. srow + rows - 1 to m = -inf, l = +0,
 * O = +0 (writes only: the Verilog loop's words, in C) */
static PLI_INT32 init_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 srow, rows, d, *m, *z;
    (void)ud;
    get_args(&a);
    srow = arg_int(&a, 3); rows = arg_int(&a, 4); d = arg_int(&a, 5);
    m = scratch(0, rows); z = scratch(1, rows * d);
    if (!a.ok || !m || !z) { ret(0); return 0; }
    for (u32 r = 0; r < rows; r++) m[r] = NEG_INF;
    memset(z, 0, sizeof(u32) * rows * d);
    wr(&a, 0, srow, rows, m);
    wr(&a, 1, srow, rows, z);
    wr(&a, 2, srow * d, rows * d, z);
    ret(1);
    return 0;
}

/* $ahbm_merge(st_m, st_l, st_o, arow, brow, rows, D): S_a := merge(S_a, S_b) */
static PLI_INT32 merge_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 arow, brow, rows, d, *ma, *mb, *la, *lb, *oa, *ob;
    (void)ud;
    get_args(&a);
    arow = arg_int(&a, 3); brow = arg_int(&a, 4); rows = arg_int(&a, 5); d = arg_int(&a, 6);
    ma = scratch(0, rows); mb = scratch(1, rows); la = scratch(2, rows); lb = scratch(3, rows);
    oa = scratch(4, rows * d); ob = scratch(5, rows * d);
    if (!a.ok || !ieee_subnormals() || !ma || !mb || !la || !lb || !oa || !ob
        || !rd(&a, 0, arow, rows, ma) || !rd(&a, 0, brow, rows, mb) || !rd(&a, 1, arow, rows, la)
        || !rd(&a, 1, brow, rows, lb) || !rd(&a, 2, arow * d, rows * d, oa) || !rd(&a, 2, brow * d, rows * d, ob)) {
        ret(0);
        return 0;
    }
    /* S_a == S_b (arow == brow) reads the same words as the Verilog loop does: each row reads both sides
     * before it writes S_a's, and the copies ma / mb, oa / ob were taken before any write */
    for (u32 r = 0; r < rows; r++) {
        u32 ea, eb;
        merge_row(ma[r], mb[r], la[r], lb[r], &ma[r], &la[r], &ea, &eb);
        for (u32 c = 0; c < d; c++) oa[r * d + c] = f32_mac2(oa[r * d + c], ea, ob[r * d + c], eb);
    }
    wr(&a, 1, arow, rows, la);
    wr(&a, 2, arow * d, rows * d, oa);
    wr(&a, 0, arow, rows, ma);
    ret(1);
    return 0;
}

/* $ahbm_mexp(st_m, st_l, mb, lb, mea, meb, arow, rows): a streamed MERGE once every row's m and l of the
 * child (mb, lb) are in: merge_row's new m and l of S_a and the row scales (mea, meb) its O elements are
 * merged with. Rows are independent: reading them all first is the Verilog loop's order. */
static PLI_INT32 mexp_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 arow, rows, *ma, *la, *mb, *lb, *ea, *eb;
    (void)ud;
    get_args(&a);
    arow = arg_int(&a, 6); rows = arg_int(&a, 7);
    ma = scratch(0, rows); la = scratch(1, rows); mb = scratch(2, rows); lb = scratch(3, rows);
    ea = scratch(4, rows); eb = scratch(5, rows);
    if (!a.ok || !ieee_subnormals() || !ma || !la || !mb || !lb || !ea || !eb
        || !rd(&a, 0, arow, rows, ma) || !rd(&a, 1, arow, rows, la) || !rd(&a, 2, 0, rows, mb)
        || !rd(&a, 3, 0, rows, lb)) {
        ret(0);
        return 0;
    }
    for (u32 r = 0; r < rows; r++) merge_row(ma[r], mb[r], la[r], lb[r], &ma[r], &la[r], &ea[r], &eb[r]);
    wr(&a, 4, 0, rows, ea);
    wr(&a, 5, 0, rows, eb);
    wr(&a, 1, arow, rows, la);
    wr(&a, 0, arow, rows, ma);
    ret(1);
    return 0;
}

/* $ahbm_otake(st_o, mea, meb, word, obase, b0, n, D, merge): a popped or streamed (m,l,O) body word that holds
 * only O elements, n of them from O element b0 (row-major) on, element i in word[32i +: 32]: popped
 * (merge = 0) they replace st_o[obase + b0 + i]; merged (merge = 1) st_o[obase + b] becomes
 * f32_add(f32_mul(st_o[obase + b], mea[b / D]), f32_mul(element, meb[b / D])), pe_arith.vh's take_word */
static PLI_INT32 otake_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 obase, b0, n, d, merge, r0, r1, *o, *w, *ea, *eb;
    s_vpi_value v;
    (void)ud;
    get_args(&a);
    obase = arg_int(&a, 4); b0 = arg_int(&a, 5); n = arg_int(&a, 6); d = arg_int(&a, 7); merge = arg_int(&a, 8) & 1u;
    if (!a.ok || d == 0 || n == 0 || (u32)vpi_get(vpiSize, a.h[3]) < 32u * n) { ret(0); return 0; }
    r0 = b0 / d; r1 = (b0 + n - 1) / d;
    o = scratch(0, n); w = scratch(1, n); ea = scratch(2, r1 - r0 + 1); eb = scratch(3, r1 - r0 + 1);
    if (!ieee_subnormals() || !o || !w || !ea || !eb) { ret(0); return 0; }
    v.format = vpiVectorVal;
    vpi_get_value(a.h[3], &v);
    for (u32 i = 0; i < n; i++) {
        if (v.value.vector[i].bval) { ret(0); return 0; }
        w[i] = (u32)v.value.vector[i].aval;
    }
    if (merge) {
        if (!rd(&a, 0, obase + b0, n, o) || !rd(&a, 1, r0, r1 - r0 + 1, ea) || !rd(&a, 2, r0, r1 - r0 + 1, eb)) {
            ret(0);
            return 0;
        }
        for (u32 i = 0; i < n; i++) {
            u32 r = (b0 + i) / d - r0;
            o[i] = f32_mac2(o[i], ea[r], w[i], eb[r]);
        }
        wr(&a, 0, obase + b0, n, o);
    } else {
        wr(&a, 0, obase + b0, n, w);
    }
    ret(1);
    return 0;
}

/* $ahbm_obody(out, st_o, obase, b0, n): an (m,l,O) body word that holds only O elements: out[32i +: 32] =
 * st_o[obase + b0 + i] for i < n, zero above (pe_arith.vh's mlo_body); out is written, 1 returned */
static PLI_INT32 obody_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 obase, b0, n, width, nw, *o;
    s_vpi_vecval *vec;
    s_vpi_value v;
    (void)ud;
    get_args(&a);
    obase = arg_int(&a, 2); b0 = arg_int(&a, 3); n = arg_int(&a, 4);
    width = (u32)vpi_get(vpiSize, a.h[0]);
    nw = (width + 31u) / 32u;
    o = scratch(0, n);
    if (!a.ok || n > nw || !o || !rd(&a, 1, obase + b0, n, o)) { ret(0); return 0; }
    vec = calloc(nw ? nw : 1, sizeof(s_vpi_vecval));
    if (!vec) { ret(0); return 0; }
    for (u32 i = 0; i < n; i++) vec[i].aval = (PLI_INT32)o[i];
    v.format = vpiVectorVal;
    v.value.vector = vec;
    vpi_put_value(a.h[0], &v, NULL, vpiNoDelay);
    free(vec);
    ret(1);
    return 0;
}

/* $ahbm_norm(st_l, st_o, obuf, srow, rows, D): bf16(O / l), +0 where l is +-0 */
static PLI_INT32 norm_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 srow, rows, d, *l, *o;
    (void)ud;
    get_args(&a);
    srow = arg_int(&a, 3); rows = arg_int(&a, 4); d = arg_int(&a, 5);
    l = scratch(0, rows); o = scratch(1, rows * d);
    if (!a.ok || !ieee_subnormals() || !l || !o || !rd(&a, 0, srow, rows, l) || !rd(&a, 1, srow * d, rows * d, o)) {
        ret(0);
        return 0;
    }
    for (u32 r = 0; r < rows; r++)
        for (u32 c = 0; c < d; c++)
            o[r * d + c] = (l[r] & 0x7FFFFFFFu) == 0 ? 0 : f32_to_bf16(f32_div(o[r * d + c], l[r]));
    wr(&a, 2, 0, rows * d, o);
    ret(1);
    return 0;
}

/* $ahbm_land(buf, base, data): a landing DMA word's bf16 elements into buf[base .. base + n - 1], element t
 * from data[16t +: 16], n = the word's width / 16, x and z bits kept (pe_engine's landing loop) */
static PLI_INT32 land_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 base, n;
    s_vpi_value v;
    s_vpi_vecval *src;
    (void)ud;
    get_args(&a);
    base = arg_int(&a, 1);
    if (!a.ok) { ret(0); return 0; }
    n = (u32)vpi_get(vpiSize, a.h[2]) / 16u;
    v.format = vpiVectorVal;
    vpi_get_value(a.h[2], &v);
    src = v.value.vector;
    {
        s_vpi_vecval *words = malloc(sizeof(s_vpi_vecval) * (n ? n : 1));
        if (!words) { ret(0); return 0; }
        for (u32 t = 0; t < n; t++) {   /* copied before any write: a put may reuse VPI's value buffer */
            u32 sh = 16u * (t & 1u);
            words[t].aval = (PLI_INT32)(((u32)src[t / 2].aval >> sh) & 0xFFFFu);
            words[t].bval = (PLI_INT32)(((u32)src[t / 2].bval >> sh) & 0xFFFFu);
        }
        for (u32 t = 0; t < n; t++) {
            vpiHandle w = vpi_handle_by_index(a.h[0], (PLI_INT32)(base + t));
            s_vpi_value put;
            if (!w) continue;           /* past the array's end: the Verilog write does nothing either */
            put.format = vpiVectorVal;
            put.value.vector = &words[t];
            vpi_put_value(w, &put, NULL, vpiNoDelay);
        }
        free(words);
    }
    ret(1);
    return 0;
}

/* ------------------------------------------------------------------ the elementary functions
 * The tests' twins of fp32_lib.vh's functions, and $ahbm_f32_mac2(x, y, z, w) = f32_add(f32_mul(x, y),
 * f32_mul(z, w)): a streamed MERGE's O element as it arrives (pe_arith.vh's take_word), one call where the
 * Verilog makes three. An x or z operand gives an all-x result, and the caller then runs the Verilog. */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_EXP, OP_TO_BF16, OP_TO_F32, OP_MAC2 };

static PLI_INT32 op_calltf(PLI_BYTE8 *ud)
{
    args_t a;
    u32 x, y = 0, z = 0, w = 0, r = 0;
    int op = (int)(intptr_t)ud;
    get_args(&a);
    x = arg_int(&a, 0);
    if (a.n > 1) y = arg_int(&a, 1);
    if (a.n > 3) { z = arg_int(&a, 2); w = arg_int(&a, 3); }
    switch (op) {
    case OP_ADD: r = f32_add(x, y); break;
    case OP_SUB: r = f32_sub(x, y); break;
    case OP_MUL: r = f32_mul(x, y); break;
    case OP_DIV: r = f32_div(x, y); break;
    case OP_MAX: r = f32_max(x, y); break;
    case OP_EXP: r = f32_exp(x); break;
    case OP_TO_BF16: r = f32_to_bf16(x); break;
    case OP_MAC2: r = f32_mac2(x, y, z, w); break;
    default: r = bf16_to_f32(x); break;
    }
    if (!a.ok) {   /* an x / z operand: an x result, never a number the Verilog function would not give */
        vpiHandle call = vpi_handle(vpiSysTfCall, NULL);
        s_vpi_value v;
        s_vpi_vecval vec = {-1, -1};
        v.format = vpiVectorVal;
        v.value.vector = &vec;
        vpi_put_value(call, &v, NULL, vpiNoDelay);
        return 0;
    }
    ret(r);
    return 0;
}

static PLI_INT32 size32(PLI_BYTE8 *ud) { (void)ud; return 32; }
static PLI_INT32 size16(PLI_BYTE8 *ud) { (void)ud; return 16; }

static void reg(const char *name, PLI_INT32 (*calltf)(PLI_BYTE8 *), PLI_INT32 (*sizetf)(PLI_BYTE8 *), intptr_t ud)
{
    s_vpi_systf_data d;
    memset(&d, 0, sizeof d);
    d.type = vpiSysFunc;
    d.sysfunctype = vpiSizedFunc;
    d.tfname = (PLI_BYTE8 *)name;
    d.calltf = calltf;
    d.sizetf = sizetf;
    d.user_data = (PLI_BYTE8 *)ud;
    vpi_register_systf(&d);
}

static void register_all(void)
{
    reg("$ahbm_s2", s2_calltf, size32, 0);
    reg("$ahbm_s34", s34_calltf, size32, 0);
    reg("$ahbm_s6", s6_calltf, size32, 0);
    reg("$ahbm_init", init_calltf, size32, 0);
    reg("$ahbm_merge", merge_calltf, size32, 0);
    reg("$ahbm_mexp", mexp_calltf, size32, 0);
    reg("$ahbm_otake", otake_calltf, size32, 0);
    reg("$ahbm_obody", obody_calltf, size32, 0);
    reg("$ahbm_norm", norm_calltf, size32, 0);
    reg("$ahbm_land", land_calltf, size32, 0);
    reg("$ahbm_f32_add", op_calltf, size32, OP_ADD);
    reg("$ahbm_f32_sub", op_calltf, size32, OP_SUB);
    reg("$ahbm_f32_mul", op_calltf, size32, OP_MUL);
    reg("$ahbm_f32_div", op_calltf, size32, OP_DIV);
    reg("$ahbm_f32_max", op_calltf, size32, OP_MAX);
    reg("$ahbm_f32_exp", op_calltf, size32, OP_EXP);
    reg("$ahbm_f32_to_bf16", op_calltf, size16, OP_TO_BF16);
    reg("$ahbm_bf16_to_f32", op_calltf, size32, OP_TO_F32);
    reg("$ahbm_f32_mac2", op_calltf, size32, OP_MAC2);
}

void (*vlog_startup_routines[])(void) = {register_all, NULL};
