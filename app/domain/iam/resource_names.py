"""Resource names and their regex tails — pure functions.

A binding grants a role on a resource name. A name may end in a regex tail ``<...>``: the
literal part matches literally, the tail the rest as an anchored regex. A binding on an
organization's name covers everything inside it; no binding reaches another organization.
Tails are a regex subset that cannot backtrack catastrophically: characters, ``.``, simple
classes, ``(...)``/``(?:...)``, ``|``, ``* + ?`` (``*``/``+`` on one character only), with
the number of backtracking paths bounded.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple, NoReturn

from app.errors import TocsinError

SERVICE_WORD = "tocsin"
NAME_PREFIX = f"crn:{SERVICE_WORD}:organizations:"
MAX_NAME_LENGTH = 512
MAX_TAIL_LENGTH = 64
# Upper bound on the backtracking paths of a tail over a name of MAX_NAME_LENGTH: two
# unbounded repeats (``[^/]*/.*``) with one optional part fit, a third repeat does not.
MAX_TAIL_PATHS = 2 * (MAX_NAME_LENGTH + 1) ** 2

_ORG = r"[A-Za-z0-9_-]{1,128}"
_TYPE = r"[a-z][a-z0-9_]{0,63}"
_SEGMENT = r"(?!\.\.?(?:/|\Z))[A-Za-z0-9_.~-]{1,128}"
RESOURCE_NAME_RE = re.compile(rf"crn:{SERVICE_WORD}:organizations:{_ORG}(?::{_TYPE}(?:/{_SEGMENT})*)?")
# The literal part before a tail may also stop right after ``:`` or ``/``.
_LITERAL_RE = re.compile(rf"crn:{SERVICE_WORD}:organizations:{_ORG}(?::(?:{_TYPE}(?:/{_SEGMENT})*/?)?)?")

_TAIL_CHARS = frozenset(string.ascii_letters + string.digits + "_-/:")
_CLASS_CHARS = frozenset(string.ascii_letters + string.digits + "_/:.")
_CLASS_RE = re.compile(r"\[\^?(?:[a-z]-[a-z]|[A-Z]-[A-Z]|[0-9]-[0-9]|[A-Za-z0-9_/:.])+-?\]")
_ANY = "<any>"  # stands for "any character" in a first-character set


class InvalidName(TocsinError, ValueError):
    """A resource name or regex tail that is malformed or unsafe."""


def organization_name(org_id: str) -> str:
    """``crn:tocsin:organizations:<org_id>``."""
    return f"{NAME_PREFIX}{org_id}"


def resource_name(org_id: str, resource_type: str | None = None, resource_id: str | None = None) -> str:
    """``crn:tocsin:organizations:<org>[:<type>[/<id>]]``."""
    name = organization_name(org_id) if resource_type is None else f"{NAME_PREFIX}{org_id}:{resource_type}"
    return name if resource_id is None or resource_type is None else f"{name}/{resource_id}"


def topic_names(org_id: str, topic_id: str, key: str) -> tuple[str, str]:
    """A workflow topic's two canonical names, by id and by key.

    The spec lets a path name a topic by either, so a binding on either name grants the same on
    every route. Keys never look like ids (``wtp_``) and never change, so neither name can come
    to mean another topic while this one exists.
    """
    return resource_name(org_id, "workflow_topics", topic_id), resource_name(org_id, "workflow_topics", key)


def coverable(name: str) -> bool:
    """Whether any binding can cover the literal ``name``: not one longer than MAX_NAME_LENGTH or
    holding a newline (:meth:`NamePattern.matches` refuses both, the organization's own name included).
    No resource has such a name, so a route answers 404 for it, never 403 to its owner."""
    return len(name) <= MAX_NAME_LENGTH and "\n" not in name


def validate_resource_name(name: str) -> str:
    """Return a literal name (no tail) unchanged, or raise :class:`InvalidName` (RESOURCE_NAME_RE, length)."""
    if len(name) > MAX_NAME_LENGTH or not RESOURCE_NAME_RE.fullmatch(name):
        raise InvalidName(f"not a resource name {NAME_PREFIX}<org_id>[:<type>[/<id>...]] of <= {MAX_NAME_LENGTH} chars")
    return name


class _Tail(NamedTuple):
    paths: int  # upper bound on the backtracking paths over a name of MAX_NAME_LENGTH
    first: frozenset[str]  # characters a non-empty match can start with (_ANY: any)
    nullable: bool  # can match the empty string
    single: bool = False  # exactly one character wide: may take ``*`` or ``+``


class _TailParser:
    """Recursive descent over the tail subset, computing its bounds on the way."""

    def __init__(self, src: str) -> None:
        self.src, self.pos = src, 0

    def peek(self, ahead: int = 0) -> str:
        return self.src[self.pos + ahead : self.pos + ahead + 1]

    def fail(self, why: str) -> NoReturn:
        raise InvalidName(f"regex tail {why} (position {self.pos})")

    def alternation(self) -> _Tail:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        paths = min(sum(b.paths for b in branches), MAX_TAIL_PATHS + 1)
        return _Tail(paths, frozenset[str]().union(*(b.first for b in branches)), any(b.nullable for b in branches))

    def sequence(self) -> _Tail:
        paths, first, nullable = 1, frozenset[str](), True
        while self.peek() not in ("", "|", ")"):
            item = self.item()
            paths = min(paths * item.paths, MAX_TAIL_PATHS + 1)
            first = first | item.first if nullable else first
            nullable = nullable and item.nullable
        return _Tail(paths, first, nullable)

    def item(self) -> _Tail:
        atom, quantifier = self.atom(), self.peek()
        if quantifier not in ("*", "+", "?"):
            return atom
        self.pos += 2 if self.peek(1) == "?" else 1  # lazy is fine; ``*+``, ``**`` fail as atoms
        if quantifier == "?":
            return _Tail(atom.paths + 1, atom.first, True)
        if not atom.single:
            self.fail("repeats a group: only a single character or class may take * or +")
        return _Tail(MAX_NAME_LENGTH + 1, atom.first, quantifier == "*")

    def atom(self) -> _Tail:
        char = self.peek()
        if char == "(":
            if self.peek(1) == "?" and self.peek(2) != ":":
                self.fail("uses a group extension: only (?:...) is allowed")
            self.pos += 3 if self.peek(1) == "?" else 1
            inner = self.alternation()
            if self.peek() != ")":
                self.fail("has an unbalanced '('")
            self.pos += 1
            return _Tail(inner.paths, inner.first, inner.nullable)
        if char == "[":
            found = _CLASS_RE.match(self.src, self.pos)
            if found is None or any(low > high for low, high in re.findall(r"(\w)-(\w)", found[0])):
                self.fail("has a character class beyond [^a-zA-Z0-9_/:.-] (ascending ranges a-z, A-Z, 0-9)")
            self.pos = found.end()
            members = frozenset(c for c in _CLASS_CHARS | {"-"} if re.fullmatch(found[0], c))
            return _Tail(1, frozenset({_ANY}) if found[0][1] == "^" else members, False, single=True)
        if char != "." and char not in _TAIL_CHARS:
            self.fail(f"cannot use {char!r}" if char else "ends early")
        self.pos += 1
        return _Tail(1, frozenset({_ANY if char == "." else char}), False, single=True)


@lru_cache(maxsize=1024)
def _analyse_tail(src: str) -> _Tail:
    parser = _TailParser(src)
    tail = parser.alternation()
    if parser.pos != len(src):
        parser.fail("has an unbalanced ')'")
    if tail.paths > MAX_TAIL_PATHS:
        raise InvalidName("regex tail is too ambiguous: it could backtrack too much")
    return tail


@dataclass(frozen=True, slots=True)
class NamePattern:
    """A binding's resource name, split into its literal part and optional regex tail."""

    literal: str
    tail: re.Pattern[str] | None
    # The literal stops right after the org id: the rest must then be empty or start with ``:``.
    org_level: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "org_level", self.literal.count(":") == 3)

    def matches(self, name: str) -> bool:
        """Whether ``name`` is covered: literal prefix, then the tail (anchored) on the rest."""
        if not coverable(name) or not name.startswith(self.literal):
            return False
        rest = name[len(self.literal) :]
        if self.org_level and rest and rest[0] != ":":
            return False  # never extend the organization id (``org_1`` vs ``org_12``)
        if self.tail is not None:
            return self.tail.fullmatch(rest) is not None
        # The organization's own name covers everything inside it.
        return rest == "" or self.org_level


@lru_cache(maxsize=4096)
def parse_pattern(name: str) -> NamePattern:
    """Parse a binding resource name (literal part plus optional ``<tail>``); raises :class:`InvalidName`."""
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidName("resource name is too long")
    literal, tail_src = name, None
    if name.endswith(">") and "<" in name:
        literal, _, rest = name.partition("<")
        tail_src = rest[:-1]
    if not (_LITERAL_RE if tail_src is not None else RESOURCE_NAME_RE).fullmatch(literal):
        raise InvalidName(f"malformed name: {NAME_PREFIX}<org_id>[:<type>[/<id>...]] then an optional <tail>")
    if tail_src is None:
        return NamePattern(literal=literal, tail=None)
    src = tail_src.removeprefix("^").removesuffix("$")
    if not src or len(tail_src) > MAX_TAIL_LENGTH:
        raise InvalidName(f"regex tail must be 1 to {MAX_TAIL_LENGTH} characters")
    _analyse_tail(src)  # the subset it accepts always compiles
    return NamePattern(literal=literal, tail=re.compile(src))


# parse_pattern's result or None; a dict is cheaper than lru_cache. Others read it (the fast path
# of evaluation.evaluate); only pattern_or_none writes it.
PATTERN_CACHE: dict[str, NamePattern | None] = {}
_UNPARSED = NamePattern("", None)


def pattern_or_none(name: str) -> NamePattern | None:
    """:func:`parse_pattern`, or None for a name it refuses; cached in :data:`PATTERN_CACHE`."""
    pattern = PATTERN_CACHE.get(name, _UNPARSED)
    if pattern is _UNPARSED:  # a local, so a concurrent clear() cannot make it vanish
        try:
            pattern = parse_pattern(name)
        except InvalidName:
            pattern = None
        if len(PATTERN_CACHE) >= 4096:
            PATTERN_CACHE.clear()
        PATTERN_CACHE[name] = pattern
    return pattern


def validate_binding_resource(name: str, org_id: str) -> NamePattern:
    """Parse a binding's name for ``org_id``; :class:`InvalidName` unless its literal names ``org_id`` in full
    (the org's name, or it followed by ``:``) and a tail right after the org id can only continue with ``:``."""
    if not re.fullmatch(_ORG, org_id):
        raise InvalidName("malformed organization id")
    pattern = parse_pattern(name)
    own = organization_name(org_id)
    if pattern.literal != own and not pattern.literal.startswith(own + ":"):
        raise InvalidName(f"the literal part of the name must name organization {org_id} in full")
    if pattern.literal == own and pattern.tail is not None and not _analyse_tail(pattern.tail.pattern).first <= {":"}:
        raise InvalidName("a regex tail right after the organization id must start with ':'")
    return pattern


def organization_of(name: str) -> str:
    """The organization id a resource name (or a binding's literal part) lives in; "" if none."""
    return name[len(NAME_PREFIX) :].split(":", 1)[0].split("<", 1)[0] if name.startswith(NAME_PREFIX) else ""


# Tails that match every rest (without a newline) after the literal plus the reach's suffix.
_SATURATING_TAILS = frozenset({".*", "(/.*)?", "(?:/.*)?", "/.*", "(:.*)?", "(?::.*)?", ":.*"})


def _reach(pattern: NamePattern) -> tuple[str | None, str | None]:
    """(exact name or None, prefix or None): an over-approximation of the names ``pattern`` matches."""
    if pattern.tail is None:
        return pattern.literal, pattern.literal + ":" if pattern.org_level else None
    tail = _analyse_tail(pattern.tail.pattern)
    suffix = next(iter(tail.first)) if len(tail.first) == 1 and _ANY not in tail.first else ""
    return pattern.literal if tail.nullable else None, pattern.literal + (":" if pattern.org_level else suffix)


def pattern_covers(outer: str, inner: str) -> bool:
    """Conservatively, whether binding name ``outer`` matches every name ``inner`` can match.

    Backs the escalation guard for grants on patterns: the caller must hold each permission
    through a binding that covers the whole new pattern, not just its literal part.
    """
    big, small = pattern_or_none(outer), pattern_or_none(inner)
    if big is None or small is None or (big.tail is not None and big.tail.pattern not in _SATURATING_TAILS):
        return outer == inner and big is not None
    (exact_o, prefix_o), (exact_i, prefix_i) = _reach(big), _reach(small)
    if big.org_level and big.tail is not None and "/" in _analyse_tail(big.tail.pattern).first:
        prefix_o = None  # right after the org id only ':' may follow, which a '/' tail never matches
    exact_ok = exact_i is None or exact_i == exact_o or (prefix_o is not None and exact_i.startswith(prefix_o))
    return exact_ok and (prefix_i is None or (prefix_o is not None and prefix_i.startswith(prefix_o)))
