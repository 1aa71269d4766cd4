"""Hostile query strings for the app's URL parameters, generated from the parameters' own rules
(``app.simulation.query.PARAMETERS``: names, kinds, bounds, choices) and Python's Unicode tables.

Shared by the model tests (every case: parse → state → notice → the URL the app writes), the
offline page's parser tests (every case under Node, against Python), the served tests (a
sample through real sessions) and the browser tests (a smaller sample in Chromium). The
tests import it as a top-level module (pytest puts ``tests/`` on the path).

Each case's ``query`` is what follows the ``?`` of a link as a browser sends it: values are
percent-encoded where a browser would encode them (space, quotes, ``<>#%&+``, control and
non-ASCII characters), so the same text reaches Tornado, ``location.search`` and the tests;
the ``percent`` category then tries what the encoding itself can hide.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

from app.simulation.query import PARAMETERS, QueryParameter

SAFE = "/?:@!$()*,;=[]{}|^`~"
"""Characters a browser leaves as they are in a query (and a link author may too)."""

MARKUP = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(1)>",
    "javascript:alert(1)",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "<iframe src=//evil.example>",
    "{{7*7}}${alert(1)}",
    "[click](javascript:alert(1))",
    "<a href=https://evil.example>link</a>",
    "</script><script src=//evil.example/x.js></script>",
)
"""Script and markup payloads, as a value and as a name."""

SPECIAL_FLOATS = (
    "nan", "NaN", "-nan", "+nan", "inf", "-inf", "+inf", "Infinity", "-Infinity", "iNfInItY",
    "1e999", "-1e999", "1e-999", "-0", "0x10", "nan(1)", "infinite", "1e308", "-1e308",
    "4.9e-324", "1e", "e5", ".", "1.5.5", "1,5", "1__0", "_1", "1_",
)  # fmt: skip
"""Float syntax at and past its edges."""

NON_DECIMAL_NUMERALS = ("²", "½", "Ⅻ", "①", "三十二", "፴", "𝟙𝟚")
"""Numeric characters that are not decimal digits (Unicode's No and Nl), and decimal ones
from the mathematical alphanumerics."""

EXTRA_CHARACTERS = (0x7F, 0x85, 0xA0, 0x180E, 0x200B, 0x200E, 0x202E, 0x2028, 0x3000, 0xFEFF)
"""Beyond C0: delete, next line, no-break space, the Mongolian vowel separator (once a
space), zero-width space, left-to-right mark, right-to-left override, line separator,
ideographic space, byte-order mark."""

BIG = 100_000
"""Length of the long values (100 kB)."""


@dataclass(frozen=True)
class HostileQuery:
    """One link's query: its category and the text after ``?``."""

    category: str
    query: str


def encode(value: str) -> str:
    """``value`` percent-encoded as a browser sends a typed query value."""
    return quote(value, safe=SAFE)


def pair(name: str, value: str) -> str:
    """``name=value``, both encoded as a browser sends them."""
    return f"{encode(name)}={encode(value)}"


def digit_zeros() -> list[int]:
    """Every Unicode decimal digit zero of this Python (each starts a run 0–9)."""
    return [c for c in range(sys.maxunicode + 1) if unicodedata.decimal(chr(c), None) == 0]


def in_script(text: str, zero: int) -> str:
    """``text`` with its ASCII digits written in the script whose zero is ``zero``."""
    return "".join(chr(zero + int(c)) if c.isascii() and c.isdigit() else c for c in text)


def _numbers(parameter: QueryParameter) -> list[str]:
    """Numbers at, inside and beyond the bounds, in every syntax float() takes."""
    assert parameter.bounds is not None
    low, high = parameter.bounds
    anchors = {low, high, 0, 1, -1, (low + high) / 2, high * 2, -high, low / 2}
    texts: list[str] = []
    for anchor in sorted(anchors):
        for x in (anchor, anchor - 1, anchor + 1, anchor - 0.5, anchor + 0.5, anchor + 1e-9):
            whole = float(x).is_integer()
            plain = str(int(x)) if whole else repr(float(x))
            texts += [plain, f"{float(x):e}", f"+{plain}", f" {plain} "]
            if whole:
                texts += [f"{plain}.0", f"000{plain}", "_".join(plain) if x >= 0 else plain]
    texts += ["9" * 60, "9" * 64, "9" * 65, "1" + "0" * 63, "0." + "0" * 62 + "1"]
    return texts


def _words(parameter: QueryParameter, true: tuple[str, ...], false: tuple[str, ...]) -> list[str]:
    """The parameter's words in other cases, with spaces around, misspelt and lookalike."""
    words = list(parameter.choices) if parameter.kind == "choice" else [*true, *false]
    texts: list[str] = []
    for word in words:
        texts += [word, word.upper(), word.title(), f" {word} ", word[:-1], word + word[-1]]
        texts += [word.replace("k", "\u212a"), word.replace("o", "\u043e")]  # Kelvin, Cyrillic
        texts.append(
            "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c for c in word)
        )
    return [*texts, "", "2", "-1", "none", "null", "undefined", "[]"]


def _per_parameter() -> Iterator[HostileQuery]:
    from app.simulation.query import FALSE_WORDS, TRUE_WORDS

    for parameter in PARAMETERS:
        name = parameter.name
        if parameter.kind in ("integer", "number"):
            values = _numbers(parameter)
            category = "bounds"
        else:
            values = _words(parameter, TRUE_WORDS, FALSE_WORDS)
            category = "words"
        for value in values:
            yield HostileQuery(category, pair(name, value))
        for value in SPECIAL_FLOATS:
            yield HostileQuery("special-floats", pair(name, value))


def _unicode_digits() -> Iterator[HostileQuery]:
    zeros = digit_zeros()
    # d_k = 32 in every script Python knows, the other numbers in a few.
    for zero in zeros:
        yield HostileQuery("unicode-digits", pair("d_k", in_script("32", zero)))
    few = [0x660, 0x966, 0xFF10, 0x1D7CE]  # Arabic-Indic, Devanagari, full-width, maths bold
    numeric = [p for p in PARAMETERS if p.kind in ("integer", "number")]
    for parameter in numeric:
        for zero in few:
            for text in ("7", "0.25", "2e1", "1_000", "-3", "1.5"):
                yield HostileQuery("unicode-digits", pair(parameter.name, in_script(text, zero)))
    mixed = ["3" + chr(0x662), chr(0xFF13) + chr(0x0968), "١.٥", "٣٢\u00a0", "\u3000３２"]
    for text in [*mixed, *NON_DECIMAL_NUMERALS]:
        yield HostileQuery("unicode-digits", pair("d_k", text))
        yield HostileQuery("unicode-digits", pair("temperature", text))


def _long_values() -> Iterator[HostileQuery]:
    for parameter in PARAMETERS:
        yield HostileQuery("100kB", pair(parameter.name, "9" * BIG))
    yield HostileQuery("100kB", pair("view", "x" * BIG))
    yield HostileQuery("100kB", "d_k=" + "%3C" * (BIG // 3))
    yield HostileQuery("100kB", pair("course", "y" * BIG) + "&d_k=8")
    yield HostileQuery("100kB", pair("d_k", " " * BIG + "8"))


def _names() -> Iterator[HostileQuery]:
    for parameter in PARAMETERS:
        name = parameter.name
        yield HostileQuery("repeated", f"{name}=1&{name}=abc")
        yield HostileQuery("repeated", f"{name}=abc&{name}=2")
        yield HostileQuery("repeated", f"{name}&{name}=")
        for array in ("[]", "[0]", ".x", "%5B%5D", "%00", "%20"):
            yield HostileQuery("array-names", f"{name}{array}=8")
        yield HostileQuery("array-names", f"{name.upper()}=8")
        yield HostileQuery("array-names", "".join(f"%{ord(c):02X}" for c in name) + "=8")
    yield HostileQuery("repeated", "&".join(f"d_k={i}" for i in range(1, 1001)))


def _percent_tricks() -> Iterator[HostileQuery]:
    tricks = [
        "%2532", "%33%32", "3%2B2", "3+2", "+32", "%2B32", "%2D5", "%", "%%", "%zz", "%3",
        "%C0%B3%C0%B2", "%ff", "%E2%80%AE32", "%EF%BC%93%EF%BC%92", "32%00", "%0A32",
        "%F0%9F%98%80", "%ED%A0%80", "3%2E5", "1%65%33",
    ]  # fmt: skip
    for trick in tricks:
        yield HostileQuery("percent", f"d_k={trick}")
        yield HostileQuery("percent", f"temperature={trick}")
    yield HostileQuery("percent", "view=%77eights&scaled=%74rue&causal=%2B")
    yield HostileQuery("percent", "preset=%63ollapse&d_k=%31%30%32%34")


def _control_characters() -> Iterator[HostileQuery]:
    for code in [*range(0x20), *EXTRA_CHARACTERS]:
        c = chr(code)
        yield HostileQuery("control", pair("d_k", f"{c}32"))
        yield HostileQuery("control", pair("d_k", f"3{c}2"))
        yield HostileQuery("control", pair("view", f"raw{c}"))
        yield HostileQuery("control", pair("scaled", f"{c}false{c}"))


def _markup() -> Iterator[HostileQuery]:
    for payload in MARKUP:
        for name in ("d_k", "temperature", "view", "scaled", "preset", "course"):
            yield HostileQuery("markup", pair(name, payload))
        yield HostileQuery("markup", pair(payload, "1") + "&d_k=8")


def _question_marks() -> Iterator[HostileQuery]:
    cases = [
        "?d_k=5",
        "d_k=8?",
        "d_k=8&ref=https://course.example/page?id=3",
        "ref=https://course.example/page?id=3&d_k=8",
        "d_k=%3F8",
        "view=raw?x=1",
        "d_k=8%23frag",
        "d_k=8&back=%2Fmain%3Fd_k%3D1%23top",
        "??",
        "?",
        "&&d_k=8&&",
        "=8",
        "d_k==8",
        "d_k=8=9",
    ]
    for query in cases:
        yield HostileQuery("question-hash", query)


def _many() -> Iterator[HostileQuery]:
    unknown = "&".join(f"p{i}={i}" for i in range(1000))
    yield HostileQuery("1000-parameters", f"{unknown}&d_k=8")
    yield HostileQuery("1000-parameters", f"d_k=abc&{unknown}")
    yield HostileQuery("1000-parameters", "&".join(f"x=<b>{i}</b>" for i in range(1000)))


def _course_pages() -> Iterator[HostileQuery]:
    """Parameters a course page adds, which must come back exactly as it sent them."""
    yield HostileQuery(
        "unknown",
        "id=007&flag=true&foo=[1,2,3]&d_k=8&empty=&bare&obj={%22a%22:1}&plus=a+b"
        "&enc=a%20b&utf=%C3%A9&ref=https://course.example/page?id=3&id=008",
    )
    yield HostileQuery("unknown", "embed=true&d_k=8&lang=fr&utm_source=lms&n=16")
    yield HostileQuery("unknown", "x=1e999&y=nan&z=-0&w=00012&v=1_000")
    yield HostileQuery("reserved", "bokeh-session-id=KNOWN&d_k=8&id=1")
    yield HostileQuery("reserved", "d_k=8&Bokeh-Token=abc&bokeh%2Dabsolute%2Durl=x&keep=1")


INVISIBLE = (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0xFE0F, 0x034F, 0xE0001)
"""Characters that show nothing: zero-width space, non-joiner and joiner, word joiner,
byte-order mark, soft hyphen, a variation selector, the combining grapheme joiner, a tag."""
COMBINING = (0x0301, 0x0308, 0x0327, 0x20DD)
"""Combining marks: acute, diaeresis, cedilla, enclosing circle."""


def _invisible() -> Iterator[HostileQuery]:
    """Valid-looking words and numbers with a character that shows nothing, or a combining
    mark, inside, before or after them: refused, and the notice must show it."""
    words = {"scaled": "true", "causal": "false", "view": "raw", "preset": "collapse"}
    numbers = {"d_k": "32", "temperature": "0.5", "rho": "0.5"}
    for code in (*INVISIBLE, *COMBINING):
        c = chr(code)
        for name, word in {**words, **numbers}.items():
            for value in (f"{word}{c}", f"{word[0]}{c}{word[1:]}", f"{c}{word}"):
                yield HostileQuery("invisible", pair(name, value))


def _many_digits() -> Iterator[HostileQuery]:
    """Numbers a hair past a bound, with the digits that make the difference, and numbers
    with more digits than a float holds: a notice must show enough digits to tell them."""
    for parameter in PARAMETERS:
        if parameter.bounds is None:
            continue
        low, high = parameter.bounds
        for bound, step in ((high, 1), (low, -1)):
            for ulps in (1e-11, 1e-13, 1e-15):
                yield HostileQuery("many-digits", pair(parameter.name, repr(bound + step * ulps)))
            yield HostileQuery("many-digits", pair(parameter.name, repr(bound) + "0" * 40 + "1"))
        yield HostileQuery("many-digits", pair(parameter.name, "1" + "0" * 25))
        yield HostileQuery("many-digits", pair(parameter.name, "0." + "3" * 60))


def _row_beyond_n() -> Iterator[HostileQuery]:
    """A row at, past and far past the last of n, with n from the link, a preset or the
    default, masked or not."""
    for n in ("", "2", "4", "32", "1024"):
        last = int(n or 32) - 1
        for row in (last, last + 1, 1000, 1023, 5000):
            base = f"n={n}&row={row}" if n else f"row={row}"
            yield HostileQuery("row-beyond-n", base)
            yield HostileQuery("row-beyond-n", f"{base}&causal=true")
    for preset in ("causal", "lesson", "collapse"):
        for row in (7, 31, 32, 1023):
            yield HostileQuery("row-beyond-n", f"preset={preset}&row={row}")
        yield HostileQuery("row-beyond-n", f"preset={preset}&n=4&row=3")


FOLDS_TO_BOKEH = (
    "bo\u212aeh",  # Kelvin sign: lower() and NFKC give k
    "\uff42\uff4f\uff4b\uff45\uff48",  # full-width: NFKC gives bokeh
    "BO\u212aEH",
    "bok\u0435h",  # Cyrillic e: a lookalike that folds to nothing
    "bokeh\u2010",  # a Unicode hyphen: NFKC keeps it
)
"""Spellings that Unicode folding (``str.lower``, ``toLowerCase``, NFKC) turns into, or that
look like, Bokeh's ``bokeh``: to Tornado and Bokeh they are other names, kept as sent."""


def _folded_names() -> Iterator[HostileQuery]:
    """Names that fold to Bokeh's own, or to the app's, only under Unicode's rules."""
    for spelled in FOLDS_TO_BOKEH:
        for rest in ("-session-id", "-token", "-absolute-url", "-x"):
            name = spelled + rest if not spelled.endswith("\u2010") else spelled + rest[1:]
            yield HostileQuery("folded-names", f"{encode(name)}=3&d_k=8&keep=1")
    for name in ("d\uff3fk", "\u1d48_k", "vi\u0435w", "\uff4e", "se\u0435d"):
        yield HostileQuery("folded-names", f"{encode(name)}=8&keep=1")


def _long_unknowns() -> Iterator[HostileQuery]:
    """Unknown parameters too long to keep in an address, among the app's own."""
    for length in (2_000, 25_000):
        yield HostileQuery("long-unknown", f"x={'a' * length}&d_k=8")
        yield HostileQuery("long-unknown", f"{'y' * length}=1&d_k=8&keep=1")


GENERATORS = (
    _per_parameter,
    _unicode_digits,
    _long_values,
    _names,
    _percent_tricks,
    _control_characters,
    _markup,
    _question_marks,
    _many,
    _course_pages,
    _invisible,
    _many_digits,
    _row_beyond_n,
    _folded_names,
    _long_unknowns,
)


BROWSER_LINKS = {
    "double-question-mark": "?d_k=5",
    "question-mark-in-a-value": "d_k=8&ref=https://course.example/page?id=3",
    "trailing-question-mark": "d_k=8?",
    "unicode-digits": "d_k=%D9%A3%D9%A2&n=%EF%BC%93%EF%BC%92&temperature=%E0%A5%A8",
    "markup": (
        "view=%3Cscript%3Ealert(1)%3C/script%3E&d_k=%22%3E%3Cimg%20src=x%20onerror=alert(1)%3E"
        "&course=%3Csvg%20onload=alert(1)%3E&%3Cscript%3Ealert(1)%3C/script%3E=1"
    ),
    "special-floats": "temperature=nan&d_k=1e999&n=-inf&seed=-0",
    "course-parameters": "id=007&flag=true&foo=[1,2,3]&d_k=8&empty=&bare&plus=a+b&id=008",
    "control-characters": "d_k=%0A32%00&view=raw%E2%80%AE&scaled=%09false",
    "1000-parameters": "&".join([*(f"p{i}={i}" for i in range(999)), "d_k=8"]),
    "preset": "preset=collapse&course=x",
    "folded-name": "bo%E2%84%AAeh-session-id=3&d_k=8&keep=1",
    "invisible-and-digits": "scaled=true%E2%80%8B&view=ra%CC%81w&temperature=20.000000001",
}
"""One link per kind of trouble for Chromium, served and offline (the generated cases run
in full at the model level): the links issues 11 and 25 name, and one of each category."""

ROW_LINKS = {
    "row-past-n": ("n=4&row=1000", 3),
    "row-past-a-masked-n": ("n=2&row=1023&causal=true", 1),
    "row-past-a-presets-n": ("preset=causal&row=1023", 31),
}
"""Links whose row is past their n, and the row both pages then show (served and offline
the same: their n is within the offline page's 128)."""


def hostile_queries() -> list[HostileQuery]:
    """Every generated case, in a fixed order, without repeats."""
    seen: set[str] = set()
    cases = []
    for generate in GENERATORS:
        for case in generate():
            if case.query not in seen:
                seen.add(case.query)
                cases.append(case)
    return cases


def sample(cases: list[HostileQuery], per_category: int) -> list[HostileQuery]:
    """The first ``per_category`` cases of each category (a deterministic sample)."""
    counts: dict[str, int] = {}
    chosen = []
    for case in cases:
        if counts.get(case.category, 0) < per_category:
            counts[case.category] = counts.get(case.category, 0) + 1
            chosen.append(case)
    return chosen
