from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_accepted import BatchAccepted
from ...models.error_out import ErrorOut
from ...models.publish_batch_json_body_item import PublishBatchJsonBodyItem
from ...models.publish_batch_json_publish_request import PublishBatchJsonPublishRequest
from ...types import Response


def _get_kwargs(
    org_id: str,
    topic: str,
    *,
    body: list[PublishBatchJsonBodyItem] | list[PublishBatchJsonPublishRequest],
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/organizations/{org_id}/workflow_topics/{topic}/publish:batch".format(
            org_id=quote(str(org_id), safe=""),
            topic=quote(str(topic), safe=""),
        ),
    }

    if isinstance(body, list) and all(
        isinstance(item, PublishBatchJsonBodyItem) for item in body
    ):
        _kwargs["json"] = []
        for body_item_data in body:
            body_item = body_item_data.to_dict()
            _kwargs["json"].append(body_item)

        headers["Content-Type"] = "application/cloudevents-batch+json"
    if isinstance(body, list) and all(
        isinstance(item, PublishBatchJsonPublishRequest) for item in body
    ):
        _kwargs["json"] = []
        for body_item_data in body:
            body_item = body_item_data.to_dict()
            _kwargs["json"].append(body_item)

        headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> BatchAccepted | ErrorOut | None:
    if response.status_code == 202:
        response_202 = BatchAccepted.from_dict(response.json())

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
) -> Response[BatchAccepted | ErrorOut]:
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
    body: list[PublishBatchJsonBodyItem] | list[PublishBatchJsonPublishRequest],
) -> Response[BatchAccepted | ErrorOut]:
    """Publish Batch

    Args:
        org_id (str):
        topic (str):
        body (list[PublishBatchJsonBodyItem]):
        body (list[PublishBatchJsonPublishRequest]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchAccepted | ErrorOut]
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
    body: list[PublishBatchJsonBodyItem] | list[PublishBatchJsonPublishRequest],
) -> BatchAccepted | ErrorOut | None:
    """Publish Batch

    Args:
        org_id (str):
        topic (str):
        body (list[PublishBatchJsonBodyItem]):
        body (list[PublishBatchJsonPublishRequest]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchAccepted | ErrorOut
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
    body: list[PublishBatchJsonBodyItem] | list[PublishBatchJsonPublishRequest],
) -> Response[BatchAccepted | ErrorOut]:
    """Publish Batch

    Args:
        org_id (str):
        topic (str):
        body (list[PublishBatchJsonBodyItem]):
        body (list[PublishBatchJsonPublishRequest]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchAccepted | ErrorOut]
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
    body: list[PublishBatchJsonBodyItem] | list[PublishBatchJsonPublishRequest],
) -> BatchAccepted | ErrorOut | None:
    """Publish Batch

    Args:
        org_id (str):
        topic (str):
        body (list[PublishBatchJsonBodyItem]):
        body (list[PublishBatchJsonPublishRequest]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchAccepted | ErrorOut
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            topic=topic,
            client=client,
            body=body,
        )
    ).parsed
