from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.token_created_out import TokenCreatedOut
from ...models.token_in import TokenIn
from ...types import UNSET, Response, Unset


def _get_kwargs(
    org_id: str,
    account_id: str,
    *,
    body: None | TokenIn | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/organizations/{org_id}/service_accounts/{account_id}/access_tokens".format(
            org_id=quote(str(org_id), safe=""),
            account_id=quote(str(account_id), safe=""),
        ),
    }

    if isinstance(body, TokenIn):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | TokenCreatedOut | None:
    if response.status_code == 201:
        response_201 = TokenCreatedOut.from_dict(response.json())

        return response_201

    if response.status_code == 401:
        response_401 = ErrorOut.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorOut.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorOut.from_dict(response.json())

        return response_404

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
) -> Response[ErrorOut | TokenCreatedOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    org_id: str,
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | TokenIn | Unset = UNSET,
) -> Response[ErrorOut | TokenCreatedOut]:
    """Create Service Account Token

     Every field is optional (``{name?, expires_in?}``): no body at all is ``{}``.

    Args:
        org_id (str):
        account_id (str):
        body (None | TokenIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TokenCreatedOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        account_id=account_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    org_id: str,
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | TokenIn | Unset = UNSET,
) -> ErrorOut | TokenCreatedOut | None:
    """Create Service Account Token

     Every field is optional (``{name?, expires_in?}``): no body at all is ``{}``.

    Args:
        org_id (str):
        account_id (str):
        body (None | TokenIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TokenCreatedOut
    """

    return sync_detailed(
        org_id=org_id,
        account_id=account_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    org_id: str,
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | TokenIn | Unset = UNSET,
) -> Response[ErrorOut | TokenCreatedOut]:
    """Create Service Account Token

     Every field is optional (``{name?, expires_in?}``): no body at all is ``{}``.

    Args:
        org_id (str):
        account_id (str):
        body (None | TokenIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TokenCreatedOut]
    """

    kwargs = _get_kwargs(
        org_id=org_id,
        account_id=account_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    org_id: str,
    account_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: None | TokenIn | Unset = UNSET,
) -> ErrorOut | TokenCreatedOut | None:
    """Create Service Account Token

     Every field is optional (``{name?, expires_in?}``): no body at all is ``{}``.

    Args:
        org_id (str):
        account_id (str):
        body (None | TokenIn | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TokenCreatedOut
    """

    return (
        await asyncio_detailed(
            org_id=org_id,
            account_id=account_id,
            client=client,
            body=body,
        )
    ).parsed
