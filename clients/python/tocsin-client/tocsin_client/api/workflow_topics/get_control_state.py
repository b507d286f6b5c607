from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.control_state_out import ControlStateOut
from ...models.error_out import ErrorOut
from ...models.get_control_state_status import GetControlStateStatus
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org_id: str,
    topic: str,
    *,
    partition_key: str,
    status: GetControlStateStatus | Unset = GetControlStateStatus.ACTUAL,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["partition_key"] = partition_key

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/organizations/{org_id}/workflow_topics/{topic}/control_state".format(
            org_id=quote(str(org_id), safe=""),
            topic=quote(str(topic), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ControlStateOut | ErrorOut | None:
    if response.status_code == 200:
        response_200 = ControlStateOut.from_dict(response.json())

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
) -> Response[ControlStateOut | ErrorOut]:
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
    partition_key: str,
    status: GetControlStateStatus | Unset = GetControlStateStatus.ACTUAL,
) -> Response[ControlStateOut | ErrorOut]:
    """Control State

     The control state of one partition key, as the worker last reported it (it lags the
    worker by at most a trace batch). A partition key never seen has the empty state.

    Args:
        org_id (str):
        topic (str):
        partition_key (str):
        status (GetControlStateStatus | Unset):  Default: GetControlStateStatus.ACTUAL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ControlStateOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        topic=topic,
        partition_key=partition_key,
        status=status,
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
    partition_key: str,
    status: GetControlStateStatus | Unset = GetControlStateStatus.ACTUAL,
) -> ControlStateOut | ErrorOut | None:
    """Control State

     The control state of one partition key, as the worker last reported it (it lags the
    worker by at most a trace batch). A partition key never seen has the empty state.

    Args:
        org_id (str):
        topic (str):
        partition_key (str):
        status (GetControlStateStatus | Unset):  Default: GetControlStateStatus.ACTUAL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ControlStateOut | ErrorOut
    """

    return sync_detailed(
        org_id=org_id,
        topic=topic,
        client=client,
        partition_key=partition_key,
        status=status,
    ).parsed


async def asyncio_detailed(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    partition_key: str,
    status: GetControlStateStatus | Unset = GetControlStateStatus.ACTUAL,
) -> Response[ControlStateOut | ErrorOut]:
    """Control State

     The control state of one partition key, as the worker last reported it (it lags the
    worker by at most a trace batch). A partition key never seen has the empty state.

    Args:
        org_id (str):
        topic (str):
        partition_key (str):
        status (GetControlStateStatus | Unset):  Default: GetControlStateStatus.ACTUAL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ControlStateOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        topic=topic,
        partition_key=partition_key,
        status=status,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    partition_key: str,
    status: GetControlStateStatus | Unset = GetControlStateStatus.ACTUAL,
) -> ControlStateOut | ErrorOut | None:
    """Control State

     The control state of one partition key, as the worker last reported it (it lags the
    worker by at most a trace batch). A partition key never seen has the empty state.

    Args:
        org_id (str):
        topic (str):
        partition_key (str):
        status (GetControlStateStatus | Unset):  Default: GetControlStateStatus.ACTUAL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ControlStateOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            topic=topic,
            client=client,
            partition_key=partition_key,
            status=status,
        )
    ).parsed
