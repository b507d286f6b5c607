from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...types import Response


def _get_kwargs(
    account_id: str,
    token_id: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/v1/service_accounts/{account_id}/access_tokens/{token_id}".format(
            account_id=quote(str(account_id), safe=""),
            token_id=quote(str(token_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ErrorOut | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

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
) -> Response[Any | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account_id: str,
    token_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | ErrorOut]:
    """Delete Token Short Path

     The short path of the token's delete: the organization is the account's own.

    Args:
        account_id (str):
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorOut]
    """

    kwargs = _get_kwargs(
        account_id=account_id,
        token_id=token_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account_id: str,
    token_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | ErrorOut | None:
    """Delete Token Short Path

     The short path of the token's delete: the organization is the account's own.

    Args:
        account_id (str):
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorOut
    """

    return sync_detailed(
        account_id=account_id,
        token_id=token_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    account_id: str,
    token_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Any | ErrorOut]:
    """Delete Token Short Path

     The short path of the token's delete: the organization is the account's own.

    Args:
        account_id (str):
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorOut]
    """

    kwargs = _get_kwargs(
        account_id=account_id,
        token_id=token_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account_id: str,
    token_id: str,
    *,
    client: AuthenticatedClient | Client,
) -> Any | ErrorOut | None:
    """Delete Token Short Path

     The short path of the token's delete: the organization is the account's own.

    Args:
        account_id (str):
        token_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorOut
    """

    return (
        await asyncio_detailed(
            account_id=account_id,
            token_id=token_id,
            client=client,
        )
    ).parsed
