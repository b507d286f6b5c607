from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.event_trace_out import EventTraceOut
from ...types import Response


def _get_kwargs(
    org_id: str,
    event_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/organizations/{org_id}/events/{event_id}".format(
            org_id=quote(str(org_id), safe=""),
            event_id=quote(str(event_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | EventTraceOut | None:
    if response.status_code == 200:
        response_200 = EventTraceOut.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorOut.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorOut.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorOut.from_dict(response.json())

        return response_404

    if response.status_code == 422:
        response_422 = ErrorOut.from_dict(response.json())

        return response_422

    if response.status_code == 503:
        response_503 = ErrorOut.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorOut | EventTraceOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[ErrorOut | EventTraceOut]:
    """Get Event Trace

     The event's trace. ``organization.event:get`` on the event's name, or on its topic's (a
    publisher bound to a topic reads the traces of that topic's events): without it on either, ``404``
    as for an event that does not exist when the caller holds the permission on some name, else ``403``.

    Args:
        org_id (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | EventTraceOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        event_id=event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> ErrorOut | EventTraceOut | None:
    """Get Event Trace

     The event's trace. ``organization.event:get`` on the event's name, or on its topic's (a
    publisher bound to a topic reads the traces of that topic's events): without it on either, ``404``
    as for an event that does not exist when the caller holds the permission on some name, else ``403``.

    Args:
        org_id (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | EventTraceOut
    """

    return sync_detailed(
        org_id=org_id,
        event_id=event_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    org_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[ErrorOut | EventTraceOut]:
    """Get Event Trace

     The event's trace. ``organization.event:get`` on the event's name, or on its topic's (a
    publisher bound to a topic reads the traces of that topic's events): without it on either, ``404``
    as for an event that does not exist when the caller holds the permission on some name, else ``403``.

    Args:
        org_id (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | EventTraceOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        event_id=event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org_id: str,
    event_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> ErrorOut | EventTraceOut | None:
    """Get Event Trace

     The event's trace. ``organization.event:get`` on the event's name, or on its topic's (a
    publisher bound to a topic reads the traces of that topic's events): without it on either, ``404``
    as for an event that does not exist when the caller holds the permission on some name, else ``403``.

    Args:
        org_id (str):
        event_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | EventTraceOut
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            event_id=event_id,
            client=client,
        )
    ).parsed
