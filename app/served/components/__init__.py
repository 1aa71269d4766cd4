"""The served page's custom components (``pn.custom.JSComponent``): the session's side of
the page's drawn figures, controls and lesson, and the frame and notices around them."""
