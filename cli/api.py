"""``tocsin api``: the HTTP API (uvicorn)."""

from __future__ import annotations

from app.settings import Settings
from cli.common import signing_keys

# How long an idle keep-alive connection stays open: longer than clients keep theirs (httpx and
# aiohttp close theirs after 5 s), so a client never sends on a connection the server is closing
# (the request would get no answer, and a publisher could not tell whether its event was accepted).
# As nginx's keepalive_timeout; uvicorn's own default is 5 s.
KEEP_ALIVE_SECONDS = 75


def cmd_api(settings: Settings) -> None:
    import asyncio

    import uvicorn

    from api.main import create_app
    from app.kafka.topics import ensure_topics_when_reachable
    from app.observability import tracing
    from app.observability.logthrottle import throttle_library_logs
    from tables.aiokafka_patches import short_transaction_retry
    from tables.kafka_access import check_access

    throttle_library_logs()
    short_transaction_retry()  # aiokafka's transactional producer: 2 ms, not 20, before a retry
    # nothing without an OTLP endpoint
    tracing.setup(
        settings.otlp_endpoint, settings.trace_sample_ratio, "api", trust_callers=settings.trace_trust_callers
    )
    app = create_app(settings, signing_keys(settings))  # a bad key stops here, before anything starts
    # Wait for the broker before uvicorn installs its signal handlers: during its lifespan
    # startup uvicorn only notes a SIGTERM, so a wait there could not be stopped.
    asyncio.run(ensure_topics_when_reachable(settings, check_access))
    uvicorn.run(
        app,
        host=settings.api_host,
        port=settings.api_port,
        loop="uvloop",
        http="httptools",
        # uvicorn would believe X-Forwarded-For from 127.0.0.1 by default; the app reads it from
        # TOCSIN_TRUSTED_PROXIES only (api/fastpath.py).
        proxy_headers=False,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        access_log=False,  # api/fastpath.py writes one structured line per request instead (TOCSIN_ACCESS_LOG)
        # uvicorn's own lines go to the root handler in the process's format (app/observability/logs.py)
        log_config=None,
        log_level=settings.log_level.lower(),
    )
