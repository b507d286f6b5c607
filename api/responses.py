"""JSON responses encoded with orjson (FastAPI's ORJSONResponse is deprecated)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from fastapi import Response


def json_response(content: Any, status_code: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(orjson.dumps(content), status_code=status_code, headers=headers, media_type="application/json")
