"""Whole machines as models: which unit sits where (layouts), the event model of a machine, kernel planning and golden outputs, and every unit's timing facts (unit_timing)."""
