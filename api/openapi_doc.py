"""What the OpenAPI document says beyond the routes: short stable ``operationId``s and the bearer
security scheme, so generated clients (clients/python/, ``make client``) get readable method names
and send the token.

An operation's id is its route's function name (``create_topic``, ``publish_batch``), with the few
names that say too little on their own renamed here once. The ids are what client code calls:
renaming a route's function renames them, and ``make lint`` then fails until the client is
regenerated (so the change is seen). Every operation needs the bearer token but those that take
none: health and metrics, the token exchange (RFC 8693 form), the sign-in steps and PagerDuty's
``/v2/enqueue`` (its ``routing_key`` is the credential). Enrolling a second factor (TOTP, WebAuthn)
takes either an enrolment step's challenge or the person's session: the token is optional there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

from api.errors import RFC6749_ERRORS

BEARER = "bearer"
_RENAMED = {
    "check": "check_iam_permission",
    "audit_log": "list_audit_log",
    "get_policy": "get_authentication_policy",
    "put_policy": "replace_authentication_policy",
    "create_org": "create_organization",
    "get_org": "get_organization",
    "patch_org": "update_organization",
    "control_state": "get_control_state",
    "me": "get_me",
    "refresh": "refresh_session",
    "get_answers": "list_form_answers",
    "post_answers": "add_form_answers",
    "get_timeline": "list_incident_events",
    "add_note": "add_incident_event",
    "delete_token_short_path": "revoke_service_account_token_by_id",
}
_NO_TOKEN_PATHS = ("/healthz", "/readyz", "/metrics")
_NO_TOKEN_PREFIXES = ("/v1/signin/",)
_OPTIONAL_TOKEN = ("/v1/signin/totp_enrolment", "/v1/signin/webauthn/registration")  # a challenge or a session


def operation_id(route: APIRoute) -> str:
    """The operation's id: the route's name, or its rename (``generate_unique_id_function``)."""
    return _RENAMED.get(route.name, route.name)


def _takes_no_token(path: str, operation: dict[str, Any]) -> bool:
    return (
        operation.get("security") == []  # declared by the route (openapi_extra)
        or bool(operation.get(RFC6749_ERRORS))
        or path in _NO_TOKEN_PATHS
        or path.startswith(_NO_TOKEN_PREFIXES)
        or path.endswith("/signin_methods")
    )


def document_security(schema: dict[str, Any]) -> dict[str, Any]:
    """Declare the bearer scheme, required by default, and ``security: []`` where no token is taken."""
    components = schema.setdefault("components", {})
    components["securitySchemes"] = {
        BEARER: {
            "type": "http",
            "scheme": "bearer",
            "description": "An access token (tcs_…), a token from the workload-identity exchange, or a "
            "person's session token (tss_…): Authorization: Bearer <token>",
        }
    }
    schema["security"] = [{BEARER: []}]
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            if path.startswith(_OPTIONAL_TOKEN):
                operation["security"] = [{}, {BEARER: []}]
            elif _takes_no_token(path, operation):
                operation["security"] = []
    return schema


def install(app: FastAPI) -> None:
    """Add the security scheme to the document the app's ``openapi()`` (api/errors.py) builds."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        if "securitySchemes" not in schema.get("components", {}):
            document_security(schema)
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
