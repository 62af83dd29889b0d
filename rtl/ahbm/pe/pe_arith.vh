// pe_core's arithmetic (docs/ahbm.md §8): the stages of ATTN_TILE, MERGE (from a state set, and the
// row scales of the streamed MERGE), INIT and NORM_STORE's staging, bit exact to
// models/ahbm/attention.py with the fp32 functions of fp32_lib.vh. Included inside pe_core, after its
// state arrays; the tasks work on them with blocking temporaries (one behavioural process).
    // ---------------------------------------------------------------- arithmetic (bit exact to models/ahbm/attention.py)
    /* verilator lint_off BLKSEQ */   // behavioural compute: blocking temporaries and arrays, one process
    integer r, k, c, t, idx;
    reg [31:0] acc, mx, msub, alpha, rs, ea, eb, a32, b32;
    reg [511:0] rx_tmp;
    integer n_o;          // O elements merged by the word a streamed MERGE takes this cycle
    reg     x_now;        // that word completed the rows' m and l

    // S2: S = dot(Q, K^T) * scale, k-index ascending from +0
    // (widening is exact, so doing it once per tile and per Q row changes no bit; the rows x keys x d
    // inner loop is then one mul and one add, with its base indices hoisted)
    task automatic do_s2(input [1:0] qr, input [2:0] sl, input [7:0] rows, input [8:0] keys);
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
        begin
            for (r = 0; r < 32'(rows); r = r + 1) begin
                idx = 32'(s) * MAXROWS + r;
                for (c = 0; c < D; c = c + 1)
                    obuf[r * D + c] = (st_l[idx][30:0] == 31'd0) ? 16'd0
                                      : f32_to_bf16(f32_div(st_o[idx * D + c], st_l[idx]));
            end
        end
    endtask

    /* verilator lint_on BLKSEQ */
