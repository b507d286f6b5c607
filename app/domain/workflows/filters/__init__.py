"""Workflow filters: checked when a workflow is saved (validation.py), compiled once and evaluated
per event (compiled.py), on the spec's operators (operators.py) and a topic's fields (fields.py);
sites (sites.py).

A filter is ``None`` (always true) or a node: a condition ``{"field", "operator", "value"}``
naming a topic field by ``id`` (no ``value`` for ``EXISTS``, ``IS NULL``, ``IS NOT NULL``), or
``{"all": [node, ...]}``, ``{"any": [node, ...]}``, ``{"not": node}``. The operators and the
types they apply to are the spec's table ("Workflow filter operators"), :data:`OPERATOR_TYPES`.

Choices where the spec and API.md are silent:

- Reading: the field's ``path`` is split on ``.`` and read key by key through nested objects. A
  missing key, or a non-object on the way, is *absent*, which is not JSON ``null``: ``EXISTS``
  is true iff present (even null), ``IS NULL`` iff present and null, ``IS NOT NULL`` iff present
  and not null; every other operator is false on an absent or null value. A key that itself
  contains a dot cannot be addressed.
- Types are JSON's: boolean, number (int or float, never bool; ``1 == 1.0``), string. Values of
  different types compare false, never an error; ``true`` never equals ``1``.
- ``!=`` and ``NOT IN`` are true only when the value has the type of the filter value (of one of
  the listed values for ``NOT IN``) and differs; on absent, null or another type they are false
  like every other operator. So ``{"not": {= x}}`` and ``{!= x}`` differ on such values.
- ``BETWEEN [lo, hi]`` is inclusive. String operators are case-sensitive. Operators are written
  as in the spec, upper case.
- Allowed operators: each of a field's ``values`` entries allows its ``operators`` that fit its
  ``type`` (every operator fitting the type when its list is empty); a field without entries is
  of type ``any``. A condition's value must have a type declared by an entry allowing the
  operator (type ``any`` takes every type the operator does).
- Bounds: :data:`MAX_DEPTH`, :data:`MAX_LEAVES`, :data:`MAX_LIST_VALUES`, :data:`MAX_STRING_CHARS`;
  numbers are finite and integers within the signed 64-bit range (app/domain/shared/json_bounds.py).
- Traces (:meth:`CompiledFilter.evaluate`): one clause per condition, in filter order, every
  condition evaluated. Where there is nothing, the key is left out rather than set to null: no
  ``actual`` when the path is absent, no ``value`` for operators without one. Sites follow the
  same rule for ``value``.
"""

from __future__ import annotations
