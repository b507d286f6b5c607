"""Permissions, roles, resource names and the IAM decision — pure functions.

A binding grants a role on a resource name; a role is a list of permissions. A name may
end in a regex tail ``<...>``: the part before it matches literally and the tail matches
the rest of the name as an anchored regular expression. A binding on an organization's
own name covers everything inside it, and no binding ever reaches another organization.

Tails are a small regex subset that cannot backtrack catastrophically: literal characters,
``.``, simple classes, ``(...)`` / ``(?:...)`` groups, ``|``, and ``* + ?`` (lazy too) —
``*`` and ``+`` only on a single character, and the number of backtracking paths bounded.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NoReturn

SERVICE_WORD = "tocsin"
NAME_PREFIX = f"crn:{SERVICE_WORD}:organizations:"
ACTIONS = ("list", "get", "update", "delete", "create", "publish", "fullaccess")
# ``\Z``, not ``$``: ``$`` also matches before a trailing newline.
PERMISSION_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*:(?:list|get|update|delete|create|publish|fullaccess)\Z")
_WILDCARD_PERMISSION_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*:\*\Z")
MAX_NAME_LENGTH = 512
MAX_TAIL_LENGTH = 64
# Upper bound on the backtracking paths of a tail over a name of MAX_NAME_LENGTH: two
# unbounded repeats (``.*/.*``) with a little alternation fit, a third repeat does not.
MAX_TAIL_PATHS = 4 * (MAX_NAME_LENGTH + 1) ** 2

_ORG = r"[A-Za-z0-9_-]{1,128}"
_TYPE = r"[a-z][a-z0-9_]{0,63}"
_SEGMENT = r"(?!\.\.?(?:/|:|<|\Z))[A-Za-z0-9_.~-]{1,128}"
_ORG_RE = re.compile(_ORG)
RESOURCE_NAME_RE = re.compile(rf"crn:{SERVICE_WORD}:organizations:{_ORG}(?::{_TYPE}(?:/{_SEGMENT})*)?")
# The literal part before a tail may also stop right after ``:`` or ``/``.
_LITERAL_RE = re.compile(rf"crn:{SERVICE_WORD}:organizations:{_ORG}(?::(?:{_TYPE}(?:/{_SEGMENT})*/?)?)?")

_TAIL_CHARS = frozenset(string.ascii_letters + string.digits + "_-/:")
_CLASS_CHARS = frozenset(string.ascii_letters + string.digits + "_/:.")
_ANY = "<any>"  # stands for "any character" in a first-character set

RESOURCE_PREFIXES = (
    "organization.service_account",
    "organization.service_account.access_token",
    "organization.service_account.federated_credential",
    "organization.user",
    "organization.user.access_token",
    "organization.group",
    "organization.role",
    "organization.iam_policy",
    "organization.authentication_policy",
    "organization.workflow_topic",
    "organization.workflow",
    "organization.operation_book",
    "organization.incident",
    "organization.event",
    "organization.audit_log",
)


class InvalidName(ValueError):
    """A resource name or regex tail that is malformed or unsafe."""


@lru_cache(maxsize=1024)
def is_valid_permission(permission: str, *, allow_wildcard: bool = False) -> bool:
    """The spec's permission pattern, read with a literal dot; ``:*`` in role policies."""
    if PERMISSION_RE.match(permission):
        return True
    return allow_wildcard and bool(_WILDCARD_PERMISSION_RE.match(permission))


def _covers(granted: str, wanted: str) -> bool:
    # ``wanted`` is a valid concrete permission, so a match makes ``granted`` valid too.
    if granted == wanted:
        return True
    return granted.endswith(":*") and wanted.rpartition(":")[0] == granted[:-2]


def permission_covers(granted: str, wanted: str) -> bool:
    """Whether a role policy entry (possibly ``x:*``) grants the concrete permission ``wanted``.

    ``x:*`` covers every action of exactly ``x``: not ``x_y:...`` nor ``x.sub:...``.
    """
    return is_valid_permission(wanted) and _covers(granted, wanted)


def expand_permission(permission: str) -> tuple[str, ...]:
    """``x:*`` as every action of ACTIONS; a concrete permission as itself; invalid as ()."""
    if is_valid_permission(permission):
        return (permission,)
    if is_valid_permission(permission, allow_wildcard=True):
        return tuple(f"{permission[:-2]}:{action}" for action in ACTIONS)
    return ()


def escalation_violations(granted_permissions: Iterable[str], caller_can: Callable[[str], bool]) -> list[str]:
    """The permissions a grant would hand out that the caller does not hold (IAM-002 if any).

    ``x:*`` is expanded into every action; an entry that is not a valid permission is
    reported as it is (fail closed). Order of first appearance, without duplicates.
    """
    out: list[str] = []
    for entry in granted_permissions:
        for permission in expand_permission(entry) or (entry,):
            if permission not in out and (permission == entry and not expand_permission(entry) or not caller_can(permission)):
                out.append(permission)
    return out


def organization_name(org_id: str) -> str:
    """``crn:tocsin:organizations:<org_id>``."""
    return f"{NAME_PREFIX}{org_id}"


def resource_name(org_id: str, resource_type: str | None = None, resource_id: str | None = None) -> str:
    """``crn:tocsin:organizations:<org>[:<type>[/<id>]]``."""
    name = organization_name(org_id)
    if resource_type is None:
        return name
    name = f"{name}:{resource_type}"
    return name if resource_id is None else f"{name}/{resource_id}"


def validate_resource_name(name: str) -> str:
    """Return a literal resource name (no tail) unchanged; raise :class:`InvalidName` if malformed.

    Org ids ``[A-Za-z0-9_-]``, a type ``[a-z][a-z0-9_]*``, ``/``-separated ids of
    ``[A-Za-z0-9_.~-]`` (never ``.`` or ``..``), at most MAX_NAME_LENGTH characters.
    """
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidName("resource name is too long")
    if not RESOURCE_NAME_RE.fullmatch(name):
        raise InvalidName(f"not a resource name: crn:{SERVICE_WORD}:organizations:<org_id>[:<type>[/<id>...]]")
    return name


@dataclass(frozen=True, slots=True)
class _Tail:
    paths: int  # upper bound on backtracking paths
    first: frozenset[str]  # characters a non-empty match can start with (_ANY: any)
    nullable: bool  # can match the empty string
    single: bool = False  # exactly one character wide: may take ``*`` or ``+``


class _TailParser:
    """Recursive-descent check of the tail subset; computes the bounds on the way."""

    def __init__(self, src: str) -> None:
        self.src, self.pos = src, 0

    def peek(self) -> str:
        return self.src[self.pos] if self.pos < len(self.src) else ""

    def fail(self, why: str) -> NoReturn:
        raise InvalidName(f"regex tail {why} (position {self.pos})")

    def parse(self) -> _Tail:
        tail = self.alternation()
        if self.pos != len(self.src):
            self.fail("has an unbalanced ')'" if self.peek() == ")" else f"cannot use {self.peek()!r}")
        return tail

    def alternation(self) -> _Tail:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return _Tail(
            paths=min(sum(b.paths for b in branches), MAX_TAIL_PATHS + 1),
            first=frozenset().union(*(b.first for b in branches)),
            nullable=any(b.nullable for b in branches),
        )

    def sequence(self) -> _Tail:
        paths, first, nullable = 1, frozenset[str](), True
        while self.peek() not in ("", "|", ")"):
            item = self.item()
            paths = min(paths * item.paths, MAX_TAIL_PATHS + 1)
            first = first | item.first if nullable else first
            nullable = nullable and item.nullable
        return _Tail(paths=paths, first=first, nullable=nullable)

    def item(self) -> _Tail:
        atom = self.atom()
        quantifier = self.peek()
        if quantifier not in ("*", "+", "?"):
            return atom
        self.pos += 1
        if self.peek() == "?":  # lazy; ``*+`` (possessive) and ``**`` fall out as unknown atoms
            self.pos += 1
        if quantifier == "?":
            return _Tail(paths=atom.paths + 1, first=atom.first, nullable=True)
        if not atom.single:
            self.fail("repeats a group: only a single character or class may take * or +")
        return _Tail(paths=MAX_NAME_LENGTH + 1, first=atom.first, nullable=quantifier == "*")

    def atom(self) -> _Tail:
        char = self.peek()
        if char == "(":
            self.pos += 1
            if self.src.startswith("?:", self.pos):
                self.pos += 2
            elif self.peek() == "?":
                self.fail("uses a group extension: only (?:...) is allowed")
            inner = self.alternation()
            if self.peek() != ")":
                self.fail("has an unbalanced '('")
            self.pos += 1
            return _Tail(paths=inner.paths, first=inner.first, nullable=inner.nullable)
        if char == "[":
            return self.char_class()
        if char == "." or char in _TAIL_CHARS:
            self.pos += 1
            return _Tail(paths=1, first=frozenset({_ANY if char == "." else char}), nullable=False, single=True)
        self.fail(f"cannot use {char!r}" if char else "ends early")

    def char_class(self) -> _Tail:
        self.pos += 1
        negated = self.peek() == "^"
        self.pos += negated
        members: set[str] = set()
        while self.peek() != "]":
            low = self.peek()
            if low == "-" and self.src.startswith("-]", self.pos) and members:
                members.add("-")
                self.pos += 1
                continue
            if low not in _CLASS_CHARS:
                self.fail(f"cannot use {low!r} in a character class" if low else "has an unclosed '['")
            self.pos += 1
            high = low
            if self.peek() == "-" and not self.src.startswith("-]", self.pos):
                high = self.src[self.pos + 1 : self.pos + 2]
                if not (low.isalnum() and high.isalnum() and low <= high and low.isdigit() == high.isdigit()):
                    self.fail("has a bad range in a character class")
                self.pos += 2
            members.update(chr(c) for c in range(ord(low), ord(high) + 1))
        if not members:
            self.fail("has an empty character class")
        self.pos += 1
        return _Tail(paths=1, first=frozenset({_ANY}) if negated else frozenset(members), nullable=False, single=True)


@lru_cache(maxsize=1024)
def _analyse_tail(src: str) -> _Tail:
    tail = _TailParser(src).parse()
    if tail.paths > MAX_TAIL_PATHS:
        raise InvalidName("regex tail is too ambiguous: at most two unbounded repeats")
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
        if len(name) > MAX_NAME_LENGTH or not name.startswith(self.literal) or "\n" in name:
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
    if not literal.startswith(NAME_PREFIX):
        raise InvalidName(f"resource name must start with {NAME_PREFIX}")
    if not (_LITERAL_RE if tail_src is not None else RESOURCE_NAME_RE).fullmatch(literal):
        raise InvalidName("malformed resource name (a regex tail must be the last part, written <...>)")
    if tail_src is None:
        return NamePattern(literal=literal, tail=None)
    src = tail_src.removeprefix("^").removesuffix("$")
    if not src or len(tail_src) > MAX_TAIL_LENGTH:
        raise InvalidName(f"regex tail must be 1 to {MAX_TAIL_LENGTH} characters")
    _analyse_tail(src)
    try:
        return NamePattern(literal=literal, tail=re.compile(src))
    except re.error as exc:  # pragma: no cover - the subset always compiles
        raise InvalidName(f"regex tail does not compile: {exc}") from exc


@lru_cache(maxsize=4096)
def _pattern_or_none(name: str) -> NamePattern | None:
    try:
        return parse_pattern(name)
    except InvalidName:
        return None


def validate_binding_resource(name: str, org_id: str) -> NamePattern:
    """Parse a binding's resource name for ``org_id``; raise :class:`InvalidName` unless it stays inside it.

    The literal part must name ``org_id`` in full — exactly ``crn:tocsin:organizations:<org_id>``
    or that followed by ``:`` — and a tail right after the org id may only continue with ``:``.
    """
    if not _ORG_RE.fullmatch(org_id):
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
    if not name.startswith(NAME_PREFIX):
        return ""
    return name[len(NAME_PREFIX) :].split(":", 1)[0].split("<", 1)[0]


# Tails whose reach is "every name starting with literal + suffix" (and the literal itself if True).
_REACH_TAILS = {".*": ("", True), "(/.*)?": ("/", True), "(?:/.*)?": ("/", True), "/.*": ("/", False)}


def _reach(pattern: NamePattern) -> tuple[str | None, str | None]:
    """(exact name or None, prefix or None): an over-approximation of what ``pattern`` matches."""
    literal = pattern.literal
    if pattern.tail is None:
        return literal, literal + ":" if pattern.org_level else None
    tail = _analyse_tail(pattern.tail.pattern)
    exact = literal if tail.nullable else None
    suffix = next(iter(tail.first)) if len(tail.first) == 1 and _ANY not in tail.first else ""
    return exact, literal + (":" if pattern.org_level else suffix)


def pattern_covers(outer: str, inner: str) -> bool:
    """Conservatively, whether binding name ``outer`` matches every name ``inner`` can match.

    Backs the escalation guard for grants on patterns: the caller must hold each permission
    through a binding that covers the whole new pattern, not just its literal part.
    """
    big, small = _pattern_or_none(outer), _pattern_or_none(inner)
    if big is None or small is None:
        return False
    if outer == inner:
        return True
    if big.tail is None:
        if not big.org_level:
            return False
        exact_o, prefix_o = big.literal, big.literal + ":"
    elif big.tail.pattern in _REACH_TAILS:
        suffix, with_literal = _REACH_TAILS[big.tail.pattern]
        exact_o = big.literal if with_literal else None
        prefix_o = big.literal + (":" if big.org_level else suffix)
    else:
        return False
    exact_i, prefix_i = _reach(small)
    return (exact_i is None or exact_i == exact_o or exact_i.startswith(prefix_o)) and (
        prefix_i is None or prefix_i.startswith(prefix_o)
    )


@dataclass(frozen=True, slots=True)
class Role:
    """A named list of permissions (``x:*`` allowed); system roles cannot change."""

    id: str
    name: str
    description: str
    permissions: tuple[str, ...]
    system: bool = False

    def grants(self, permission: str) -> bool:
        """Whether one of the role's permissions covers the concrete ``permission``."""
        return is_valid_permission(permission) and any(_covers(p, permission) for p in self.permissions)


def _all(action_filter: tuple[str, ...] | None = None) -> tuple[str, ...]:
    if action_filter is None:
        return tuple(f"{p}:*" for p in RESOURCE_PREFIXES)
    return tuple(f"{p}:{a}" for p in RESOURCE_PREFIXES for a in action_filter)


SYSTEM_ROLES: dict[str, Role] = {
    r.id: r
    for r in (
        Role("owner", "Owner", "Everything in the organization, incident fullaccess included.", _all(), True),
        Role("viewer", "Viewer", "Every get and list.", _all(("get", "list")), True),
        Role(
            "workflow_publisher",
            "Workflow publisher",
            "Publish events to workflow topics.",
            ("organization.workflow_topic:get", "organization.workflow_topic:publish"),
            True,
        ),
        Role(
            "incident_responder",
            "Incident responder",
            "Read and update incidents.",
            tuple(f"organization.incident:{a}" for a in ("get", "list", "update")),
            True,
        ),
        Role("incident_manager", "Incident manager", "Every incident action.", ("organization.incident:*",), True),
        Role(
            "user_manager",
            "User manager",
            "Manage users and groups.",
            ("organization.user:*", "organization.group:*"),
            True,
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Binding:
    """A role granted to a principal on a resource name (pattern)."""

    resource: str
    role_id: str


@dataclass(frozen=True, slots=True)
class Grant:
    """The binding, and the id of its role, that give a permission."""

    binding: Binding
    role_id: str


def _first_grant(
    bindings: Sequence[Binding], roles: Mapping[str, Role], permission: str, covers: Callable[[Binding], bool]
) -> Grant | None:
    if not is_valid_permission(permission):
        return None
    for binding in bindings:
        if not covers(binding):
            continue
        role = roles.get(binding.role_id)
        if role is not None and any(_covers(p, permission) for p in role.permissions):
            return Grant(binding=binding, role_id=role.id)
    return None


def evaluate(
    bindings: tuple[Binding, ...] | list[Binding],
    roles: Mapping[str, Role],
    permission: str,
    resource: str,
) -> Grant | None:
    """The first binding whose pattern covers ``resource`` and whose role grants ``permission``.

    Bindings whose stored name is invalid or unsafe, and unknown roles, are skipped.
    """

    def covers(binding: Binding) -> bool:
        pattern = _pattern_or_none(binding.resource)
        return pattern is not None and pattern.matches(resource)

    return _first_grant(bindings, roles, permission, covers)


def evaluate_pattern(
    bindings: Sequence[Binding], roles: Mapping[str, Role], permission: str, pattern: str
) -> Grant | None:
    """Like :func:`evaluate`, for every name a binding pattern can match (see :func:`pattern_covers`)."""
    return _first_grant(bindings, roles, permission, lambda b: pattern_covers(b.resource, pattern))
