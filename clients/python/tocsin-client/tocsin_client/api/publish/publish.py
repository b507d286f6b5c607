from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.publish_accepted import PublishAccepted
from ...models.publish_json_body import PublishJsonBody
from ...models.publish_json_publish_request import PublishJsonPublishRequest
from ...types import Response


def _get_kwargs(
    org_id: str,
    topic: str,
    *,
    body: PublishJsonBody | PublishJsonPublishRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/organizations/{org_id}/workflow_topics/{topic}/publish".format(
            org_id=quote(str(org_id), safe=""),
            topic=quote(str(topic), safe=""),
        ),
    }

    if isinstance(body, PublishJsonBody):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/cloudevents+json"
    if isinstance(body, PublishJsonPublishRequest):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | PublishAccepted | None:
    if response.status_code == 202:
        response_202 = PublishAccepted.from_dict(response.json())

        return response_202

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

    if response.status_code == 429:
        response_429 = ErrorOut.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ErrorOut.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorOut | PublishAccepted]:
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
    body: PublishJsonBody | PublishJsonPublishRequest,
) -> Response[ErrorOut | PublishAccepted]:
    """Publish

    Args:
        org_id (str):
        topic (str):
        body (PublishJsonBody):
        body (PublishJsonPublishRequest): The body of ``POST
            .../workflow_topics/{topic}/publish``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | PublishAccepted]
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
    body: PublishJsonBody | PublishJsonPublishRequest,
) -> ErrorOut | PublishAccepted | None:
    """Publish

    Args:
        org_id (str):
        topic (str):
        body (PublishJsonBody):
        body (PublishJsonPublishRequest): The body of ``POST
            .../workflow_topics/{topic}/publish``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | PublishAccepted
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
    body: PublishJsonBody | PublishJsonPublishRequest,
) -> Response[ErrorOut | PublishAccepted]:
    """Publish

    Args:
        org_id (str):
        topic (str):
        body (PublishJsonBody):
        body (PublishJsonPublishRequest): The body of ``POST
            .../workflow_topics/{topic}/publish``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | PublishAccepted]
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
    body: PublishJsonBody | PublishJsonPublishRequest,
) -> ErrorOut | PublishAccepted | None:
    """Publish

    Args:
        org_id (str):
        topic (str):
        body (PublishJsonBody):
        body (PublishJsonPublishRequest): The body of ``POST
            .../workflow_topics/{topic}/publish``.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | PublishAccepted
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            topic=topic,
            client=client,
            body=body,
        )
    ).parsed
