"""Damaged bundles: edits that break a copy of a real bundle one way each, and the run that judges the outcome."""
