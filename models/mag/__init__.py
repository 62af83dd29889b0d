"""The memory agent (rtl/mag/): its event model and DRAM (model), what crosses its link (proto) and the judge of its bench (check)."""
