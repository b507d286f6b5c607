from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.o_auth_error_out import OAuthErrorOut
from ...models.token_exchange_body import TokenExchangeBody
from ...models.token_exchange_out import TokenExchangeOut
from ...types import Response


def _get_kwargs(
    credential_id: str,
    *,
    body: TokenExchangeBody,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/auth/workload-identity/{credential_id}/token".format(
            credential_id=quote(str(credential_id), safe=""),
        ),
    }

    _kwargs["data"] = body.to_dict()
    headers["Content-Type"] = "application/x-www-form-urlencoded"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | OAuthErrorOut | TokenExchangeOut | None:
    if response.status_code == 200:
        response_200 = TokenExchangeOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = OAuthErrorOut.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = OAuthErrorOut.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = OAuthErrorOut.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = ErrorOut.from_dict(response.json())

        return response_413

    if response.status_code == 429:
        response_429 = OAuthErrorOut.from_dict(response.json())

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
) -> Response[ErrorOut | OAuthErrorOut | TokenExchangeOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    credential_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TokenExchangeBody,
) -> Response[ErrorOut | OAuthErrorOut | TokenExchangeOut]:
    """Token Exchange

     RFC 8693 token exchange of an external OIDC JWT for a one-hour access token.

    Args:
        credential_id (str):
        body (TokenExchangeBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | OAuthErrorOut | TokenExchangeOut]
    """

    kwargs = _get_kwargs(
        credential_id=credential_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    credential_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TokenExchangeBody,
) -> ErrorOut | OAuthErrorOut | TokenExchangeOut | None:
    """Token Exchange

     RFC 8693 token exchange of an external OIDC JWT for a one-hour access token.

    Args:
        credential_id (str):
        body (TokenExchangeBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | OAuthErrorOut | TokenExchangeOut
    """

    return sync_detailed(
        credential_id=credential_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    credential_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TokenExchangeBody,
) -> Response[ErrorOut | OAuthErrorOut | TokenExchangeOut]:
    """Token Exchange

     RFC 8693 token exchange of an external OIDC JWT for a one-hour access token.

    Args:
        credential_id (str):
        body (TokenExchangeBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | OAuthErrorOut | TokenExchangeOut]
    """

    kwargs = _get_kwargs(
        credential_id=credential_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    credential_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: TokenExchangeBody,
) -> ErrorOut | OAuthErrorOut | TokenExchangeOut | None:
    """Token Exchange

     RFC 8693 token exchange of an external OIDC JWT for a one-hour access token.

    Args:
        credential_id (str):
        body (TokenExchangeBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | OAuthErrorOut | TokenExchangeOut
    """

    return (
        await asyncio_detailed(
            credential_id=credential_id,
            client=client,
            body=body,
        )
    ).parsed
