from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.pagerduty_enqueue_body import PagerdutyEnqueueBody
from ...models.pagerduty_enqueue_response_202 import PagerdutyEnqueueResponse202
from ...models.pagerduty_enqueue_response_400 import PagerdutyEnqueueResponse400
from ...models.pagerduty_enqueue_response_429 import PagerdutyEnqueueResponse429
from ...models.pagerduty_enqueue_response_503 import PagerdutyEnqueueResponse503
from ...types import Response


def _get_kwargs(
    *,
    body: PagerdutyEnqueueBody,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v2/enqueue",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> (
    PagerdutyEnqueueResponse202
    | PagerdutyEnqueueResponse400
    | PagerdutyEnqueueResponse429
    | PagerdutyEnqueueResponse503
    | None
):
    if response.status_code == 202:
        response_202 = PagerdutyEnqueueResponse202.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = PagerdutyEnqueueResponse400.from_dict(response.json())

        return response_400

    if response.status_code == 429:
        response_429 = PagerdutyEnqueueResponse429.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = PagerdutyEnqueueResponse503.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[
    PagerdutyEnqueueResponse202
    | PagerdutyEnqueueResponse400
    | PagerdutyEnqueueResponse429
    | PagerdutyEnqueueResponse503
]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: PagerdutyEnqueueBody,
) -> Response[
    PagerdutyEnqueueResponse202
    | PagerdutyEnqueueResponse400
    | PagerdutyEnqueueResponse429
    | PagerdutyEnqueueResponse503
]:
    """Pagerduty Enqueue

    Args:
        body (PagerdutyEnqueueBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PagerdutyEnqueueResponse202 | PagerdutyEnqueueResponse400 | PagerdutyEnqueueResponse429 | PagerdutyEnqueueResponse503]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: PagerdutyEnqueueBody,
) -> (
    PagerdutyEnqueueResponse202
    | PagerdutyEnqueueResponse400
    | PagerdutyEnqueueResponse429
    | PagerdutyEnqueueResponse503
    | None
):
    """Pagerduty Enqueue

    Args:
        body (PagerdutyEnqueueBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PagerdutyEnqueueResponse202 | PagerdutyEnqueueResponse400 | PagerdutyEnqueueResponse429 | PagerdutyEnqueueResponse503
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: PagerdutyEnqueueBody,
) -> Response[
    PagerdutyEnqueueResponse202
    | PagerdutyEnqueueResponse400
    | PagerdutyEnqueueResponse429
    | PagerdutyEnqueueResponse503
]:
    """Pagerduty Enqueue

    Args:
        body (PagerdutyEnqueueBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PagerdutyEnqueueResponse202 | PagerdutyEnqueueResponse400 | PagerdutyEnqueueResponse429 | PagerdutyEnqueueResponse503]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: PagerdutyEnqueueBody,
) -> (
    PagerdutyEnqueueResponse202
    | PagerdutyEnqueueResponse400
    | PagerdutyEnqueueResponse429
    | PagerdutyEnqueueResponse503
    | None
):
    """Pagerduty Enqueue

    Args:
        body (PagerdutyEnqueueBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PagerdutyEnqueueResponse202 | PagerdutyEnqueueResponse400 | PagerdutyEnqueueResponse429 | PagerdutyEnqueueResponse503
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
