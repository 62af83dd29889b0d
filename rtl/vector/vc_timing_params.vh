// The vector core's timing facts: upstream's cycles (KohakuTPU 7703ee8 `vec_cu`), one list.
//
// Included in the parameter lists of vector_core, vc_exec and vc_timing (vc_timing_pass.vh hands them
// down), so each value is written here once; models/machine/unit_timing.py names the same facts for a machine's
// description (tests/unit/machine/test_unit_timing.py checks the two agree). The rules are those of
// clients/vec_timing/latency.md (rule numbers below); docs/vector_core.md "Timing" names each one's
// upstream mechanism. `ours` marks the values calibrated for our own link and sequencer.
    parameter integer FIRST_T     = 2,   // rule 1: a RUN's first word executes at count 2
    parameter integer FETCH       = 4,   // rule 2: fetch and decode of the next word
    parameter integer RAW_LAT     = 18,  // rule 4: last beat to a dependent beat, FLAT
    parameter integer STAGE_LAT   = 15,  // rule 4: each further chain stage
    parameter integer PEND_BITS   = 5,   // rule 4: the scoreboard's pending-beat counter (wraps: H4)
    parameter integer PIPE_DRAIN  = 79,  // rule 5: last beat to an empty lane pipeline
    parameter integer PORT_SETUP  = 5,   // rule 5: a whole-chunk word after the pipeline is empty
    parameter integer LD16_CHUNK  = 4,   // rule 5: VLD FP16, per chunk
    parameter integer LD32_CHUNK  = 8,   // rule 5: VLD FP32, per chunk
    parameter integer ST16_CHUNK  = 3,   // rule 5: VST FP16, per chunk
    parameter integer ST32_CHUNK  = 4,   // rule 5: VST FP32, per chunk
    parameter integer XFORM_CHUNK = 3,   // rule 5: VCVT, VSHUF, VBCAST S->V, per chunk
    parameter integer V2S_T       = 8,   // rule 5: VBCAST V->S
    parameter integer RED_TAIL    = 66,  // rule 7: VRED, empty pipeline to the next word
    parameter integer SETI_T      = 6,   // rule 8: VSETI (two words)
    parameter integer BAR_TAIL    = 4,   // rule 8: VBAR after its fills landed
    parameter integer HALT_TAIL   = 2,   // rule 1: VHALT, to the count's last cycle
    parameter integer HALT_LEAD   = 1,   // ours: VHALT retires this many counts before its last (calibrated)
    parameter integer FILL_SETUP  = 8,   // rule 9: VFILL, to the next word beside its requests
    parameter integer DRAIN_SETUP = 10,  // rule 10: VDRAIN, to the next word beside its words
    parameter integer XFER_GAP    = 3,   // rules 9, 10: one read request / one drained word every 3
    parameter integer NODE_EXTRA  = 1,   // rule 10: a node-form VDRAIN of 2+ words: its descriptor
    parameter integer FILL_LAND   = 5,   // rule 9: last response taken to fills_done (calibrated)
    parameter integer XFER_LEAD   = 0    // ours: cycles from a VFILL / VDRAIN's walk start to its first flit (vc_xfer)
