"""Properties of URI template matching (``beammcp_django.protocol.uritemplate``), held by
hypothesis.

A URI expanded from a template (RFC 6570: ``{var}`` percent-encodes all but the unreserved
characters, ``{+var}`` keeps the reserved ones too) matches it again with the values that
went in, unless the module's rules refuse one: an empty value; a control character, a
backslash, a leading drive letter or a percent escape left after decoding; a ``{var}``
holding ``/`` or equal to ``.`` or ``..``; a ``{+var}`` starting with ``/`` or with a ``.``
or ``..`` segment. Whatever the URI, matching never crashes and never hands a reader a
value that, joined to a base directory (POSIX or Windows rules) or decoded once more, leaves
it; whatever the template text, building it either works or raises ``UnsupportedTemplate``.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
import string
from dataclasses import dataclass
from urllib.parse import quote, unquote_to_bytes

from hypothesis import example, given, settings
from hypothesis import strategies as st

from beammcp_django.protocol.uritemplate import UnsupportedTemplate, UriTemplate
from tests.support import examples

PROPERTY = settings(max_examples=examples(150), deadline=None, database=None)

RESERVED = ":/?#[]@!$&'()*+,;="
TRAVERSAL = (".", "..")
# "|" never appears in a template's literals below, nor in any expansion: it ends {+var}.
LITERAL = st.text(string.ascii_letters + string.digits + "-._~%^\\" + RESERVED, max_size=6)
NAMES = st.from_regex(r"[A-Za-z0-9_]{1,6}", fullmatch=True)


@dataclass(frozen=True)
class Shape:
    """A generated template: a literal prefix, then variables each followed by a separator
    that its expansion cannot contain, so a URI splits into values one way only."""

    prefix: str
    variables: tuple[tuple[str, bool, str], ...]  # (name, reserved?, separator after it)

    @property
    def template(self) -> str:
        return self.prefix + "".join(
            ("{+" if reserved else "{") + name + "}" + separator
            for name, reserved, separator in self.variables
        )

    def expand(self, values: dict[str, str]) -> str:
        return self.prefix + "".join(
            quote(values[name], safe=RESERVED if reserved else "") + separator
            for name, reserved, separator in self.variables
        )


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    names = draw(st.lists(NAMES, min_size=0, max_size=4, unique=True))
    variables = []
    for index, name in enumerate(names):
        reserved = draw(st.booleans())
        # {var} expands to unreserved characters and '%' only: '/', '?' or '#' ends it.
        # {+var} may expand to any URI character: '|' ends it.
        opener = st.just("|") if reserved else st.sampled_from("/?#")
        separator = draw(opener) + draw(LITERAL.map(lambda text: text.replace("|", "")))
        if index == len(names) - 1:
            separator = draw(st.just("") | st.just(separator))
        variables.append((name, reserved, separator))
    return Shape(draw(LITERAL), tuple(variables))


# Values any host might see: every character (no lone surrogates, which no URI can carry),
# plus the ones that make traversals and separators.
VALUES = st.lists(
    st.characters(exclude_categories=("Cs",)) | st.sampled_from(["/", ".", "..", "%", "%2e"]),
    max_size=6,
).map("".join)


def no_traversal(value: str) -> bool:
    return not any(segment in TRAVERSAL for segment in value.split("/"))


UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\\]|%[0-9A-Fa-f]{2}")


def admitted(value: str, reserved: bool) -> bool:
    """The module's rule for a decoded value (see its docstring)."""
    if not value or UNSAFE.search(value) or re.match(r"[A-Za-z]:", value):
        return False
    if reserved:
        return not value.startswith("/") and no_traversal(value)
    return "/" not in value and value not in TRAVERSAL


@PROPERTY
@given(shape=shapes(), data=st.data())
def test_an_expanded_uri_matches_with_its_values_unless_the_rules_refuse_one(shape, data):
    values = {name: data.draw(VALUES, label=name) for name, _, _ in shape.variables}
    template = UriTemplate(shape.template)
    assert template.names == tuple(values)
    matched = template.match(shape.expand(values))
    if all(admitted(values[name], reserved) for name, reserved, _ in shape.variables):
        assert matched == values
    else:
        assert matched is None


# Raw text a client may send as a URI, heavy in separators, dots and percent escapes, valid
# or not (an overlong '.' in UTF-8, a lone continuation byte, a bare '%'), and any character,
# lone surrogates included (a JSON string may hold "\ud800").
HOSTILE = st.lists(
    st.sampled_from(
        ["/", ".", "..", "%2e", "%2E", "%2f", "%2F", "%c0%ae", "%ff", "%", "%4", "?", "#", "|"]
    )
    | st.characters(exclude_categories=()),
    max_size=8,
).map("".join)
SURROGATE = re.compile("([\ud800-\udfff])")


def strictly_decoded(raw: str) -> str | None:
    """``raw`` with its percent escapes decoded as UTF-8, every other character (a lone
    surrogate too) kept; None when the escapes are not UTF-8."""
    pieces = SURROGATE.split(raw)  # odd positions: the surrogates
    try:
        return "".join(
            piece if index % 2 else unquote_to_bytes(piece).decode("utf-8")
            for index, piece in enumerate(pieces)
        )
    except UnicodeDecodeError:
        return None


@PROPERTY
@given(shape=shapes(), raw=st.lists(HOSTILE, min_size=4, max_size=4))
@example(
    shape=Shape("file:///docs/", (("path", True, ""),)),
    raw=["a/%2e%2E/..%2f%c0%ae/%ff%/%4?#|", "", "", ""],
)
def test_a_hostile_uri_never_crashes_matching_nor_yields_a_traversal(shape, raw):
    template = UriTemplate(shape.template)
    uri = shape.prefix + "".join(
        piece + separator for piece, (_, _, separator) in zip(raw, shape.variables, strict=False)
    )
    matched = template.match(uri)
    if matched is None:
        return
    assert tuple(matched) == template.names
    for name, reserved, _ in shape.variables:
        assert admitted(matched[name], reserved), (name, matched[name])
    # What matched, expanded again, matches to the same values (a URI carries no surrogate
    # once percent-encoded).
    if not SURROGATE.search("".join(matched.values())):
        assert template.match(shape.expand(matched)) == matched


@PROPERTY
@given(raw=HOSTILE, reserved=st.booleans())
@example(raw="%ff", reserved=False)
@example(raw="a#b", reserved=False)
@example(raw="a\nb", reserved=True)  # '.' stopped at a newline: {+var} refused what {var} took
def test_a_variable_matches_as_the_strict_utf8_percent_decoding_of_its_text(raw, reserved):
    """{var} takes raw text without '/', '?' or '#'; {+var} takes any. Percent escapes
    must decode to UTF-8, else the URI does not match."""
    template = UriTemplate("x://{+v}" if reserved else "x://{v}")
    decoded = strictly_decoded(raw)
    fits = bool(raw) and (reserved or not set(raw) & set("/?#"))
    accepted = fits and decoded is not None and admitted(decoded, reserved)
    assert template.match("x://" + raw) == ({"v": decoded} if accepted else None)


@PROPERTY
@given(text=st.text("{}+x1_-:/?#*,.%;&= \n\u00e9\ud800", max_size=16), uri=HOSTILE)
@example(text="x://{1}", uri="x://42")  # a digit-first name (RFC 6570 allows it) crashed
@example(text="x://\ud800/{a}", uri="x://\ud800/b")  # crashed with UnicodeEncodeError
@example(text="x://{0a}/{+9}", uri="x://a/b/c")
def test_any_template_text_is_built_or_refused_as_unsupported_and_matches_safely(text, uri):
    try:
        template = UriTemplate(text)
    except UnsupportedTemplate:
        return
    assert template.template == text
    matched = template.match(uri)
    if matched is not None:
        assert tuple(matched) == template.names
        assert all(value and no_traversal(value) for value in matched.values())
        assert all(stays_inside(value) for value in matched.values())


@PROPERTY
@given(name=NAMES, value=VALUES)
@example(name="1", value="42")
def test_every_name_rfc_6570_and_the_module_allow_matches_its_value(name, value):
    for reserved in (False, True):
        shape = Shape("x://", ((name, reserved, ""),))
        expected = {name: value} if admitted(value, reserved) else None
        assert UriTemplate(shape.template).match(shape.expand({name: value})) == expected


BASE = "/srv/files"


def stays_inside(value: str) -> bool:
    """``value`` joined to a base directory, by POSIX and by Windows rules, and decoded once
    more then joined, names the base or something below it."""
    inside = []
    for candidate in (value, unquote_to_bytes(value).decode("utf-8", "replace")):
        posix = posixpath.normpath(posixpath.join(BASE, candidate))
        windows = ntpath.normpath(ntpath.join("C:\\srv\\files", candidate))
        inside.append(posix == BASE or posix.startswith(BASE + "/"))
        inside.append(windows.lower().startswith("c:\\srv\\files"))
    return all(inside)


# The pieces path traversals are made of: dots and separators raw, escaped once or twice,
# overlong, backslashes, NULs, drive letters.
TRAVERSAL_PIECES = st.sampled_from(
    [
        "..", ".", "/", "//", "\\", "%2e", "%2E", "%2f", "%2F", "%252e", "%252f", "%255c",
        "%5c", "%5C", "%00", "%0a", "%c0%ae", "%e0%80%ae", "%25", "C:", "etc", "passwd", "a",
    ]
)  # fmt: skip


@PROPERTY
@given(pieces=st.lists(TRAVERSAL_PIECES, min_size=1, max_size=10), reserved=st.booleans())
@example(pieces=["/", "etc", "/", "passwd"], reserved=True)
@example(pieces=["%2F", "etc", "/", "passwd"], reserved=True)
@example(pieces=["%252e", "%252e", "/", "x"], reserved=True)
@example(pieces=["..", "%5c", "..", "%5c", "x"], reserved=False)
@example(pieces=["a", "%00", "b"], reserved=False)
@example(pieces=["C:", ".."], reserved=True)
@example(pieces=["C:", ".", "."], reserved=False)
def test_a_matched_value_joined_to_a_base_directory_never_leaves_it(pieces, reserved):
    template = UriTemplate("file:///srv/files/{+path}" if reserved else "file:///srv/files/{path}")
    matched = template.match("file:///srv/files/" + "".join(pieces))
    if matched is not None:
        assert stays_inside(matched["path"]), matched
        assert UNSAFE.search(matched["path"]) is None
