"""How a settings group is named: each field of a group reads one ``TOCSIN_*`` variable (its group's
prefix and its name, or its alias), and a group given by those variables' names is built from them,
so that ``Settings(kafka_sasl_username=...)`` or a mapping of lower-cased variable names (what a
process's environment holds, less ``TOCSIN_``) configures the group as the environment would."""

from __future__ import annotations

from typing import Any, TypeGuard

from pydantic import AliasChoices
from pydantic_settings import BaseSettings


def is_group(annotation: Any) -> TypeGuard[type[BaseSettings]]:
    """Whether a field of ``Settings`` is a settings group (a nested settings object)."""
    return isinstance(annotation, type) and issubclass(annotation, BaseSettings)


def variables(group: type[BaseSettings]) -> dict[str, str]:
    """The group's variables (``TOCSIN_…``, upper case) and the field each one sets."""
    prefix = str(group.model_config.get("env_prefix", ""))
    found = {}
    for name, field in group.model_fields.items():
        alias = field.validation_alias
        named = alias.choices[0] if isinstance(alias, AliasChoices) else None
        found[(named if isinstance(named, str) else f"{prefix}{name}").upper()] = name
    return found


def grouped(settings: type[BaseSettings], values: dict[str, Any], prefix: str) -> dict[str, Any]:
    """``values`` with every key that names a group's variable (less ``prefix``, any case) moved into
    that group, built from them (and from the environment for the rest, as by default)."""
    out = dict(values)
    for name, field in settings.model_fields.items():
        group = field.annotation
        if name in out or not is_group(group):
            continue
        fields = variables(group)
        taken = {}
        for key in [k for k in out if isinstance(k, str)]:
            variable = f"{prefix}{key}".upper()
            if variable in fields:
                taken[fields[variable]] = out.pop(key)
        if taken:
            out[name] = group(**taken)
    return out
