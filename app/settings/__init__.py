"""All configuration, from environment variables prefixed ``TOCSIN_``.

One :class:`Settings` object for every process. Settings that build one thing together are a group of
their own (a nested settings object that reads the same ``TOCSIN_*`` variables as before and builds
what its users take): :class:`~app.settings.kafka_security.KafkaSecurity`,
:class:`~app.settings.limits.InputLimits` (``PublishLimits``, ``ConfigLimits``), and in
app/settings/delivery.py the retry schedule, the e-mail relay and outbound HTTP (the executors' configs).
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.domain.iam.signing_secrets import key_problem
from app.domain.shared.client_address import Network
from app.settings.delivery import OutboundSettings, RetrySettings, SmtpSettings
from app.settings.exchange import ExchangeLimits
from app.settings.groups import grouped
from app.settings.kafka_security import KafkaSecurity
from app.settings.limits import InputLimits
from app.settings.memory import MemoryBounds
from app.settings.retention import RetentionSettings
from app.settings.transactions import PublishTransactions


class Settings(BaseSettings):
    """One settings object for every process (api, worker, cli)."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_", extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _group_by_variable(cls, values: Any) -> Any:
        """A group's setting given by its variable's name (``kafka_sasl_username=``) goes to its group."""
        return grouped(cls, values, "TOCSIN_") if isinstance(values, dict) else values

    var_dir: Path = Field(
        default=Path("var"),
        description=(
            "local state: the SQLite file, the local broker's data, the worker's RocksDB, the token signing key"
        ),
    )
    database_url: str = Field(
        default="",
        description=("the database, e.g. postgresql+asyncpg://user:pw@host/db; empty: SQLite in TOCSIN_VAR_DIR"),
    )
    kafka_bootstrap: str = Field(
        default="127.0.0.1:9092", description="the brokers, host:port,host:port (`make run` starts one at the default)"
    )
    # Kafka security (TOCSIN_KAFKA_SECURITY_PROTOCOL, …_SSL_*, …_SASL_*): one group, checked as one
    kafka_security: KafkaSecurity = Field(default_factory=KafkaSecurity)

    topic_prefix: str = Field(default="tocsin.", description="the prefix of every Kafka topic the project creates")
    # Partitions of every keyed topic and changelog: at most this many workers share the work
    # (docs/operations/partitions.md).
    publish_partitions: int = Field(
        default=12,
        ge=1,
        le=256,
        description=(
            "partitions of every keyed topic and changelog: the most workers that share the "
            "work; must equal the existing topics' count (checked at start; grown with "
            "`tocsin partitions`)"
        ),
    )
    # Replicas of every topic the project creates, and how many must have a record before an acks=all
    # write (a 202) succeeds: 3 and 2 on a three-broker cluster, so one broker can die without losing it.
    replication_factor: int = Field(
        default=1, ge=1, le=32, description="replicas of every topic the project creates (3 on a cluster)"
    )
    min_insync_replicas: int = Field(
        default=1,
        ge=1,
        le=32,
        description="replicas that must have a record before a 202 (2 on a three-broker cluster)",
    )
    worker_id: str = Field(
        default="tocsin",
        description="the workers' id: their stages' consumer groups (<id>.<stage>) and the changelogs' names",
    )
    api_host: str = Field(default="127.0.0.1", description="the address the API listens on")
    api_port: int = Field(default=8080, description="the port the API listens on")
    access_log: bool = Field(default=True, description="one `request` log line per HTTP request (API)")
    # Logs (app/observability/logs.py): one format for every process and library. auto: logfmt on a
    # terminal, JSON otherwise (a container, a file, a pipe). The level of every logger.
    log_format: Literal["auto", "json", "logfmt"] = Field(
        default="auto",
        description=("the log format of every process: json, logfmt, or auto (logfmt on a terminal, JSON otherwise)"),
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="the level of every logger"
    )
    # Tracing (app/observability/tracing.py): OTLP/HTTP base URL (spans go to {url}/v1/traces); empty:
    # the standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, else tracing is off.
    otlp_endpoint: str = Field(
        default="",
        description=(
            "the OTLP/HTTP collector's base URL (spans go to …/v1/traces); empty: OTEL_EXPORTER_OTLP_* or tracing off"
        ),
    )
    # The share of publishes the API traces (a caller's traceparent decides only when trusted, below);
    # the worker traces only events that arrive with one. Decided before any span work.
    trace_sample_ratio: float = Field(
        default=1.0,
        ge=0.0,
        le=1.0,
        description="the share of publishes the API starts a trace for, decided before any span work",
    )
    # Whether a caller's traceparent is continued and its sampled flag obeyed. False: anyone can send
    # one, so it is only linked from a trace of ours, which the ratio above decides
    # (docs/operations/tracing.md, "A caller's trace").
    trace_trust_callers: bool = Field(
        default=False,
        description="continue a caller's W3C traceparent and obey its sampled flag (callers inside your own "
        "tracing); false: the sample ratio decides, and a traced publish's span links the caller's trace",
    )
    # Input limits (TOCSIN_MAX_*, 422 VAL-001 with the failing field in details): one group.
    limits: InputLimits = Field(default_factory=InputLimits)
    # Publishes per service account and topic, per API replica (429 RATE-001 beyond, with Retry-After).
    publish_rate_per_second: float = Field(
        default=1000.0,
        gt=0,
        description=(
            "publishes per service account and topic per second, per API replica (beyond: 429 "
            "RATE-001 with Retry-After)"
        ),
    )
    publish_burst: int = Field(default=2000, ge=1, description="the burst of that publish rate limit")
    produce_timeout_seconds: float = Field(
        default=4.0,
        gt=0,
        le=30,
        description=(
            "a publish answers 503 SYS-001 after this long without the broker (with "
            "transactions: before its commit was asked for)"
        ),
    )
    producer_linger_ms: int = Field(
        default=2,
        ge=0,
        le=100,
        description=(
            "how long the API's producer holds a record to batch it with others (batches of "
            "up to 512 KiB per partition)"
        ),
    )
    # Publishes in Kafka transactions (TOCSIN_PUBLISH_TRANSACTION*, TOCSIN_TRANSACTION*): one group.
    transactions: PublishTransactions = Field(default_factory=PublishTransactions)
    auth_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        le=60,
        description=("how long a token lookup is reused (a revoked token stops within this long on every replica)"),
    )
    config_cache_seconds: float = Field(
        default=5.0, ge=0, le=300, description="upper bound on configuration staleness if a change record is missed"
    )
    sink_batch_size: int = Field(
        default=500, ge=1, description="records the incident and trace sinks store in one transaction"
    )
    sink_batch_seconds: float = Field(
        default=0.2, gt=0, description="how long the incident and trace sinks wait to fill a batch"
    )
    # Retention (TOCSIN_*_RETENTION_DAYS, TOCSIN_RETENTION_*): one group.
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    # Event control (worker).
    worker_data_dir: Path | None = Field(
        default=None,
        description=(
            "the worker's RocksDB tables, one directory per worker process; unset: TOCSIN_VAR_DIR/worker/<worker id>"
        ),
    )  # RocksDB tables; default var_dir/worker/worker_id
    # How often a sink or delivery stage commits the offsets of what it stored or delivered
    # (tables/batch_stage.py, tables/acked_stage.py): a restart repeats at most this much (deduplicated
    # by effect id). The stages with state commit once per batch, by construction.
    worker_commit_seconds: float = Field(
        default=0.5,
        gt=0,
        le=300,
        description=(
            "how often the sink and delivery stages commit the offsets of what they stored or delivered "
            "(a restart repeats at most this much, deduplicated by effect id)"
        ),
    )
    # How long the broker holds a stage's fetch when no record is waiting (records that arrive end it,
    # so a longer wait adds no latency). Kafka's own default: at 100 ms the fetches of an idle worker's
    # stages took 11 % of a core, at 500 ms 8 % (most of the rest is their loops' wake-ups).
    worker_fetch_wait_ms: int = Field(
        default=500,
        ge=10,
        le=5000,
        description="how long the broker holds a stage's fetch while no record is waiting (a record ends the wait)",
    )
    # While a stage restores its state from its changelog: one INFO line of progress this often.
    worker_recovery_log_seconds: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description=("while a stage restores its state from its changelog, one INFO line of progress this often"),
    )
    # The worker's own HTTP port: /healthz, /readyz and /metrics (0 turns it off).
    worker_host: str = Field(
        default="127.0.0.1",
        description=(
            "the address the worker's health and metrics port binds to (loopback: set 0.0.0.0 for a scraper elsewhere)"
        ),
    )
    worker_port: int = Field(
        default=6066, ge=0, le=65535, description="the worker's health and metrics port (0 turns it off)"
    )
    # One INFO line per event-control decision (ids, key, decision; never the body).
    decision_log: bool = Field(default=True, description="one `decision` log line per control decision (worker)")
    control_batch_size: int = Field(
        default=500,
        ge=1,
        le=10_000,
        description="the most records the control stage takes in one fetch and decides together",
    )
    control_batch_seconds: float = Field(
        default=0.02, gt=0, le=5, description="how long the control stage's fetch waits when no record is waiting"
    )
    control_tick_seconds: float = Field(
        default=1.0, gt=0, le=3600, description="how often the auto-resolve timer looks for due episodes"
    )
    idempotency_retention_hours: float = Field(
        default=24.0, gt=0, le=24 * 30, description="how long (event time) an idempotency key blocks a repeat"
    )
    # Memory bounds (TOCSIN_*_CACHE_SIZE, …_WINDOW_SIZE, TOCSIN_RATE_LIMIT_KEYS, TOCSIN_ROCKSDB_*): one group.
    memory: MemoryBounds = Field(default_factory=MemoryBounds)
    # Workflow actions (worker): the e-mail relay (TOCSIN_SMTP_*), the retry schedule (TOCSIN_RETRY_*),
    # outbound HTTP of webhooks and OIDC (TOCSIN_ALLOW_PRIVATE_NETWORKS, …): a group each.
    smtp: SmtpSettings = Field(default_factory=SmtpSettings)
    delivery_batch_size: int = Field(
        default=200,
        ge=1,
        le=5000,
        description="most delivery records checked together against the stored deliveries (one query)",
    )
    retry: RetrySettings = Field(default_factory=RetrySettings)
    outbound: OutboundSettings = Field(default_factory=OutboundSettings)
    # Workload-identity federation. The key signing issued tokens (app/identity/signing_keys.py): the value,
    # or a file the operator provides, else var_dir/token-signing.key created with a random key on first start.
    token_signing_key: SecretStr | None = Field(
        default=None,
        description=(
            "the key signing exchanged tokens (32+ characters), the same on every API "
            "replica; not with TOCSIN_TOKEN_SIGNING_KEY_FILE"
        ),
    )
    token_signing_key_file: Path | None = Field(
        default=None,
        description=(
            "a file holding that key (a mounted secret; must exist); neither set: "
            "TOCSIN_VAR_DIR/token-signing.key, created on first start"
        ),
    )
    # Keys still accepted when verifying (a rotation): comma-separated, and/or a file with one per line.
    token_previous_keys: SecretStr | None = Field(
        default=None, description="keys still accepted when verifying tokens, comma-separated (a rotation)"
    )
    token_previous_keys_file: Path | None = Field(
        default=None, description="a file of keys still accepted when verifying tokens, one per line"
    )
    auth_prefix: str = Field(
        default="/auth", description="the path prefix of the token exchange (…/workload-identity/{id}/token)"
    )
    # This installation's own address, as its callers reach it: a federated credential's audience
    # defaults to it. `tocsin api` and `tocsin worker` refuse to start without it (a built-in default
    # would be every installation's, and each would accept the tokens meant for the others).
    public_url: str = Field(
        default="",
        max_length=1000,
        description="this installation's address as its callers reach it (https://tocsin.example.com); "
        "a federated credential's default audience. Required by `tocsin api` and `tocsin worker`; "
        "`tocsin run` sets it to its loopback address",
    )
    default_audience: str = Field(
        default="",
        max_length=1000,
        description="a federated credential's audience when its creation names none; empty: TOCSIN_PUBLIC_URL",
    )

    @field_validator("public_url")
    @classmethod
    def _check_public_url(cls, value: str) -> str:
        value = value.strip()
        if not value:
            return ""
        try:
            parts = urlsplit(value)
            valid = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
        except ValueError:  # a port that is not a number
            valid = False
        if not valid or parts.query or parts.fragment:
            raise ValueError(
                "TOCSIN_PUBLIC_URL must be an http or https URL of this installation, "
                "without query or fragment (https://tocsin.example.com)"
            )
        return value.rstrip("/")

    @property
    def effective_default_audience(self) -> str | None:
        """A federated credential's audience when its creation names none: TOCSIN_DEFAULT_AUDIENCE,
        else TOCSIN_PUBLIC_URL; None when neither is set (the API does not start then)."""
        return self.default_audience or self.public_url or None

    def public_url_problem(self) -> str | None:
        """Why the API or the worker must not start on these settings (no public URL), or None."""
        if self.public_url:
            return None
        return (
            "TOCSIN_PUBLIC_URL is not set: set it to this installation's address as its callers reach it "
            "(https://tocsin.example.com). The default audience of federated credentials comes from it, so "
            "that no two installations accept each other's tokens (`tocsin run` sets it to its loopback "
            "address; docs/concepts/federation.md)"
        )

    @field_validator("log_format", "log_level", mode="before")
    @classmethod
    def _any_case(cls, value: object, info: ValidationInfo) -> object:
        if not isinstance(value, str):
            return value
        return value.upper() if info.field_name == "log_level" else value.lower()

    jwks_cache_seconds: float = Field(default=300.0, ge=1, description="how long an issuer's JWKS is reused")
    jwks_unknown_kid_refetch_seconds: float = Field(
        default=60.0, ge=0, description="how often an unknown `kid` may refetch an issuer's JWKS"
    )
    # Peers whose X-Forwarded-For is believed (addresses or CIDR networks, comma-separated); empty: nobody's.
    trusted_proxies: Annotated[tuple[Network, ...], NoDecode] = Field(
        default=(),
        description=(
            "addresses or CIDR networks, comma-separated, whose X-Forwarded-For gives the "
            "client address; empty: nobody's"
        ),
    )

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _parse_networks(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return tuple(ipaddress.ip_network(part.strip()) for part in value.split(",") if part.strip())
            except ValueError as exc:
                raise ValueError(
                    f"TOCSIN_TRUSTED_PROXIES: {exc} (addresses or CIDR networks, comma-separated)"
                ) from exc
        return value

    # Rate limits of the token exchange (TOCSIN_EXCHANGE_*): one group.
    exchange: ExchangeLimits = Field(default_factory=ExchangeLimits)
    # Longest subject token the exchange accepts: exp - iat and exp - now (GCP refuses over 48 h).
    max_subject_token_lifetime_seconds: int = Field(
        default=24 * 3600,
        ge=60,
        le=7 * 24 * 3600,
        description="the longest subject token the exchange accepts, as exp - iat and as exp - now",
    )

    @model_validator(mode="after")
    def _refuse_public_keys(self) -> Settings:
        if self.token_signing_key is not None and self.token_signing_key_file is not None:
            raise ValueError("set TOCSIN_TOKEN_SIGNING_KEY or TOCSIN_TOKEN_SIGNING_KEY_FILE, not both")
        if self.token_signing_key is not None:
            problem = key_problem(self.token_signing_key.get_secret_value())
            if problem is not None:
                raise ValueError(f"TOCSIN_TOKEN_SIGNING_KEY {problem}: set a random secret of 32+ characters")
        previous = self.token_previous_keys.get_secret_value() if self.token_previous_keys is not None else ""
        for position, value in enumerate(previous.split(","), start=1):
            problem = key_problem(value.strip()) if value.strip() else None
            if problem is not None:
                raise ValueError(f"TOCSIN_TOKEN_PREVIOUS_KEYS: key {position} {problem}; remove it")
        return self

    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.var_dir / 'tocsin.db').resolve()}"

    @property
    def worker_data_path(self) -> Path:
        return (self.worker_data_dir or self.var_dir / "worker" / self.worker_id).resolve()

    @property
    def effective_transactional_id(self) -> str:
        """The API process's transactional id: the setting, else ``<topic prefix>api-<host>-<port>``."""
        return self.transactions.transactional_id or f"{self.topic_prefix}api-{socket.gethostname()}-{self.api_port}"

    def topic(self, name: str) -> str:
        """Full Kafka topic name for one of the project's logical topics."""
        return f"{self.topic_prefix}{name}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
