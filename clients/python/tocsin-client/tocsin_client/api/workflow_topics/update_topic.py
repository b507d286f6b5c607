from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.topic_out import TopicOut
from ...models.topic_patch import TopicPatch
from ...types import Response


def _get_kwargs(
    org_id: str,
    topic: str,
    *,
    body: TopicPatch,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/organizations/{org_id}/workflow_topics/{topic}".format(
            org_id=quote(str(org_id), safe=""),
            topic=quote(str(topic), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | TopicOut | None:
    if response.status_code == 200:
        response_200 = TopicOut.from_dict(response.json())

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

    if response.status_code == 409:
        response_409 = ErrorOut.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = ErrorOut.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = ErrorOut.from_dict(response.json())

        return response_415

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
) -> Response[ErrorOut | TopicOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    body: TopicPatch,
) -> Response[ErrorOut | TopicOut]:
    """Update Topic

     Change a topic. A new ``control_policy_profile`` replaces the old one whole; open episodes
    keep their state and follow the new thresholds from their next event, except that a change of
    policy type ends them: their open incidents are resolved here (reason ``policy_changed``), and
    the worker releases each episode before deciding its key's next record
    (docs/concepts/event-control.md). A change of ``fields`` that would disable the caller's own
    workflows is refused
    (``409``); receivers' workflows it breaks are set INACTIVE, each told in its own audit log.

    Args:
        org_id (str):
        topic (str):
        body (TopicPatch): Fields a PATCH may change (the key is fixed: paths and keys of
            publishers use it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TopicOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        topic=topic,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    body: TopicPatch,
) -> ErrorOut | TopicOut | None:
    """Update Topic

     Change a topic. A new ``control_policy_profile`` replaces the old one whole; open episodes
    keep their state and follow the new thresholds from their next event, except that a change of
    policy type ends them: their open incidents are resolved here (reason ``policy_changed``), and
    the worker releases each episode before deciding its key's next record
    (docs/concepts/event-control.md). A change of ``fields`` that would disable the caller's own
    workflows is refused
    (``409``); receivers' workflows it breaks are set INACTIVE, each told in its own audit log.

    Args:
        org_id (str):
        topic (str):
        body (TopicPatch): Fields a PATCH may change (the key is fixed: paths and keys of
            publishers use it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TopicOut
    """

    return sync_detailed(
        org_id=org_id,
        topic=topic,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    body: TopicPatch,
) -> Response[ErrorOut | TopicOut]:
    """Update Topic

     Change a topic. A new ``control_policy_profile`` replaces the old one whole; open episodes
    keep their state and follow the new thresholds from their next event, except that a change of
    policy type ends them: their open incidents are resolved here (reason ``policy_changed``), and
    the worker releases each episode before deciding its key's next record
    (docs/concepts/event-control.md). A change of ``fields`` that would disable the caller's own
    workflows is refused
    (``409``); receivers' workflows it breaks are set INACTIVE, each told in its own audit log.

    Args:
        org_id (str):
        topic (str):
        body (TopicPatch): Fields a PATCH may change (the key is fixed: paths and keys of
            publishers use it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TopicOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        topic=topic,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    body: TopicPatch,
) -> ErrorOut | TopicOut | None:
    """Update Topic

     Change a topic. A new ``control_policy_profile`` replaces the old one whole; open episodes
    keep their state and follow the new thresholds from their next event, except that a change of
    policy type ends them: their open incidents are resolved here (reason ``policy_changed``), and
    the worker releases each episode before deciding its key's next record
    (docs/concepts/event-control.md). A change of ``fields`` that would disable the caller's own
    workflows is refused
    (``409``); receivers' workflows it breaks are set INACTIVE, each told in its own audit log.

    Args:
        org_id (str):
        topic (str):
        body (TopicPatch): Fields a PATCH may change (the key is fixed: paths and keys of
            publishers use it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TopicOut
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            topic=topic,
            client=client,
            body=body,
        )
    ).parsed
