"""What the shared compute-unit endpoint base (rtl/cu/cu_base.v) answers: CU_CTRL replies, completions, CU_DATA bursts."""
