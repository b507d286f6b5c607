"""How the worker delivers actions: the retry schedule (``TOCSIN_RETRY_*``), the e-mail relay
(``TOCSIN_SMTP_*``) and the outbound HTTP of webhooks and OIDC, each one group that builds what its
users take (the :class:`RetrySchedule`, the executors' configs :class:`EmailConfig` and
:class:`WebhookConfig`, plain values the tests also write directly)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.domain.shared.retry_schedule import RetrySchedule

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True, slots=True)
class EmailConfig:
    """The SMTP relay the e-mail executor sends through."""

    host: str
    port: int
    sender: str
    timeout_s: float
    starttls: bool = False
    username: str | None = None
    password: str | None = None


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """The webhook executor's outbound client: one attempt's deadline and the targets it may reach."""

    timeout_s: float
    allow_private_networks: bool = False
    ca_file: str | None = None
    max_connections: int = 64
    loopback_ports: frozenset[int] = frozenset()
    proxy: str | None = None


class RetrySettings(BaseSettings):
    """Retry schedule of push, e-mail and webhooks: wait after failed attempt n = base * factor^(n-1), capped."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_RETRY_", extra="ignore")

    base_seconds: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="the wait after the first failed delivery attempt (push, e-mail, webhooks)",
    )
    factor: float = Field(
        default=6.0, ge=1, le=100, description="each later wait is this many times the one before (base x factor^(n-1))"
    )
    max_delay_seconds: float = Field(
        default=36_000.0, gt=0, le=7 * 86400, description="the longest wait between two attempts"
    )
    max_attempts: int = Field(
        default=12, ge=1, le=50, description="attempts before a delivery goes to the dead letters"
    )
    jitter: float = Field(default=0.2, ge=0, le=1, description="each wait is shortened by up to this share, at random")

    def schedule(self) -> RetrySchedule:
        return RetrySchedule(
            base_s=self.base_seconds,
            factor=self.factor,
            max_delay_s=self.max_delay_seconds,
            max_attempts=self.max_attempts,
            jitter=self.jitter,
        )


class SmtpSettings(BaseSettings):
    """The e-mail relay of e-mail actions and of sign-in mail."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_SMTP_", extra="ignore", populate_by_name=True)

    host: str = Field(default="127.0.0.1", description="the e-mail relay (`make run` starts a local sink there)")
    port: int = Field(default=8025, ge=1, le=65535, description="the e-mail relay's port")
    # "from" is a keyword: the field is `sender`, its variable TOCSIN_SMTP_FROM
    sender: str = Field(
        default="tocsin@localhost",
        validation_alias=AliasChoices("TOCSIN_SMTP_FROM", "sender"),
        description="the From address of the e-mails",
    )
    starttls: bool = Field(default=False, description="STARTTLS towards the relay")
    username: str | None = Field(default=None, description="the relay login's user")
    password: SecretStr | None = Field(default=None, description="the relay login's password")
    timeout_seconds: float = Field(default=15.0, gt=0, le=120, description="one SMTP delivery's deadline")

    def config(self) -> EmailConfig:
        return EmailConfig(
            host=self.host,
            port=self.port,
            sender=self.sender,
            timeout_s=self.timeout_seconds,
            starttls=self.starttls,
            username=self.username,
            password=self.password.get_secret_value() if self.password is not None else None,
        )


class OutboundSettings(BaseSettings):
    """Outbound HTTP: which targets webhooks, OIDC discovery and JWKS may reach, and how."""

    model_config = SettingsConfigDict(env_prefix="TOCSIN_", extra="ignore")

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
    oidc_ca_file: str | None = Field(
        default=None,
        description=("a CA file trusted besides the system's, for OIDC discovery, JWKS and webhook deliveries"),
    )
    # The proxy resolves target names, so it must refuse internal addresses itself (an egress proxy);
    # literal internal addresses are still refused here. Unset: direct.
    http_proxy: str | None = Field(
        default=None,
        description=(
            "http://host:port of a forward (egress) proxy for OIDC discovery, JWKS and "
            "webhooks; it must refuse internal addresses itself"
        ),
    )
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
            if host not in LOOPBACK_HOSTS or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(
                    f"TOCSIN_LOOPBACK_TARGETS: {part!r} is not a loopback host:port (localhost, 127.0.0.1 or [::1])"
                )
            out.append(f"{host}:{int(port)}")
        return tuple(out)

    @field_validator("http_proxy")
    @classmethod
    def _check_http_proxy(cls, value: str | None) -> str | None:
        if value is not None and not (value.startswith("http://") and len(value) > len("http://")):
            raise ValueError("TOCSIN_HTTP_PROXY must be an http://host:port URL")
        return value or None

    @property
    def loopback_ports(self) -> frozenset[int]:
        return frozenset(int(t.rpartition(":")[2]) for t in self.loopback_targets)

    def webhook_config(self) -> WebhookConfig:
        return WebhookConfig(
            timeout_s=self.webhook_timeout_seconds,
            allow_private_networks=self.allow_private_networks,
            ca_file=self.oidc_ca_file,
            max_connections=self.delivery_concurrency,
            loopback_ports=self.loopback_ports,
            proxy=self.http_proxy,
        )
