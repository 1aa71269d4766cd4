"""What can be set and what it implies, without Panel or Bokeh: the controls' spec, the
state, links, presets, the recompute graph of the model's parts, training runs and CSV files.

The floor above :mod:`sdpa_core`: it imports the core and nothing else of the app."""
