"""The sdpa-sim Panel app: a live view of scaled dot-product attention over sdpa_core."""
