"""``sdpa-sim``: the command, the request guard in front of Bokeh, the ``--num-procs`` front
and its workers, origins, and the process-wide Panel and Bokeh settings.

The top floor: it may import every other part of the app, and nothing imports it but
``app/main.py`` (what ``panel serve`` runs)."""
