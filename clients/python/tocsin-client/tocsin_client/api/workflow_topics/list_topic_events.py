import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.list_topic_events_decision_type_0 import ListTopicEventsDecisionType0
from ...models.list_topic_events_order import ListTopicEventsOrder
from ...models.list_topic_events_status_type_0 import ListTopicEventsStatusType0
from ...models.page_topic_event_out import PageTopicEventOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org_id: str,
    topic: str,
    *,
    order: ListTopicEventsOrder | Unset = ListTopicEventsOrder.NEWEST,
    status: ListTopicEventsStatusType0 | None | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    decision: ListTopicEventsDecisionType0 | None | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
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
    elif isinstance(status, ListTopicEventsStatusType0):
        json_status = status.value
    else:
        json_status = status
    params["status"] = json_status

    json_partition_key: None | str | Unset
    if isinstance(partition_key, Unset):
        json_partition_key = UNSET
    else:
        json_partition_key = partition_key
    params["partition_key"] = json_partition_key

    json_decision: None | str | Unset
    if isinstance(decision, Unset):
        json_decision = UNSET
    elif isinstance(decision, ListTopicEventsDecisionType0):
        json_decision = decision.value
    else:
        json_decision = decision
    params["decision"] = json_decision

    json_since: None | str | Unset
    if isinstance(since, Unset):
        json_since = UNSET
    elif isinstance(since, datetime.datetime):
        json_since = since.isoformat()
    else:
        json_since = since
    params["since"] = json_since

    json_until: None | str | Unset
    if isinstance(until, Unset):
        json_until = UNSET
    elif isinstance(until, datetime.datetime):
        json_until = until.isoformat()
    else:
        json_until = until
    params["until"] = json_until

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
        "url": "/v1/organizations/{org_id}/workflow_topics/{topic}/events".format(
            org_id=quote(str(org_id), safe=""),
            topic=quote(str(topic), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | PageTopicEventOut | None:
    if response.status_code == 200:
        response_200 = PageTopicEventOut.from_dict(response.json())

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
) -> Response[ErrorOut | PageTopicEventOut]:
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
    order: ListTopicEventsOrder | Unset = ListTopicEventsOrder.NEWEST,
    status: ListTopicEventsStatusType0 | None | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    decision: ListTopicEventsDecisionType0 | None | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> Response[ErrorOut | PageTopicEventOut]:
    """List Topic Events

     The topic's events, newest first by the time they were accepted (``?order=oldest``: oldest
    first). Permission ``organization.event:list`` on the topic's names (a binding on the
    organization covers them).

    Args:
        org_id (str):
        topic (str):
        order (ListTopicEventsOrder | Unset): newest first (the default) or oldest first Default:
            ListTopicEventsOrder.NEWEST.
        status (ListTopicEventsStatusType0 | None | Unset): the publish status
        partition_key (None | str | Unset):
        decision (ListTopicEventsDecisionType0 | None | Unset): the control decision
        since (datetime.datetime | None | Unset): accepted at or after (RFC 3339)
        until (datetime.datetime | None | Unset): accepted before (RFC 3339)
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | PageTopicEventOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        topic=topic,
        order=order,
        status=status,
        partition_key=partition_key,
        decision=decision,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
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
    order: ListTopicEventsOrder | Unset = ListTopicEventsOrder.NEWEST,
    status: ListTopicEventsStatusType0 | None | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    decision: ListTopicEventsDecisionType0 | None | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> ErrorOut | PageTopicEventOut | None:
    """List Topic Events

     The topic's events, newest first by the time they were accepted (``?order=oldest``: oldest
    first). Permission ``organization.event:list`` on the topic's names (a binding on the
    organization covers them).

    Args:
        org_id (str):
        topic (str):
        order (ListTopicEventsOrder | Unset): newest first (the default) or oldest first Default:
            ListTopicEventsOrder.NEWEST.
        status (ListTopicEventsStatusType0 | None | Unset): the publish status
        partition_key (None | str | Unset):
        decision (ListTopicEventsDecisionType0 | None | Unset): the control decision
        since (datetime.datetime | None | Unset): accepted at or after (RFC 3339)
        until (datetime.datetime | None | Unset): accepted before (RFC 3339)
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | PageTopicEventOut
    """

    return sync_detailed(
        org_id=org_id,
        topic=topic,
        client=client,
        order=order,
        status=status,
        partition_key=partition_key,
        decision=decision,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    order: ListTopicEventsOrder | Unset = ListTopicEventsOrder.NEWEST,
    status: ListTopicEventsStatusType0 | None | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    decision: ListTopicEventsDecisionType0 | None | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> Response[ErrorOut | PageTopicEventOut]:
    """List Topic Events

     The topic's events, newest first by the time they were accepted (``?order=oldest``: oldest
    first). Permission ``organization.event:list`` on the topic's names (a binding on the
    organization covers them).

    Args:
        org_id (str):
        topic (str):
        order (ListTopicEventsOrder | Unset): newest first (the default) or oldest first Default:
            ListTopicEventsOrder.NEWEST.
        status (ListTopicEventsStatusType0 | None | Unset): the publish status
        partition_key (None | str | Unset):
        decision (ListTopicEventsDecisionType0 | None | Unset): the control decision
        since (datetime.datetime | None | Unset): accepted at or after (RFC 3339)
        until (datetime.datetime | None | Unset): accepted before (RFC 3339)
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | PageTopicEventOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        topic=topic,
        order=order,
        status=status,
        partition_key=partition_key,
        decision=decision,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org_id: str,
    topic: str,
    *,
    client: AuthenticatedClient | Client,
    order: ListTopicEventsOrder | Unset = ListTopicEventsOrder.NEWEST,
    status: ListTopicEventsStatusType0 | None | Unset = UNSET,
    partition_key: None | str | Unset = UNSET,
    decision: ListTopicEventsDecisionType0 | None | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    until: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 50,
    cursor: None | str | Unset = UNSET,
) -> ErrorOut | PageTopicEventOut | None:
    """List Topic Events

     The topic's events, newest first by the time they were accepted (``?order=oldest``: oldest
    first). Permission ``organization.event:list`` on the topic's names (a binding on the
    organization covers them).

    Args:
        org_id (str):
        topic (str):
        order (ListTopicEventsOrder | Unset): newest first (the default) or oldest first Default:
            ListTopicEventsOrder.NEWEST.
        status (ListTopicEventsStatusType0 | None | Unset): the publish status
        partition_key (None | str | Unset):
        decision (ListTopicEventsDecisionType0 | None | Unset): the control decision
        since (datetime.datetime | None | Unset): accepted at or after (RFC 3339)
        until (datetime.datetime | None | Unset): accepted before (RFC 3339)
        limit (int | Unset): items per page Default: 50.
        cursor (None | str | Unset): next_cursor of the previous page

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | PageTopicEventOut
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            topic=topic,
            client=client,
            order=order,
            status=status,
            partition_key=partition_key,
            decision=decision,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
