"""Unit tests of sdpa_core (a package, so their module names never clash with other suites)."""
