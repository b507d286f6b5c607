from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.list_incidents_mode_type_0 import ListIncidentsModeType0
from ...models.list_incidents_order import ListIncidentsOrder
from ...models.list_incidents_status_type_0 import ListIncidentsStatusType0
from ...models.page_incident_out import PageIncidentOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org_id: str,
    *,
    order: ListIncidentsOrder | Unset = ListIncidentsOrder.NEWEST,
    status: ListIncidentsStatusType0 | None | Unset = UNSET,
    mode: ListIncidentsModeType0 | None | Unset = UNSET,
    topic: None | str | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_order: str | Unset = UNSET
    if not isinstance(order, Unset):
        json_order = order.value

    params["order"] = json_order

    json_status: None | str | Unset
    if isinstance(status, Unset):
        json_status = UNSET
    elif isinstance(status, ListIncidentsStatusType0):
        json_status = status.value
    else:
        json_status = status
    params["status"] = json_status

    json_mode: None | str | Unset
    if isinstance(mode, Unset):
        json_mode = UNSET
    elif isinstance(mode, ListIncidentsModeType0):
        json_mode = mode.value
    else:
        json_mode = mode
    params["mode"] = json_mode

    json_topic: None | str | Unset
    if isinstance(topic, Unset):
        json_topic = UNSET
    else:
        json_topic = topic
    params["topic"] = json_topic

    json_partition_key: None | str | Unset
    if isinstance(partition_key, Unset):
        json_partition_key = UNSET
    else:
        json_partition_key = partition_key
    params["partition_key"] = json_partition_key

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/organizations/{org_id}/incidents".format(
            org_id=quote(str(org_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | PageIncidentOut | None:
    if response.status_code == 200:
        response_200 = PageIncidentOut.from_dict(response.json())

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
) -> Response[ErrorOut | PageIncidentOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org_id: str,
    *,
    client: AuthenticatedClient | Client,
    order: ListIncidentsOrder | Unset = ListIncidentsOrder.NEWEST,
    status: ListIncidentsStatusType0 | None | Unset = UNSET,
    mode: ListIncidentsModeType0 | None | Unset = UNSET,
    topic: None | str | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> Response[ErrorOut | PageIncidentOut]:
    """List Incidents

     The incidents the caller sees, newest first by ``created_at`` (``?order=oldest``: oldest
    first), ``limit`` of them a page: visibility is applied before the page is cut, so a member gets
    full pages of its incidents, not a page thinned afterwards.

    Args:
        org_id (str):
        order (ListIncidentsOrder | Unset): newest first (the default) or oldest first Default:
            ListIncidentsOrder.NEWEST.
        status (ListIncidentsStatusType0 | None | Unset): only incidents in this status
        mode (ListIncidentsModeType0 | None | Unset): only incidents of this operating mode
        topic (None | str | Unset): a topic's id or key
        partition_key (None | str | Unset):
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | PageIncidentOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        order=order,
        status=status,
        mode=mode,
        topic=topic,
        partition_key=partition_key,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org_id: str,
    *,
    client: AuthenticatedClient | Client,
    order: ListIncidentsOrder | Unset = ListIncidentsOrder.NEWEST,
    status: ListIncidentsStatusType0 | None | Unset = UNSET,
    mode: ListIncidentsModeType0 | None | Unset = UNSET,
    topic: None | str | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> ErrorOut | PageIncidentOut | None:
    """List Incidents

     The incidents the caller sees, newest first by ``created_at`` (``?order=oldest``: oldest
    first), ``limit`` of them a page: visibility is applied before the page is cut, so a member gets
    full pages of its incidents, not a page thinned afterwards.

    Args:
        org_id (str):
        order (ListIncidentsOrder | Unset): newest first (the default) or oldest first Default:
            ListIncidentsOrder.NEWEST.
        status (ListIncidentsStatusType0 | None | Unset): only incidents in this status
        mode (ListIncidentsModeType0 | None | Unset): only incidents of this operating mode
        topic (None | str | Unset): a topic's id or key
        partition_key (None | str | Unset):
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | PageIncidentOut
    """

    return sync_detailed(
        org_id=org_id,
        client=client,
        order=order,
        status=status,
        mode=mode,
        topic=topic,
        partition_key=partition_key,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    org_id: str,
    *,
    client: AuthenticatedClient | Client,
    order: ListIncidentsOrder | Unset = ListIncidentsOrder.NEWEST,
    status: ListIncidentsStatusType0 | None | Unset = UNSET,
    mode: ListIncidentsModeType0 | None | Unset = UNSET,
    topic: None | str | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> Response[ErrorOut | PageIncidentOut]:
    """List Incidents

     The incidents the caller sees, newest first by ``created_at`` (``?order=oldest``: oldest
    first), ``limit`` of them a page: visibility is applied before the page is cut, so a member gets
    full pages of its incidents, not a page thinned afterwards.

    Args:
        org_id (str):
        order (ListIncidentsOrder | Unset): newest first (the default) or oldest first Default:
            ListIncidentsOrder.NEWEST.
        status (ListIncidentsStatusType0 | None | Unset): only incidents in this status
        mode (ListIncidentsModeType0 | None | Unset): only incidents of this operating mode
        topic (None | str | Unset): a topic's id or key
        partition_key (None | str | Unset):
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | PageIncidentOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        order=order,
        status=status,
        mode=mode,
        topic=topic,
        partition_key=partition_key,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org_id: str,
    *,
    client: AuthenticatedClient | Client,
    order: ListIncidentsOrder | Unset = ListIncidentsOrder.NEWEST,
    status: ListIncidentsStatusType0 | None | Unset = UNSET,
    mode: ListIncidentsModeType0 | None | Unset = UNSET,
    topic: None | str | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> ErrorOut | PageIncidentOut | None:
    """List Incidents

     The incidents the caller sees, newest first by ``created_at`` (``?order=oldest``: oldest
    first), ``limit`` of them a page: visibility is applied before the page is cut, so a member gets
    full pages of its incidents, not a page thinned afterwards.

    Args:
        org_id (str):
        order (ListIncidentsOrder | Unset): newest first (the default) or oldest first Default:
            ListIncidentsOrder.NEWEST.
        status (ListIncidentsStatusType0 | None | Unset): only incidents in this status
        mode (ListIncidentsModeType0 | None | Unset): only incidents of this operating mode
        topic (None | str | Unset): a topic's id or key
        partition_key (None | str | Unset):
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | PageIncidentOut
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            client=client,
            order=order,
            status=status,
            mode=mode,
            topic=topic,
            partition_key=partition_key,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
