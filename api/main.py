"""The FastAPI application of one API replica."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import docs_pages, errors, openapi_doc
from api.body import BodyLimitMiddleware, bound_json_bodies
from api.console import pages as console_pages
from api.console import signin_pages as console_signin
from api.deps import document_permissions
from api.fastpath import TocsinAPI, request_id
from api.formats import alertmanager, pagerduty
from api.routes import (
    accounts,
    bindings,
    deliveries,
    events,
    federation,
    groups,
    health,
    incidents,
    integration_keys,
    operation_books,
    organization,
    publish,
    roles,
    sessions,
    signin,
    signin_links,
    signin_webauthn,
    topics,
    workflows,
)
from api.state import ApiState, new_producer, new_publisher, record_token_use, register_caches, tune_gc
from app.caches import TTLCache
from app.domain.shared.rate_limit import RateLimiter
from app.identity.federation import Federation
from app.identity.signing_keys import SigningKeys, load_signing_keys
from app.kafka.config_changes import follow_changes
from app.settings import Settings, get_settings
from app.store import retention
from app.store.db import create_engine, sessionmaker

log = logging.getLogger(__name__)


class RequestIdMiddleware:
    """Send the request's ``X-Request-ID`` (chosen by ``TocsinAPI``: api/fastpath.py ``request_id``)
    with the response (a pure ASGI middleware: cheap on the hot path)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid: bytes = scope.get("tocsin.request_id") or request_id(scope)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", rid)]
            await send(message)

        await self.app(scope, receive, send_with_id)


async def _follow(state: ApiState) -> None:
    while True:
        try:
            await follow_changes(state.settings, state.invalidate, state.changes_followed)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - keep following; the TTL bounds staleness meanwhile
            log.warning("config-changes follower restarting after error: %s", exc)
            await asyncio.sleep(1.0)


def create_app(settings: Settings | None = None, signing_keys: SigningKeys | None = None) -> FastAPI:
    """The app; ``signing_keys`` as ``tocsin api`` loaded them, else loaded (or created) at start."""
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # the topics exist: `tocsin api` waits for the broker and creates them before serving
        keys = signing_keys or load_signing_keys(settings)
        producer = new_producer(settings)
        await producer.start()
        # Batches are written in transactions whatever TOCSIN_PUBLISH_TRANSACTIONS says (all or
        # nothing); with it, single publishes share the same transactional producers.
        publisher = new_publisher(settings)
        try:
            await publisher.start()
        except BaseException:
            await producer.stop()
            raise
        engine = create_engine(settings.effective_database_url)
        sessions = sessionmaker(engine)
        state = ApiState(
            settings=settings,
            engine=engine,
            sessions=sessions,
            federation=Federation(settings, sessions, keys),
            producer=producer,
            publisher=publisher if settings.transactions.publish_transactions else None,
            batch_publisher=publisher,
            principals=TTLCache(settings.auth_cache_seconds, maxsize=settings.memory.auth_cache_size),
            topics=TTLCache(settings.config_cache_seconds, maxsize=settings.memory.config_cache_size),
            publish_limits=RateLimiter(
                settings.publish_rate_per_second, settings.publish_burst, max_keys=settings.memory.rate_limit_keys
            ),
        )
        register_caches(state)
        state.tasks += [
            asyncio.create_task(_follow(state)),
            asyncio.create_task(record_token_use(state)),
            asyncio.create_task(state.federation.run_flusher()),
            asyncio.create_task(retention.run_periodically(engine, settings)),  # TOCSIN_*_RETENTION_DAYS
        ]
        app.state.tocsin = state
        tune_gc()
        try:
            yield
        finally:
            for task in state.tasks:
                task.cancel()
            await asyncio.gather(*state.tasks, return_exceptions=True)
            await state.federation.flush_attempts()
            await state.federation.fetcher.aclose()
            if state.batch_publisher is not None:
                await state.batch_publisher.stop()
            await state.producer.stop()  # the one in use (api/state.py may have replaced the first)
            await engine.dispose()

    app = TocsinAPI(  # publish fast path outermost
        title="Tocsin",
        version="0.1.0",
        lifespan=lifespan,
        generate_unique_id_function=openapi_doc.operation_id,
        docs_url=None,  # FastAPI's pages load Swagger UI and ReDoc from a CDN: api/docs_pages.py serves its own
        redoc_url=None,
    )
    app.log_requests = settings.access_log
    app.trusted_proxies = settings.trusted_proxies
    errors.install(app)
    openapi_doc.install(app)  # operationIds above, the bearer scheme here
    docs_pages.install(app)  # /docs and /redoc with their files served here, under a Content-Security-Policy
    routers = (
        health.router,
        organization.router,
        accounts.service_accounts,
        accounts.users,
        accounts.short,
        federation.router,
        groups.router,
        roles.router,
        bindings.router,
        topics.router,
        topics.shared_router,
        events.topic_router,
        publish.router,
        alertmanager.router,
        pagerduty.router,
        integration_keys.router,
        operation_books.router,
        workflows.router,
        incidents.router,
        events.router,
        deliveries.router,
        signin.router,
        signin_links.router,
        sessions.router,
        signin_webauthn.router,
    )
    # 422 for numbers the pipeline cannot carry and bodies nested deeper than a publish's, before storing
    bound_json_bodies(routers, settings.limits.publish_data_depth)
    for router in routers:
        document_permissions(router.routes)
        app.include_router(router)
    app.include_router(federation.exchange_router, prefix=settings.auth_prefix)
    app.include_router(console_signin.router)  # the console (api/console/): pages, not in the OpenAPI document
    app.include_router(console_pages.router)
    app.add_middleware(  # 413 VAL-002, chunked too
        BodyLimitMiddleware, max_bytes=settings.limits.body_bytes
    )
    app.add_middleware(RequestIdMiddleware)
    return app
