"""The broker's jars, resolved from Maven Central with ``mvn`` into a cache outside the repository
(``$TOCSIN_CACHE_DIR`` or ``~/.cache/tocsin/kafka``): the Kafka runtime plus log4j2 and slf4j 2, so the
broker's logging binds. Standard library only: the image's build stage resolves them with a bare
Python (Dockerfile)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

DEFAULT_VERSION = "4.1.1"
LOG4J_VERSION = "2.24.3"
SLF4J_VERSION = "2.0.16"
_MARKER = ".resolved"
_HINT = "install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless maven)"

# the broker runtime plus log4j2 + slf4j 2 so the broker's logging binds
_DEPS = (
    ("org.apache.kafka", "kafka_2.13", "{kafka}"),
    ("org.apache.logging.log4j", "log4j-slf4j2-impl", LOG4J_VERSION),
    ("org.apache.logging.log4j", "log4j-core", LOG4J_VERSION),
    ("org.slf4j", "slf4j-api", SLF4J_VERSION),
)
_DEP = "<dependency><groupId>{}</groupId><artifactId>{}</artifactId><version>{}</version>"
_POM = (
    '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    "<groupId>tocsin</groupId><artifactId>kafka-runtime</artifactId><version>{kafka}"
    "</version><packaging>pom</packaging>\n<dependencies>\n"
    + "".join(_DEP.format(*dep) + "</dependency>\n" for dep in _DEPS)
    + "</dependencies></project>\n"
)


class KafkaLocalError(RuntimeError):
    """Raised when the local broker cannot be resolved, formatted or started."""


def stderr_progress(message: str) -> None:
    """Default progress sink: one line on stderr."""
    print(message, file=sys.stderr, flush=True)


def default_cache_dir() -> Path:
    """Return the jar cache root: ``$TOCSIN_CACHE_DIR`` or ``~/.cache/tocsin/kafka``."""
    env = os.environ.get("TOCSIN_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache/tocsin/kafka"


def require_tool(name: str) -> str:
    """Return the path of ``name`` on PATH or raise a clear, actionable error."""
    found = shutil.which(name)
    if found is None:
        raise KafkaLocalError(f"`{name}` is not on PATH; local Kafka needs it: {_HINT}")
    return found


def resolve_jars(
    version: str = DEFAULT_VERSION,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] = stderr_progress,
) -> Path:
    """Resolve the broker jars with Maven; return the ``libs`` directory holding them.

    Cached in ``<cache_dir>/<version>/libs``; a marker file records a completed run so
    later calls return at once, and a file lock serialises concurrent resolvers.
    """
    root = (cache_dir or default_cache_dir()) / version
    libs, marker = root / "libs", root / _MARKER
    if marker.exists():
        return libs
    require_tool("java")
    mvn = require_tool("mvn")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():  # another process finished while we waited for the lock
            return libs
        progress(f"kafka: resolving jars (first run downloads ~100 MB) into {root}…")
        started = time.monotonic()
        (root / "pom.xml").write_text(_POM.format(kafka=version), encoding="utf-8")
        goal, out = "dependency:copy-dependencies", f"-DoutputDirectory={libs}"
        cmd = [mvn, "-q", "-B", "-f", str(root / "pom.xml"), goal, out]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        jars = sorted(libs.glob("*.jar")) if libs.is_dir() else []
        if done.returncode != 0 or not jars:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
            why = f"mvn could not resolve Kafka {version} (exit {done.returncode})"
            raise KafkaLocalError(f"{why}:\n{tail}")
        marker.write_text("".join(f"{j.name}\n" for j in jars), encoding="utf-8")
        elapsed = time.monotonic() - started
        progress(f"kafka: {len(jars)} jars ready in {elapsed:.1f}s")
    return libs
