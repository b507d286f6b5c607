"""All configuration, from environment variables prefixed ``TOCSIN_``."""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.domain.shared.client_address import Network
from app.domain.shared.retry_schedule import RetrySchedule
from app.identity.signing_keys import key_problem


class Settings(BaseSettings):
    """One settings object for every process (api, worker, cli)."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_", extra="ignore")

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
    # Kafka security (app/kafka/security.py; README, Managed Kafka), used by every Kafka client of the API,
    # the worker and the CLI. SSL and SASL_SSL verify the broker's certificate and host name against the
    # CA file (unset: the system's CAs); a client certificate (with its key, unless the file holds both)
    # for brokers that require one. SASL_* need a mechanism, a user name and a password (or a file holding it).
    kafka_security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        default="PLAINTEXT",
        description=("Kafka's security.protocol towards the brokers, for every Kafka client (guides: Managed Kafka)"),
    )
    kafka_ssl_ca_file: Path | None = Field(
        default=None,
        description=(
            "PEM file of the CA(s) that sign the brokers' certificates; unset: the system's "
            "CAs (host names are always verified)"
        ),
    )
    kafka_ssl_cert_file: Path | None = Field(default=None, description="a client certificate (mutual TLS), PEM")
    kafka_ssl_key_file: Path | None = Field(
        default=None, description="the client certificate's key, PEM (it may sit in the certificate file)"
    )
    kafka_ssl_key_password: SecretStr | None = Field(
        default=None, description="the client key's password, if it is encrypted"
    )
    kafka_sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = Field(
        default=None, description="the SASL mechanism; required with SASL_PLAINTEXT and SASL_SSL"
    )
    kafka_sasl_username: str | None = Field(default=None, description="the SASL user (Confluent Cloud: the API key)")
    kafka_sasl_password: SecretStr | None = Field(
        default=None,
        description=("the SASL password (Confluent Cloud: the API secret); or TOCSIN_KAFKA_SASL_PASSWORD_FILE"),
    )
    kafka_sasl_password_file: Path | None = Field(
        default=None, description="a file holding the SASL password (a mounted secret; a final newline is dropped)"
    )

    @field_validator("kafka_security_protocol", "kafka_sasl_mechanism", mode="before")
    @classmethod
    def _upper_kafka_names(cls, value: object) -> object:
        return value.strip().upper() or None if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check_kafka_security(self) -> Settings:
        from app.kafka.security import security_problem

        problem = security_problem(self)
        if problem is not None:
            raise ValueError(problem)
        return self

    @property
    def kafka_sasl_password_value(self) -> str | None:
        """The SASL password: TOCSIN_KAFKA_SASL_PASSWORD, or the file's content without its final newline."""
        if self.kafka_sasl_password is not None:
            return self.kafka_sasl_password.get_secret_value()
        if self.kafka_sasl_password_file is not None:
            return self.kafka_sasl_password_file.read_text(encoding="utf-8").rstrip("\r\n")
        return None

    topic_prefix: str = Field(default="tocsin.", description="the prefix of every Kafka topic the project creates")
    # Partitions of every keyed topic and changelog: at most this many workers share the work (README, Partitions).
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
        default="tocsin", description="the Faust app id: the workers' consumer group and the changelogs' names"
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
    # one, so it is only linked from a trace of ours, which the ratio above decides (docs/tracing.md).
    trace_trust_callers: bool = Field(
        default=False,
        description="continue a caller's W3C traceparent and obey its sampled flag (callers inside your own "
        "tracing); false: the sample ratio decides, and a traced publish's span links the caller's trace",
    )
    max_body_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        description="the largest request body on any route, chunked included (else 413 VAL-002)",
    )
    # Input limits (422 VAL-001 with the failing field in details; see app/domain/events/limits.py).
    max_publish_data_bytes: int = Field(
        default=64 * 1024,
        ge=2,
        le=16 * 1024 * 1024,
        description="a publish's `data` as compact JSON (else 422, field `data`)",
    )
    max_publish_data_depth: int = Field(
        default=32,
        ge=1,
        le=150,
        description=(
            "nesting of `data` and `notification.data` (else 422 with the path); other JSON "
            "bodies may nest one level more"
        ),
    )  # below the JSON parser's own 200
    max_publish_string_chars: int = Field(
        default=16_384,
        ge=1,
        le=1024 * 1024,
        description="any string or key inside `data` / `notification.data` (else 422 with the path)",
    )
    max_publish_array_items: int = Field(
        default=1000,
        ge=1,
        le=10_000,
        description=("arrays in `data`, `event_control.areas`, `attributes.target_organization_ids` (else 422)"),
    )
    max_publish_metrics: int = Field(
        default=100, ge=1, le=1000, description="entries of `event_control.metrics` (else 422)"
    )
    # A batch publish (POST .../publish:batch): at most this many publish requests, and a body of at
    # most this many bytes (each request still within max_body_bytes): 422 / 413 beyond (docs/api.md).
    max_publish_batch_items: int = Field(
        default=1000, ge=1, le=10_000, description="a batch publish's most requests (else 422)"
    )
    max_publish_batch_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description=("a batch publish's largest body (else 413); each request also within TOCSIN_MAX_BODY_BYTES"),
    )
    max_workflow_actions: int = Field(
        default=20, ge=1, le=100, description="actions per workflow (else 422, field `actions`)"
    )
    max_filter_conditions: int = Field(
        default=100, ge=1, le=100, description="conditions in a workflow filter (else 422 with the filter path)"
    )
    max_filter_values: int = Field(
        default=1000, ge=1, le=1000, description="values in a filter's IN / NOT IN list (else 422 with the filter path)"
    )
    max_bindings_per_subject: int = Field(
        default=200, ge=1, le=10_000, description="bindings in one `PUT …/iam` (else 422, field `bindings`)"
    )
    max_bindings_per_organization: int = Field(
        default=10_000, ge=1, description="resource bindings in an organization (else 422, field `bindings`)"
    )
    max_workflows_per_organization: int = Field(default=1000, ge=1, description="workflows per organization (else 422)")
    max_workflows_per_topic: int = Field(
        default=100,
        ge=1,
        description=(
            "an organization's own workflows on one topic (else 422); receivers of a shared topic count their own"
        ),
    )
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
    # Publishes in Kafka transactions (api/publisher.py): a 503 then means the event is never decided
    # (spec: "any status but 202 means not accepted"). Off: a 503 may still be decided (a record left
    # in a buffer is written later), for a few percent more throughput (docs: The publish guarantee).
    publish_transactions: bool = Field(
        default=True,
        description=(
            "publishes in Kafka transactions, so a publish answered anything but 202 is never decided "
            "(false: a 503 may still be decided)"
        ),
    )
    # The id must be unique per API
    # process and the same after its restart, so that the new process fences the old one's open
    # transaction at once. Empty: <topic prefix>api-<host name>-<api_port>.
    transactional_id: str = Field(
        default="",
        max_length=200,
        description=(
            "the API process's Kafka transactional id (lane n: <id>-n), unique per process "
            "and the same after a restart; empty: <topic prefix>api-<host>-<API port>"
        ),
    )
    # How long an API process that died in a transaction keeps it open before the broker aborts it
    # (the worker's consumers wait that long on its partitions, unless the process comes back first).
    transaction_timeout_seconds: float = Field(
        default=20.0,
        ge=1,
        le=900,
        description="after this long the broker aborts a transaction an API process left open",
    )
    # At most this many publishes in one transaction; this many transactions in progress at once
    # (one producer each, transactional ids <transactional_id>-0, -1, ...).
    publish_transaction_records: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="at most this many publishes in one transaction (a batch publish is never split)",
    )
    publish_transaction_lanes: int = Field(
        default=3, ge=1, le=16, description="transactions in progress at once per API process (one producer each)"
    )
    # A transaction costs the broker about the same whatever it holds: publishes are grouped by time,
    # one lane collecting while the others commit (api/publisher.py; measured in docs/benchmarks.md).
    publish_transaction_window_ms: float = Field(
        default=5.0,
        ge=0,
        le=100,
        description=(
            "a transaction collects publishes for this long after its oldest one arrived (the most a "
            "publish waits for it; 0: whatever is queued when a lane is free)"
        ),
    )
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
    # Retention (days; 0 keeps forever), purged by the API process every retention_interval_seconds
    # (0: never; `tocsin purge` runs one pass) in batches of retention_batch_size rows (app/store/retention.py).
    trace_retention_days: float = Field(
        default=30.0, ge=0, description="how long event trace steps are kept (0: forever)"
    )
    push_outbox_retention_days: float = Field(
        default=30.0, ge=0, description="how long the push outbox is kept (0: forever)"
    )
    exchange_retention_days: float = Field(
        default=90.0, ge=0, description="how long token-exchange records are kept (0: forever)"
    )
    audit_retention_days: float = Field(default=365.0, ge=0, description="how long the audit log is kept (0: forever)")
    retention_interval_seconds: float = Field(
        default=3600.0,
        ge=0,
        description=(
            "how often each API replica purges past retention (0: never; `tocsin purge` runs "
            "one pass; on PostgreSQL one replica at a time)"
        ),
    )
    retention_batch_size: int = Field(
        default=1000, ge=1, le=100_000, description="rows the purge deletes per short transaction"
    )
    # Event control (worker).
    worker_data_dir: Path | None = Field(
        default=None,
        description=(
            "the worker's RocksDB tables, one directory per worker process; unset: TOCSIN_VAR_DIR/worker/<worker id>"
        ),
    )  # RocksDB tables; default var_dir/worker/worker_id
    # How long the worker's consumer lets the broker hold a fetch (Faust hard-codes 1,500 ms; see app/kafka/app.py).
    # How often the worker commits consumer offsets: a restart re-reads at most this much (deduplicated).
    worker_commit_seconds: float = Field(
        default=1.0,
        gt=0,
        le=300,
        description=(
            "how often the worker commits its consumer offsets (a restart re-reads at most this much, deduplicated)"
        ),
    )
    worker_fetch_wait_ms: int = Field(
        default=100,
        ge=10,
        le=5000,
        description=("how long the worker's consumer lets the broker hold a fetch (Faust fixes 1,500 ms)"),
    )
    # While the worker rebuilds its tables from their changelogs: one INFO line of progress this often.
    worker_recovery_log_seconds: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description=(
            "while the worker rebuilds its tables from their changelogs, one INFO line of progress this often"
        ),
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
        default=500, ge=1, le=10_000, description="how many events the control agent decides together"
    )
    control_batch_seconds: float = Field(
        default=0.02, gt=0, le=5, description="how long the control agent waits to fill a batch"
    )
    control_tick_seconds: float = Field(
        default=1.0, gt=0, le=3600, description="how often the auto-resolve timer looks for due episodes"
    )
    idempotency_retention_hours: float = Field(
        default=24.0, gt=0, le=24 * 30, description="how long (event time) an idempotency key blocks a repeat"
    )
    # Memory bounds (README "Memory"): every in-process cache keeps at most this many entries (least
    # recently used out first; tocsin_cache_* metrics). States stay in RocksDB and the changelog: an
    # evicted state is read again, an auto-resolve time or idempotency expiry beyond its window is found
    # again by a scan of the table. RocksDB's own memory: one block cache and one memtable budget per process.
    control_state_cache_size: int = Field(
        default=20_000,
        ge=0,
        le=10_000_000,
        description=("decoded control states kept in memory per worker, least recently used out first (0 keeps none)"),
    )
    control_due_window_size: int = Field(
        default=50_000,
        ge=10,
        le=10_000_000,
        description=("the earliest auto-resolve times kept in memory per worker; beyond, found again by a scan"),
    )
    idempotency_expiry_window_size: int = Field(
        default=50_000,
        ge=10,
        le=10_000_000,
        description=("the oldest idempotency keys kept in memory for their expiry; beyond, found again by a scan"),
    )
    config_cache_size: int = Field(
        default=10_000,
        ge=1,
        le=1_000_000,
        description="topic configurations per worker and topic lookups per API replica kept in memory",
    )
    auth_cache_size: int = Field(
        default=10_000, ge=1, le=1_000_000, description="authenticated tokens kept in memory per API replica"
    )
    rate_limit_keys: int = Field(
        default=100_000,
        ge=1,
        le=10_000_000,
        description="publish rate-limit buckets per API replica (least recently used out first)",
    )
    rocksdb_block_cache_mb: int = Field(
        default=64, ge=1, le=65_536, description="one RocksDB block cache for every table partition of a worker"
    )
    rocksdb_write_buffer_mb: int = Field(
        default=64, ge=4, le=65_536, description="one memtable budget for every table partition of a worker"
    )
    # Workflow actions (worker): e-mail relay, webhook deliveries, retries.
    smtp_host: str = Field(default="127.0.0.1", description="the e-mail relay (`make run` starts a local sink there)")
    smtp_port: int = Field(default=8025, ge=1, le=65535, description="the e-mail relay's port")
    smtp_from: str = Field(default="tocsin@localhost", description="the From address of the e-mails")
    smtp_starttls: bool = Field(default=False, description="STARTTLS towards the relay")
    smtp_username: str | None = Field(default=None, description="the relay login's user")
    smtp_password: SecretStr | None = Field(default=None, description="the relay login's password")
    smtp_timeout_seconds: float = Field(default=15.0, gt=0, le=120, description="one SMTP delivery's deadline")
    webhook_timeout_seconds: float = Field(default=15.0, gt=0, le=60, description="one webhook attempt's deadline")
    delivery_concurrency: int = Field(
        default=64,
        ge=1,
        le=1000,
        description=(
            "most attempts under way at once per receiver (a webhook's scheme, host and port; "
            "the kind for e-mail and push), and most connections kept to one receiver"
        ),
    )
    delivery_batch_size: int = Field(
        default=200,
        ge=1,
        le=5000,
        description="most delivery records checked together against the stored deliveries (one query)",
    )
    # Retry schedule of push, e-mail and webhooks: wait after failed attempt n = base * factor^(n-1), capped.
    retry_base_seconds: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="the wait after the first failed delivery attempt (push, e-mail, webhooks)",
    )
    retry_factor: float = Field(
        default=6.0, ge=1, le=100, description="each later wait is this many times the one before (base x factor^(n-1))"
    )
    retry_max_delay_seconds: float = Field(
        default=36_000.0, gt=0, le=7 * 86400, description="the longest wait between two attempts"
    )
    retry_max_attempts: int = Field(
        default=12, ge=1, le=50, description="attempts before a delivery goes to the dead letters"
    )
    retry_jitter: float = Field(
        default=0.2, ge=0, le=1, description="each wait is shortened by up to this share, at random"
    )
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
            "address; docs/federation.md)"
        )

    allow_private_networks: bool = Field(
        default=False,
        description=(
            "allow OIDC and webhook targets on private networks (never link-local or cloud "
            "metadata) and plain http webhooks; for tests"
        ),
    )
    # Local development: loopback receivers a webhook may reach over plain http without opening
    # private networks (`127.0.0.1:9000,localhost:9001`, loopback hosts only). Link-local and
    # cloud metadata addresses are refused whatever is set.
    loopback_targets: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description=(
            "loopback receivers (127.0.0.1:9000,localhost:9001,[::1]:9002) a webhook may "
            "reach over plain http, for local development"
        ),
    )

    @field_validator("log_format", "log_level", mode="before")
    @classmethod
    def _any_case(cls, value: object, info: ValidationInfo) -> object:
        if not isinstance(value, str):
            return value
        return value.upper() if info.field_name == "log_level" else value.lower()

    @field_validator("loopback_targets", mode="before")
    @classmethod
    def _parse_loopback_targets(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        out = []
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            host, _, port = part.rpartition(":")
            host = host.strip("[]").lower()
            if host not in ("localhost", "127.0.0.1", "::1") or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(
                    f"TOCSIN_LOOPBACK_TARGETS: {part!r} is not a loopback host:port (localhost, 127.0.0.1 or [::1])"
                )
            out.append(f"{host}:{int(port)}")
        return tuple(out)

    @property
    def loopback_ports(self) -> frozenset[int]:
        return frozenset(int(t.rpartition(":")[2]) for t in self.loopback_targets)

    oidc_ca_file: str | None = Field(
        default=None,
        description=("a CA file trusted besides the system's, for OIDC discovery, JWKS and webhook deliveries"),
    )
    # Outbound HTTP (webhooks, OIDC discovery and JWKS) through this forward proxy, `http://host:port`
    # (https targets tunnel with CONNECT). The proxy resolves target names, so it must refuse internal
    # addresses itself (an egress proxy); literal internal addresses are still refused here. Unset: direct.
    http_proxy: str | None = Field(
        default=None,
        description=(
            "http://host:port of a forward (egress) proxy for OIDC discovery, JWKS and "
            "webhooks; it must refuse internal addresses itself"
        ),
    )

    @field_validator("http_proxy")
    @classmethod
    def _check_http_proxy(cls, value: str | None) -> str | None:
        if value is not None and not (value.startswith("http://") and len(value) > len("http://")):
            raise ValueError("TOCSIN_HTTP_PROXY must be an http://host:port URL")
        return value or None

    jwks_cache_seconds: float = Field(default=300.0, ge=1, description="how long an issuer's JWKS is reused")
    jwks_unknown_kid_refetch_seconds: float = Field(
        default=60.0, ge=0, description="how often an unknown `kid` may refetch an issuer's JWKS"
    )
    exchange_rate_per_credential: float = Field(
        default=50.0, gt=0, description="token exchanges per second per credential, per API replica"
    )
    exchange_rate_per_client: float = Field(
        default=20.0, gt=0, description="token exchanges per second per client address, per API replica"
    )
    exchange_burst: int = Field(default=40, ge=1, description="the burst of the token-exchange rate limits")
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

    # Exchanges refused before the subject token proved anything (malformed, bad signature, unknown
    # key, unknown or inactive credential): per client address, this many per second in bursts of
    # this many, then 429 for that address; logged as one row per credential, address and check
    # per window (with a count), not a row each.
    exchange_failure_rate_per_client: float = Field(
        default=0.5, gt=0, description="refused exchanges per second per client address before 429 for that address"
    )
    exchange_failure_burst: int = Field(default=20, ge=1, description="the burst of that refusal limit")
    exchange_failure_window_seconds: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description=(
            "refused exchanges are logged as one row per credential, address and check per this window, with a count"
        ),
    )
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
    def retry_schedule(self) -> RetrySchedule:
        return RetrySchedule(
            base_s=self.retry_base_seconds,
            factor=self.retry_factor,
            max_delay_s=self.retry_max_delay_seconds,
            max_attempts=self.retry_max_attempts,
            jitter=self.retry_jitter,
        )

    @property
    def effective_transactional_id(self) -> str:
        """The API process's transactional id: the setting, else ``<topic prefix>api-<host>-<port>``."""
        return self.transactional_id or f"{self.topic_prefix}api-{socket.gethostname()}-{self.api_port}"

    def topic(self, name: str) -> str:
        """Full Kafka topic name for one of the project's logical topics."""
        return f"{self.topic_prefix}{name}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
