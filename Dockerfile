# Tocsin's images, all from tocsin-base:bookworm: Debian bookworm built from Debian's packages with
# debootstrap (scripts/container-engine.sh up builds it; no registry image is pulled).
# Targets (docker-compose.yml builds each one):
#   tocsin    (the last stage, the default) the API, the worker and the one-shot CLI commands
#   kafka     one KRaft broker (the node `tocsin kafka` runs, devstack/kafka.py) on the jars Maven resolved at build time
#   postgres  Debian's PostgreSQL 15
# Every Python package comes from requirements.lock with its hash (pip refuses anything else), then the
# project itself without resolving anything again: the same install as `make run`, `make test` and CI.
# Builds need the network (Debian's mirror, PyPI, Maven Central): docker-compose.yml builds with host
# networking.
ARG BASE=tocsin-base:bookworm

FROM ${BASE} AS postgres
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
# policy-rc.d: the package's scripts must not start a cluster during the build
RUN printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
 && apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
 && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d /var/lib/postgresql/15 /etc/postgresql/15/main \
 && mkdir -p /var/lib/postgresql/data && chown postgres:postgres /var/lib/postgresql/data
COPY deploy/docker/postgres.sh /usr/local/bin/tocsin-postgres
# starts as root to read the password secret and own the data volume, then runs as `postgres`
CMD ["tocsin-postgres"]
HEALTHCHECK --interval=3s --timeout=5s --retries=40 \
  CMD psql -qAt -h 127.0.0.1 -p "${PGPORT:-5432}" -U tocsin -d tocsin -c 'select 1' >/dev/null

FROM ${BASE} AS python
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PATH=/opt/tocsin/bin:$PATH
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && python3.11 -m venv /opt/tocsin \
 && groupadd --system --gid 10001 tocsin \
 && useradd --system --uid 10001 --gid tocsin --home-dir /var/lib/tocsin --shell /usr/sbin/nologin tocsin \
 && install -d -o tocsin -g tocsin -m 0750 /var/lib/tocsin
COPY requirements.lock /srv/tocsin/
RUN pip install -q --require-hashes -r /srv/tocsin/requirements.lock

# The project as a wheel (no dependency resolved again): a code change rebuilds this stage and the
# last layers of the two below, not the Python packages, the JRE or the jars.
FROM python AS project
WORKDIR /srv/tocsin
COPY pyproject.toml README.md ./
COPY app app
COPY api api
COPY streams streams
COPY tables tables
COPY devstack devstack
COPY cli cli
RUN pip wheel -q --no-deps --wheel-dir /wheels . && rm -rf build *.egg-info

# Maven resolves the broker's jars (devstack/jars.py: the version and jars `make run` uses)
FROM python AS kafka-jars
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless maven >/dev/null \
 && rm -rf /var/lib/apt/lists/*
COPY devstack /srv/resolve/devstack
RUN cd /srv/resolve && TOCSIN_CACHE_DIR=/opt/kafka-jars python -c 'from devstack.jars import resolve_jars; resolve_jars()' \
 && rm -rf /root/.m2 /srv/resolve

FROM python AS kafka
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null \
 && rm -rf /var/lib/apt/lists/*
COPY --from=kafka-jars /opt/kafka-jars /opt/kafka-jars
COPY deploy/docker/healthcheck.py /usr/local/bin/tocsin-healthcheck
COPY deploy/docker/kafka.py /usr/local/bin/tocsin-kafka
COPY --from=project /wheels /wheels
RUN pip install -q --no-deps /wheels/*.whl && rm -rf /wheels
ENV TOCSIN_CACHE_DIR=/opt/kafka-jars TOCSIN_VAR_DIR=/var/lib/tocsin
USER tocsin
WORKDIR /var/lib/tocsin
# the node `tocsin kafka` runs (devstack/kafka.py) on TOCSIN_KAFKA_BOOTSTRAP, its log in
# var/kafka/kafka.log in the volume, without a start deadline (the health check decides); SIGTERM stops it
CMD ["tocsin-kafka"]
HEALTHCHECK --interval=5s --timeout=10s --retries=60 CMD ["tocsin-healthcheck", "kafka"]

FROM python AS tocsin
COPY deploy/docker/healthcheck.py /usr/local/bin/tocsin-healthcheck
COPY deploy/docker/smtp-sink.py /usr/local/bin/tocsin-smtp-sink
COPY --from=project /wheels /wheels
RUN pip install -q --no-deps /wheels/*.whl && rm -rf /wheels
ENV TOCSIN_VAR_DIR=/var/lib/tocsin
USER tocsin
WORKDIR /var/lib/tocsin
EXPOSE 8080
CMD ["tocsin", "api"]
# the API's readiness (database, broker, config-changes followed); compose gives each service its own
HEALTHCHECK --interval=5s --timeout=5s --retries=60 CMD ["tocsin-healthcheck", "api"]
