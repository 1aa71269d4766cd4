"""A student's Panel session: the state, the model and the few components that carry its
numbers to the page (:mod:`app.served.components`), its own websocket channel, and when
its updates run (:mod:`app.served.ticks`).

Built on :mod:`app.page`; imports nothing of :mod:`app.server` or :mod:`app.export`."""
