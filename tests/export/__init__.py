"""Tests of the single-file export: its JavaScript against sdpa_core, the file, the CLI."""
