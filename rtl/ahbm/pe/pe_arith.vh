// pe_engine's arithmetic (docs/ahbm.md §8): the stages of ATTN_TILE, MERGE (from a state set, and the
// row scales of the streamed MERGE), INIT, NORM_STORE's staging, the (m,l,O) packet words pushed and the
// words popped or merged, bit exact to models/ahbm/attention.py with the fp32 functions of fp32_lib.vh.
// Included inside pe_engine, after its state arrays; the tasks work on them with blocking temporaries
// (its one datapath process).
//
// With AHBM_ARITH_VPI defined (Icarus builds of the AHBM benches, tb/run/arith_vpi.py) INIT, S2, S3+S4,
// S6, MERGE, a streamed MERGE's row scales and O elements, NORM_STORE's staging and pe_engine's landing of DMA
// words call their compiled twins (rtl/ahbm/vpi/ahbm_arith.c: the same operations in the same order on the
// same arrays, at the same edge, bit for bit); a twin that returns 0 (an x or z operand word) wrote nothing
// and the Verilog loop below it runs (the O element's twin returns x, and the functions then run). The
// other simulators and lint see only the loops.
    // ---------------------------------------------------------------- arithmetic (bit exact to models/ahbm/attention.py)
    /* verilator lint_off BLKSEQ */   // behavioural compute: blocking temporaries and arrays, one process
    integer r, k, c, t, idx;
`ifdef AHBM_ARITH_VPI
    reg [31:0] landed;   // pe_engine's DMA landing: 1 when $ahbm_land copied the word
    reg [31:0] o_n, o_done;                // a packet word of O elements alone: how many; 1 when its twin
    reg [IPCQ_W-1:0] o_word;               // took or built it (and the word it built)
    // body word w (1-based) of an (m, l, O) packet of `rows` rows: how many O elements it holds when it
    // holds nothing else (m and l come first, then ROWS x D O elements, then padding), else 0
    function [31:0] o_alone(input [7:0] rows, input [31:0] w);
        reg [31:0] e0, oend;
        begin
            e0 = 32'(EPW) * (w - 32'd1);
            oend = 2 * 32'(rows) + 32'(rows) * D;
            o_alone = (e0 < 2 * 32'(rows) || e0 >= oend) ? 32'd0 : (e0 + EPW < oend) ? EPW : oend - e0;
        end
    endfunction
`endif
    reg [31:0] acc, mx, msub, alpha, rs, ea, eb, a32, b32;

    // S2: S = dot(Q, K^T) * scale, k-index ascending from +0
    // (widening is exact, so doing it once per tile and per Q row changes no bit; the rows x keys x d
    // inner loop is then one mul and one add, with its base indices hoisted)
    task automatic do_s2(input [1:0] qr, input [2:0] sl, input [7:0] rows, input [8:0] keys);
`ifdef AHBM_ARITH_VPI
        if ($ahbm_s2(qbuf, kbuf, sp, 32'(qr) * MAXROWS * D, 32'(sl) * SLOT_K, 32'(rows), 32'(keys), D, MAXKEYS,
                     SCALE) == 32'd0)
`endif
        begin
            for (t = 0; t < 32'(keys) * D; t = t + 1) tf[t] = bf16_to_f32(kbuf[32'(sl) * SLOT_K + t]);
            for (r = 0; r < 32'(rows); r = r + 1) begin
                idx = (32'(qr) * MAXROWS + r) * D;
                for (c = 0; c < D; c = c + 1) qf[c] = bf16_to_f32(qbuf[idx + c]);
                for (k = 0; k < 32'(keys); k = k + 1) begin
                    acc = 32'd0;
                    a32 = k * D;
                    for (c = 0; c < D; c = c + 1)
                        acc = f32_add(acc, f32_mul(qf[c], tf[a32 + c]));
                    sp[r * MAXKEYS + k] = f32_mul(acc, SCALE);
                end
            end
        end
    endtask

    // S3 (mask add) and S4 (online softmax update of the carried state)
    task automatic do_s34(input [2:0] s, input [2:0] sl, input [7:0] rows, input [8:0] keys, input men);
`ifdef AHBM_ARITH_VPI
        if ($ahbm_s34(sp, mbuf, st_m, st_l, st_o, 32'(s) * MAXROWS, 32'(sl) * SLOT_M, 32'(mask_stride(keys)),
                      32'(rows), 32'(keys), 32'(men), D, MAXKEYS) == 32'd0)
`endif
        begin
            for (r = 0; r < 32'(rows); r = r + 1) begin
                if (men)
                    for (k = 0; k < 32'(keys); k = k + 1)
                        sp[r * MAXKEYS + k] = f32_add(sp[r * MAXKEYS + k],
                            bf16_to_f32(mbuf[32'(sl) * SLOT_M + r * 32'(mask_stride(keys)) + k]));
                idx = 32'(s) * MAXROWS + r;
                mx = st_m[idx];
                for (k = 0; k < 32'(keys); k = k + 1)
                    mx = f32_max(mx, sp[r * MAXKEYS + k]);
                msub = (mx == NEG_INF) ? 32'd0 : mx;
                rs = 32'd0;
                for (k = 0; k < 32'(keys); k = k + 1) begin
                    sp[r * MAXKEYS + k] = f32_exp(f32_sub(sp[r * MAXKEYS + k], msub));
                    rs = f32_add(rs, sp[r * MAXKEYS + k]);
                end
                alpha = f32_exp(f32_sub(st_m[idx], msub));
                st_l[idx] = f32_add(f32_mul(st_l[idx], alpha), rs);
                for (c = 0; c < D; c = c + 1)
                    st_o[idx * D + c] = f32_mul(st_o[idx * D + c], alpha);
                st_m[idx] = mx;
            end
        end
    endtask

    // S6: O += P V, t ascending from +0, then added to the rescaled O
    task automatic do_s6(input [2:0] s, input [2:0] sl, input [7:0] rows, input [8:0] keys);
`ifdef AHBM_ARITH_VPI
        if ($ahbm_s6(sp, vbuf, st_o, 32'(sl) * SLOT_K, 32'(s) * MAXROWS * D, 32'(rows), 32'(keys), D,
                     MAXKEYS) == 32'd0)
`endif
        begin
            for (t = 0; t < 32'(keys) * D; t = t + 1) tf[t] = bf16_to_f32(vbuf[32'(sl) * SLOT_K + t]);
            for (r = 0; r < 32'(rows); r = r + 1) begin
                idx = (32'(s) * MAXROWS + r) * D;
                b32 = r * MAXKEYS;
                for (c = 0; c < D; c = c + 1) begin
                    acc = 32'd0;
                    for (t = 0; t < 32'(keys); t = t + 1)
                        acc = f32_add(acc, f32_mul(sp[b32 + t], tf[t * D + c]));
                    st_o[idx + c] = f32_add(st_o[idx + c], acc);
                end
            end
        end
    endtask

    task automatic do_init(input [2:0] s);
`ifdef AHBM_ARITH_VPI
        if ($ahbm_init(st_m, st_l, st_o, 32'(s) * MAXROWS, MAXROWS, D) == 32'd0)
`endif
        begin
            for (r = 0; r < MAXROWS; r = r + 1) begin
                st_m[32'(s) * MAXROWS + r] = NEG_INF;
                st_l[32'(s) * MAXROWS + r] = 32'd0;
                for (c = 0; c < D; c = c + 1) st_o[(32'(s) * MAXROWS + r) * D + c] = 32'd0;
            end
        end
    endtask

    // MERGE: S_a := merge(S_a, S_b) (attention.merge)
    task automatic do_merge(input [2:0] sa, input [2:0] sb, input [7:0] rows);
`ifdef AHBM_ARITH_VPI
        if ($ahbm_merge(st_m, st_l, st_o, 32'(sa) * MAXROWS, 32'(sb) * MAXROWS, 32'(rows), D) == 32'd0)
`endif
        begin
            for (r = 0; r < 32'(rows); r = r + 1) begin
                a32 = 32'(sa) * MAXROWS + r;
                b32 = 32'(sb) * MAXROWS + r;
                mx = f32_max(st_m[a32], st_m[b32]);
                msub = (mx == NEG_INF) ? 32'd0 : mx;
                ea = f32_exp(f32_sub(st_m[a32], msub));
                eb = f32_exp(f32_sub(st_m[b32], msub));
                st_l[a32] = f32_add(f32_mul(st_l[a32], ea), f32_mul(st_l[b32], eb));
                for (c = 0; c < D; c = c + 1)
                    st_o[a32 * D + c] = f32_add(f32_mul(st_o[a32 * D + c], ea), f32_mul(st_o[b32 * D + c], eb));
                st_m[a32] = mx;
            end
        end
    endtask

    // streamed MERGE, once every row's m and l of the child (mb, lb) are in: the new m and l of S_a and
    // the row scales mea = exp(m_a - m), meb = exp(m_b - m) its O elements are merged with (do_merge's ops)
    task automatic do_mexp(input [2:0] sa, input [7:0] rows);
`ifdef AHBM_ARITH_VPI
        if ($ahbm_mexp(st_m, st_l, mb, lb, mea, meb, 32'(sa) * MAXROWS, 32'(rows)) == 32'd0)
`endif
        begin
            for (r = 0; r < 32'(rows); r = r + 1) begin
                a32 = 32'(sa) * MAXROWS + r;
                mx = f32_max(st_m[a32], mb[r]);
                msub = (mx == NEG_INF) ? 32'd0 : mx;
                mea[r] = f32_exp(f32_sub(st_m[a32], msub));
                meb[r] = f32_exp(f32_sub(mb[r], msub));
                st_l[a32] = f32_add(f32_mul(st_l[a32], mea[r]), f32_mul(lb[r], meb[r]));
                st_m[a32] = mx;
            end
        end
    endtask

    // NORM_STORE staging: bf16(O / l), +0 where l == 0 (attention.finalize)
    task automatic do_norm(input [2:0] s, input [7:0] rows);
`ifdef AHBM_ARITH_VPI
        if ($ahbm_norm(st_l, st_o, obuf, 32'(s) * MAXROWS, 32'(rows), D) == 32'd0)
`endif
        begin
            for (r = 0; r < 32'(rows); r = r + 1) begin
                idx = 32'(s) * MAXROWS + r;
                for (c = 0; c < D; c = c + 1)
                    obuf[r * D + c] = (st_l[idx][30:0] == 31'd0) ? 16'd0
                                      : f32_to_bf16(f32_div(st_o[idx * D + c], st_l[idx]));
            end
        end
    endtask

    // body word w (1-based) of a child's (m, l, O) packet (EPW elements, element EPW (w-1) + i in bits
    // [32i+31:32i]) into state set s. Popped (IPCQ_POP, merge = 0): the elements replace S_s's. Streamed
    // (MERGE SRC_Q, merge = 1): m and l are held (mb, lb) until every row's are in, which gives the new m, l
    // and the row scales (do_mexp); each O element is then merged into S_s's as it arrives.
    task automatic take_word(input [2:0] s, input [7:0] rows, input [31:0] w, input [IPCQ_W-1:0] word,
                             input merge);
        begin
`ifdef AHBM_ARITH_VPI                            // a word of O elements alone (most of a packet): one compiled call
            o_n = o_alone(rows, w);
            o_done = 32'd0;
            if (o_n != 32'd0)
                o_done = $ahbm_otake(st_o, mea, meb, word, 32'(s) * MAXROWS * D, EPW * (w - 32'd1) - 2 * 32'(rows), o_n,
                                     D, 32'(merge));
            if (o_done == 32'd0)
`endif
            for (t = 0; t < EPW; t = t + 1) begin
                idx = EPW * (w - 32'd1) + t;
                a32 = word[32*t +: 32];
                if (idx < 32'(rows)) begin
                    if (merge) mb[idx] = a32;
                    else st_m[32'(s) * MAXROWS + idx] = a32;
                end else if (idx < 2 * 32'(rows)) begin
                    if (!merge) st_l[32'(s) * MAXROWS + idx - 32'(rows)] = a32;
                    else begin
                        lb[idx - 32'(rows)] = a32;
                        if (idx == 2 * 32'(rows) - 1) do_mexp(s, rows);
                    end
                end else if (idx < 2 * 32'(rows) + 32'(rows) * D) begin
                    b32 = idx - 2 * 32'(rows);                       // O element, row-major
                    c = 32'(s) * MAXROWS * D + b32;
                    if (merge) begin
`ifdef AHBM_ARITH_VPI                                                // one compiled call, the functions on x / z
                        acc = $ahbm_f32_mac2(st_o[c], mea[b32 / D], a32, meb[b32 / D]);
                        if (^acc === 1'bx) acc = f32_add(f32_mul(st_o[c], mea[b32 / D]), f32_mul(a32, meb[b32 / D]));
                        st_o[c] = acc;
`else
                        st_o[c] = f32_add(f32_mul(st_o[c], mea[b32 / D]), f32_mul(a32, meb[b32 / D]));
`endif
                    end else st_o[c] = a32;
                end
            end
        end
    endtask

    // body word j (1-based) of the (m, l, O) packet of state set s: EPW elements, element EPW (j-1) + u in
    // bits [32u+31:32u]; the body is m (rows), l (rows), O (rows x D, row-major), zero past its end. Each
    // element is selected here, not by a function of its own: Icarus runs every function call as a thread.
    function [IPCQ_W-1:0] mlo_body(input [2:0] s, input [7:0] rows, input [31:0] j);
        integer u;
        reg [31:0] e, r32;
        begin
            mlo_body = {IPCQ_W{1'b0}};
            r32 = 32'(rows);
`ifdef AHBM_ARITH_VPI                            // a word of O elements alone (most of a packet): one compiled call
            o_n = o_alone(rows, j);
            o_done = 32'd0;
            if (o_n != 32'd0) o_done = $ahbm_obody(o_word, st_o, 32'(s) * MAXROWS * D, 32'(EPW) * (j - 32'd1) - 2 * r32, o_n);
            if (o_done != 32'd0) mlo_body = o_word;
            else
`endif
            for (u = 0; u < EPW; u = u + 1) begin
                e = 32'(EPW) * (j - 32'd1) + 32'(u);
                if (e < r32) mlo_body[32*u +: 32] = st_m[32'(s) * MAXROWS + e];
                else if (e < 2 * r32) mlo_body[32*u +: 32] = st_l[32'(s) * MAXROWS + e - r32];
                else if (e < 2 * r32 + r32 * D) mlo_body[32*u +: 32] = st_o[32'(s) * MAXROWS * D + e - 2 * r32];
            end
        end
    endfunction

    /* verilator lint_on BLKSEQ */
