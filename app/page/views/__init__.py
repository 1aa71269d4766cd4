"""The page's figures and lesson views as Bokeh models and markup, built from the model's
numbers: what :mod:`app.page.figures` and :mod:`app.page.lesson` assemble once per process."""
