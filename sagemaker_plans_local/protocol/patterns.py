"""The model's ``pattern`` constraints (Java regular expressions), matched in bounded time.

A pattern is translated to Java's meaning (see :func:`translate`) and matched
against the whole value by one of two engines, chosen per pattern once:

* RE2 (``google-re2``, linear time in the value's length), for every pattern it
  can express.  Lookarounds at the very start, ``(?=A)`` and ``(?!A)``, become
  separate RE2 prefix matches of ``A`` joined to the rest by and/and-not.
* ``regex`` (backtracking) for the patterns left: those with a lookaround
  further in (or a repetition count above RE2's 1000).  Such a pattern must
  have no ambiguous repeated group (one holding a quantifier, or alternatives
  that may start with the same character), so each repetition is decided by
  the next character and backtracking stays polynomial in the value's length
  (which the shape bounds); a pattern with both is refused when first
  compiled (``ValueError``).

Neither engine has a time budget: the answer depends on the value alone.  A
value holding a lone UTF-16 surrogate (not text in UTF-8) never matches.
"""

from __future__ import annotations

import array
import dataclasses
import functools
import itertools
import sys
from typing import Callable, Iterator

import re2
import regex

Matcher = Callable[[str], bool]

_MAX_CODE_POINT = 0x10FFFF
_RE2_MAX_REPEAT = 1000
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
_SPACE = ((0x09, 0x0D), (0x20, 0x20))
_DIGIT = ((0x30, 0x39),)
_UPPER = ((0x41, 0x5A),)
_LOWER = ((0x61, 0x7A),)
_ALPHA = _UPPER + _LOWER
_ALNUM = _DIGIT + _ALPHA
_PUNCT = ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E))
#: Java's US-ASCII predefined and POSIX classes, as code-point ranges.
_JAVA_CLASSES = {
    "w": _DIGIT + _UPPER + ((0x5F, 0x5F),) + _LOWER,
    "d": _DIGIT,
    "s": _SPACE,
    "Lower": _LOWER,
    "Upper": _UPPER,
    "ASCII": ((0x00, 0x7F),),
    "Alpha": _ALPHA,
    "Digit": _DIGIT,
    "Alnum": _ALNUM,
    "Punct": _PUNCT,
    "Graph": _ALNUM + _PUNCT,
    "Print": ((0x20, 0x20),) + _ALNUM + _PUNCT,
    "Blank": ((0x09, 0x09), (0x20, 0x20)),
    "Cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    "XDigit": _DIGIT + ((0x41, 0x46), (0x61, 0x66)),
    "Space": _SPACE,
}
#: Java's line terminators: ``.`` excludes them, ``$`` may stand before a final one.
_LINE_END = ((0x0A, 0x0A), (0x0D, 0x0D), (0x85, 0x85), (0x2028, 0x2029))
_TOKEN = regex.compile(
    r"\\u(?P<high>[dD][89abAB][0-9a-fA-F]{2})\\u(?P<low>[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u(?P<code>[0-9a-fA-F]{4})"
    r"|\\(?P<shorthand>[wWdDsS])"
    r"|\\(?P<posix>[pP])\{(?P<name>\w+)\}"
    r"|\\(?P<escaped>[^0-9A-Za-z])"
    r"|\\."
    r"|\$(?P<quantifier>\{(?P<least>\d+)(?:,\d*)?\}|[?*+])[?+]?"
    r"|\{(?P<count>\d+)(?:,(?P<upto>\d*))?\}"
    r"|.",
    regex.DOTALL,
)
_LOOKAROUND = regex.compile(r"\(\?<?[=!]")
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.max_mem = 64 << 20  # room for counts above 1000 spelled as chains


class _Flavour:
    """How one engine spells code points and Java's ``$``."""

    def __init__(self, escape: Callable[[int], str], line_end: str, dollar: str) -> None:
        self.escape = escape
        self.line_end = line_end  # ``$`` inside a leading lookaround (a prefix match)
        self.dollar = dollar  # ``$`` elsewhere (the whole value is matched)


def _regex_escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _re2_escape(code: int) -> str:
    return f"\\x{{{code:x}}}"


def _ranges(ranges: tuple[tuple[int, int], ...], negated: bool, escape: Callable[[int], str]) -> str:
    """A character-class body for ``ranges`` (or their complement)."""
    spans = sorted(ranges)
    if negated:
        gaps, start = [], 0
        for low, high in spans:
            if low > start:
                gaps.append((start, low - 1))
            start = max(start, high + 1)
        if start <= _MAX_CODE_POINT:
            gaps.append((start, _MAX_CODE_POINT))
        spans = gaps
    return "".join(escape(low) if low == high else f"{escape(low)}-{escape(high)}" for low, high in spans)


def _line_end(escape: Callable[[int], str]) -> str:
    return f"(?:\\r\\n|[{_ranges(_LINE_END, False, escape)}])?"


REGEX = _Flavour(_regex_escape, _line_end(_regex_escape) + r"\Z", f"(?={_line_end(_regex_escape)}\\Z)")
RE2 = _Flavour(_re2_escape, _line_end(_re2_escape) + "$", "$")


def translate(pattern: str, flavour: _Flavour = REGEX, prefix: bool = False) -> str:
    """Rewrite a Java pattern so that the engine of ``flavour`` reads it with Java's meaning.

    UTF-16 surrogate pairs become code points; ``\\w \\d \\s`` (and negations) and
    the POSIX classes are US-ASCII; ``.`` excludes Java's line terminators; ``$``
    is the end, or (``prefix``: in a lookaround) the end but for a final line
    terminator; a quantifier after ``$`` is dropped; for RE2 a count above 1000
    becomes a chain of counts of at most 1000 each.
    """
    out: list[str] = []
    in_class, escape, groups, atom = False, flavour.escape, [], 0
    for token in _TOKEN.finditer(pattern):
        text = token.group()
        start = atom if in_class else len(out)  # where the atom this token ends begins
        if token["high"]:
            text = escape(
                0x10000 + ((int(token["high"], 16) - 0xD800) << 10) + int(token["low"], 16) - 0xDC00
            )
        elif token["code"]:
            text = escape(int(token["code"], 16))
        elif token["escaped"]:
            text = escape(ord(token["escaped"]))
        elif token["shorthand"] or (token["posix"] and token["name"] in _JAVA_CLASSES):
            letter = token["shorthand"] or token["posix"]
            body = _ranges(_JAVA_CLASSES[token["name"] or letter.lower()], letter.isupper(), escape)
            text = body if in_class else f"[{body}]"
        elif in_class:
            in_class = text != "]"
        elif token["quantifier"]:
            at_least = 1 if token["quantifier"] == "+" else int(token["least"] or 0)
            text = (flavour.line_end if prefix else flavour.dollar) if at_least else ""
        elif text == "$":
            text = flavour.line_end if prefix else flavour.dollar
        elif text == "[":
            in_class = True
        elif text == ".":
            text = f"[^{_ranges(_LINE_END, False, escape)}]"
        elif text == "(":
            groups.append(start)
        elif text == ")" and groups:
            start = groups.pop()
        elif token["count"] and flavour is RE2 and _big(token):
            repeated = "".join(out[atom:])
            del out[atom:]
            text, start = _chained(repeated, int(token["count"]), _most(token)), atom
        out.append(text)
        atom = start
    return "".join(out)


def _chained(atom: str, least: int, most: float) -> str:
    """``atom{least,most}`` as consecutive counts of at most RE2's 1000 each."""
    if most == float("inf"):
        return _chained(atom, least, least) + f"(?:{atom})*"
    pieces = []
    while most > 0:
        low, high = min(least, _RE2_MAX_REPEAT), min(most, _RE2_MAX_REPEAT)
        pieces.append(f"(?:{atom}){{{low},{high}}}")
        least, most = least - low, most - high
    return "".join(pieces)


def _skeleton(pattern: str) -> Iterator[tuple[str, regex.Match]]:
    """(kind, token) of the pattern's structure: ``open``, ``close``, ``repeat``, ``optional``,
    ``alternate`` (``|``), ``atom`` (a class counts once, at its ``[``)."""
    in_class, previous = False, ""
    for token in _TOKEN.finditer(pattern):
        text = token.group()
        if in_class:
            in_class = text != "]"
            continue
        if text == "[":
            in_class = True
        kind = {"(": "open", ")": "close", "|": "alternate", "*": "repeat", "+": "repeat"}.get(text, "atom")
        if token["count"]:
            kind = "repeat" if _most(token) > 1 else "optional"
        elif text == "?" and previous != "(":
            kind = "optional"
        yield kind, token
        previous = text


def _most(token: regex.Match) -> float:
    """The largest count a ``{n}``/``{n,}``/``{n,m}`` token allows."""
    if token["upto"] is None:
        return int(token["count"])
    return int(token["upto"]) if token["upto"] else float("inf")


@dataclasses.dataclass
class _Group:
    """An open group while :func:`_backtracks_badly` walks a pattern."""

    body_start: int
    ambiguous: bool = False
    alternates: bool = False  # it holds a top-level "|"


def _backtracks_badly(pattern: str) -> bool:
    """Whether a repeated group is ambiguous: it holds a quantifier, or branches (``a|b``) that
    may start with the same character (the shapes of exponential backtracking)."""
    stack = [_Group(0)]
    closed = False
    for kind, token in _skeleton(pattern):
        if kind == "repeat" and closed:
            return True
        closed = False
        if kind in ("repeat", "optional"):
            stack[-1].ambiguous = True
        elif kind == "alternate":
            stack[-1].alternates = True
        elif kind == "open":
            stack.append(_Group(token.end()))
        elif kind == "close" and len(stack) > 1:
            group = stack.pop()
            body = pattern[group.body_start : token.start()]
            closed = group.ambiguous or (group.alternates and _branches_overlap(body))
            stack[-1].ambiguous = stack[-1].ambiguous or closed
    return False


def _branches(body: str) -> list[str]:
    """The top-level alternatives of a group's body."""
    body = body[2:] if body.startswith("?:") else body
    branches, start, depth, in_class = [], 0, 0, False
    for token in _TOKEN.finditer(body):
        text = token.group()
        if in_class:
            in_class = text != "]"
        elif text == "[":
            in_class = True
        elif text in "()":
            depth += 1 if text == "(" else -1
        elif text == "|" and depth == 0:
            branches.append(body[start : token.start()])
            start = token.end()
    return branches + [body[start:]]


def _first_atom(branch: str) -> str | None:
    """The atom a branch must start with, or None if it may start otherwise (empty, a group, optional)."""
    tokens = list(_TOKEN.finditer(branch))
    if not tokens or tokens[0].group() in ("(", "^", "$"):
        return None
    end, in_class = 0, tokens[0].group() == "["
    while in_class:
        end += 1
        in_class = tokens[end].group() != "]"
    following = tokens[end + 1].group() if end + 1 < len(tokens) else ""
    if following in ("?", "*") or following.startswith("{0"):
        return None
    return branch[: tokens[end].end()]


@functools.lru_cache(maxsize=1)
def _every_character() -> str:
    """Every Unicode scalar value once, in order (decoded from UTF-32: a few times faster than chr)."""
    codec = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"

    def block(low: int, high: int) -> str:
        return array.array("I", range(low, high)).tobytes().decode(codec)

    return block(0, 0xD800) + block(0xE000, _MAX_CODE_POINT + 1)


def _branches_overlap(body: str) -> bool:
    """Whether two alternatives of ``body`` may start with the same character (checked over all of
    Unicode: somewhere both first atoms match)."""
    atoms = [_first_atom(branch) for branch in _branches(body)]
    if None in atoms:
        return True
    everything = _every_character()
    translated = [translate(atom) for atom in atoms if atom is not None]
    return any(
        regex.search(f"(?={first}){second}", everything) is not None
        for first, second in itertools.combinations(translated, 2)
    )


def _group_end(pattern: str, start: int) -> int:
    """The index just after the group opening at ``start``."""
    depth, in_class = 0, False
    for token in _TOKEN.finditer(pattern, start):
        text = token.group()
        if in_class:
            in_class = text != "]"
        elif text == "[":
            in_class = True
        elif text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth == 0:
                return token.end()
    raise ValueError(f"unbalanced group in pattern {pattern!r}")


def _leading_lookarounds(pattern: str) -> tuple[list[tuple[bool, str]], str]:
    """``(?=A)``/``(?!A)`` groups at the start of ``pattern`` as (positive, A), and the rest."""
    found = []
    while pattern.startswith(("(?=", "(?!")):
        end = _group_end(pattern, 0)
        found.append((pattern[2] == "=", pattern[3 : end - 1]))
        pattern = pattern[end:]
    return found, pattern


def _big(token: regex.Match) -> bool:
    """Whether a count token exceeds RE2's largest count (1000)."""
    return int(token["count"]) > _RE2_MAX_REPEAT or (token["upto"] != "" and _most(token) > _RE2_MAX_REPEAT)


def _big_count(pattern: str) -> bool:
    return any(_big(token) for token in _TOKEN.finditer(pattern) if token["count"])


def _needs_regex(pattern: str) -> bool:
    """Whether ``pattern`` goes to ``regex``: a lookaround past the start, or a count above
    1000 (costly in RE2) without an ambiguous repeated group; ``ValueError`` if neither engine fits."""
    lookarounds, rest = _leading_lookarounds(pattern)
    parts = [rest] + [body for _, body in lookarounds]
    nested = _backtracks_badly(pattern)
    if any(_LOOKAROUND.search(part) for part in parts):
        if nested:
            raise ValueError(f"pattern {pattern!r} needs backtracking and repeats an ambiguous group")
        return True
    return not nested and any(_big_count(part) for part in parts)


def _re2_matcher(pattern: str) -> Matcher:
    """RE2 on UTF-8 bytes: the same match as on ``str`` (RE2 works on UTF-8 either way) without
    the wrapper's per-call offset bookkeeping, which costs more than the match itself."""
    lookarounds, rest = _leading_lookarounds(pattern)
    whole = re2.compile(translate(rest, RE2).encode(), _RE2_OPTIONS)
    checks = [
        (positive, re2.compile(translate(body, RE2, prefix=True).encode(), _RE2_OPTIONS))
        for positive, body in lookarounds
    ]

    def matches(value: str) -> bool:
        text = value.encode()
        return (
            all((check.match(text) is not None) == positive for positive, check in checks)
            and whole.fullmatch(text) is not None
        )

    return matches


def _regex_matcher(pattern: str) -> Matcher:
    compiled = regex.compile(translate(pattern), regex.V0)
    return lambda value: compiled.fullmatch(value) is not None


def uses_re2(pattern: str) -> bool:
    """Whether ``pattern`` is matched by RE2 (linear time) rather than ``regex``."""
    return not _needs_regex(pattern)


@functools.lru_cache(maxsize=None)
def matcher(pattern: str) -> Matcher:
    """A predicate telling whether a whole value matches the Java ``pattern`` (cached)."""
    matches = _re2_matcher(pattern) if uses_re2(pattern) else _regex_matcher(pattern)

    def check(value: str) -> bool:
        if not value.isascii() and _SURROGATE.search(value):
            return False
        return matches(value)

    return check
