"""The sdpa-sim Panel app: a live view of scaled dot-product attention over sdpa_core."""

import os

# Before NumPy loads (``sdpa-sim`` imports this package first): BLAS threads cost a served
# app's small products more than they give (weights·V at n = 256 took 9-33 ms with them,
# 0.04 ms without, on a 2-core machine), as the front's workers already have it
# (app.server.front.BLAS_THREADS). A user's own setting wins; under plain ``panel serve``, NumPy
# has loaded before the app, so set OPENBLAS_NUM_THREADS=1 there yourself.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
