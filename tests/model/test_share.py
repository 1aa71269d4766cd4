"""Share links and embed snippets, built without a server."""

from __future__ import annotations

import html
from urllib.parse import parse_qs, urlsplit

from app.served.share import EMBED_HEIGHT, EMBED_WIDTH, embed_snippet, page_address, share_link
from app.simulation.state import SimulationState


def test_share_link_carries_the_scene() -> None:
    state = SimulationState(d_k=256, temperature=2.0, causal=True)
    link = share_link("https://sim.example.edu/main", state.query())
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "sim.example.edu", "/main")
    query = parse_qs(parts.query)
    assert query["d_k"] == ["256"] and query["temperature"] == ["2"]
    assert query["causal"] == ["true"]
    assert "preset" not in query, "an empty preset is left out of the link"


def test_embed_snippet_is_an_escaped_iframe_in_embed_mode() -> None:
    snippet = embed_snippet("http://host:5006/main", {"d_k": "4", "view": "raw"})
    assert snippet.startswith('<iframe src="') and snippet.endswith("></iframe>")
    assert f'width="{EMBED_WIDTH}" height="{EMBED_HEIGHT}"' in snippet and "title=" in snippet
    source = html.unescape(snippet.split('"')[1])
    assert parse_qs(urlsplit(source).query) == {"d_k": ["4"], "view": ["raw"], "embed": ["true"]}
    assert "&d_k" not in snippet.split('"')[1], "ampersands are escaped inside the attribute"


def test_page_address_has_a_default_without_a_browser() -> None:
    assert page_address(None).startswith("http://")
