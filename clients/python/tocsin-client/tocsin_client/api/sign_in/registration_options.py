from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.options_out import OptionsOut
from ...models.registration_options_in import RegistrationOptionsIn
from ...types import Response


def _get_kwargs(
    *,
    body: RegistrationOptionsIn,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/signin/webauthn/registration:options",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | OptionsOut | None:
    if response.status_code == 200:
        response_200 = OptionsOut.from_dict(response.json())

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
) -> Response[ErrorOut | OptionsOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: RegistrationOptionsIn,
) -> Response[ErrorOut | OptionsOut]:
    """Registration Options

     Start registering an authenticator (one more: a user may have several).

    Args:
        body (RegistrationOptionsIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | OptionsOut]
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
    client: AuthenticatedClient,
    body: RegistrationOptionsIn,
) -> ErrorOut | OptionsOut | None:
    """Registration Options

     Start registering an authenticator (one more: a user may have several).

    Args:
        body (RegistrationOptionsIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | OptionsOut
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: RegistrationOptionsIn,
) -> Response[ErrorOut | OptionsOut]:
    """Registration Options

     Start registering an authenticator (one more: a user may have several).

    Args:
        body (RegistrationOptionsIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | OptionsOut]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: RegistrationOptionsIn,
) -> ErrorOut | OptionsOut | None:
    """Registration Options

     Start registering an authenticator (one more: a user may have several).

    Args:
        body (RegistrationOptionsIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | OptionsOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
