"""A local Kafka cluster of N nodes (:class:`LocalKafkaCluster`), each a :class:`LocalKafka`, with
replicated topics: one node can die without losing a record or refusing writes."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Self

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from devstack.broker_config import cluster_properties
from devstack.jars import DEFAULT_VERSION, stderr_progress
from devstack.kafka import LocalKafka, new_cluster_id, probe_brokers
from devstack.ports import free_ports, run_coro_sync


class LocalKafkaCluster:
    """N KRaft nodes (each a broker and a controller voter) on loopback, as one cluster.

    Topics are replicated ``min(3, nodes)`` ways with ``min.insync.replicas`` one less (at
    least 1), the internal topics (consumer offsets, transaction state) too, so a three-node
    cluster keeps accepting ``acks=all`` writes with one node down. Every node it starts it
    stops (``stop()``, also at interpreter exit); ``kill_node(i)`` is ``kill -9`` of one.
    """

    host = LocalKafka.host

    def __init__(
        self,
        data_dir: Path,
        nodes: int = 3,
        *,
        version: str = DEFAULT_VERSION,
        heap: str = "512m",
        cache_dir: Path | None = None,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        extra_properties: Mapping[str, str] | None = None,
        progress: Callable[[str], None] = stderr_progress,
        base_port: int | None = None,
    ) -> None:
        """Configure (but do not start) ``nodes`` nodes under ``data_dir/node<id>``.

        Node ``i`` (1-based) listens on ``base_port + i - 1`` and its controller on
        ``base_port + nodes + i - 1``; without ``base_port``, on free ports chosen now.
        """
        if nodes < 1:
            raise ValueError("a cluster needs at least one node")
        self.data_dir = Path(data_dir).resolve()
        self.replication_factor = replication_factor or min(3, nodes)
        self.min_insync_replicas = min_insync_replicas or max(1, self.replication_factor - 1)
        if not 1 <= self.min_insync_replicas <= self.replication_factor <= nodes:
            why = f"{self.min_insync_replicas} <= {self.replication_factor} <= {nodes}"
            raise ValueError(f"need 1 <= min.insync.replicas <= replication factor <= nodes: {why}")
        self.progress = progress
        self.cluster_id = new_cluster_id()
        ports = free_ports(2 * nodes, self.host) if base_port is None else list(range(base_port, base_port + 2 * nodes))
        voters = ",".join(f"{i + 1}@{self.host}:{ports[nodes + i]}" for i in range(nodes))
        props = {**cluster_properties(self.replication_factor, self.min_insync_replicas), **(extra_properties or {})}
        self.nodes = [
            LocalKafka(
                self.data_dir / f"node{i + 1}",
                version=version,
                port=ports[i],
                controller_port=ports[nodes + i],
                heap=heap,
                cache_dir=cache_dir,
                extra_properties=props,
                progress=progress,
                node_id=i + 1,
                quorum_voters=voters,
                cluster_id=self.cluster_id,
                name=f"node {i + 1}",
            )
            for i in range(nodes)
        ]

    @property
    def bootstrap(self) -> str:
        """Every node's ``host:port``, comma-separated (clients need only one to be up)."""
        return ",".join(node.bootstrap for node in self.nodes)

    def is_running(self) -> bool:
        """Return True while any node's JVM is alive."""
        return any(node.is_running() for node in self.nodes)

    def node(self, node_id: int) -> LocalKafka:
        """The node with this Kafka ``node.id`` (1-based)."""
        return self.nodes[node_id - 1]

    def start(self, timeout: float = 120.0) -> str:
        """Start every node that is not running; wait until all are live brokers.

        Returns the bootstrap list. On failure every node is stopped again.
        """
        started = time.monotonic()
        try:
            waiting = [node for node in self.nodes if not node.is_running()]
            for node in waiting:  # a node answers only once a quorum of controllers runs
                node.launch()
            atexit.register(self.stop)  # after the nodes' own: at exit it runs first, stopping all at once
            for node in waiting:
                node.wait_ready(started + timeout)
        except BaseException:
            self.stop()
            raise
        elapsed = time.monotonic() - started
        self.progress(f"kafka: {len(self.nodes)}-node cluster ready on {self.bootstrap} in {elapsed:.1f}s")
        return self.bootstrap

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every node: all are asked at once (a lone survivor could wait for a quorum),
        then each is killed if still running after ``timeout``. Idempotent."""
        atexit.unregister(self.stop)
        for node in self.nodes:
            node.terminate()
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            node.stop(max(1.0, deadline - time.monotonic()))

    def kill_node(self, node_id: int) -> None:
        """``kill -9`` one node (by ``node.id``)."""
        self.progress(f"kafka: kill -9 node {node_id} (pid {self.node(node_id).pid})")
        self.node(node_id).kill()

    def stop_node(self, node_id: int, timeout: float = 30.0) -> None:
        """Stop one node (controlled shutdown)."""
        self.node(node_id).stop(timeout)

    def restart_node(self, node_id: int, timeout: float = 90.0) -> None:
        """Start a stopped or killed node on its data; wait until it is a live broker again."""
        node = self.node(node_id)
        others = [n.bootstrap for n in self.nodes if n is not node and n.is_running()]
        started = time.monotonic()
        node.launch()
        try:
            node.wait_ready(started + timeout, ",".join(others) or None)
        except BaseException:
            node.stop()
            raise
        self.progress(f"kafka: node {node_id} back on {node.bootstrap} in {time.monotonic() - started:.1f}s")

    def live_brokers(self, timeout: float = 5.0) -> set[int]:
        """The node ids the cluster currently lists as live brokers."""
        running = ",".join(n.bootstrap for n in self.nodes if n.is_running())
        return run_coro_sync(partial(probe_brokers, running, timeout)) if running else set()

    def leaders(self, topics: list[str], timeout: float = 10.0) -> dict[tuple[str, int], int]:
        """The leader node id of every partition of ``topics`` (-1: none right now)."""
        running = ",".join(n.bootstrap for n in self.nodes if n.is_running()) or self.bootstrap
        return run_coro_sync(partial(_leaders, running, topics, timeout))

    def __enter__(self) -> Self:
        """Start the cluster and return this instance."""
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Stop the cluster."""
        self.stop()


async def _leaders(bootstrap: str, topics: list[str], wait_seconds: float) -> dict[tuple[str, int], int]:
    """The leader node id of every partition of ``topics``."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=int(wait_seconds * 1000), client_id="tocsin-local-kafka-probe"
    )
    await asyncio.wait_for(admin.start(), wait_seconds)
    try:
        described = await asyncio.wait_for(admin.describe_topics(topics), wait_seconds)
        return {(t["topic"], int(p["partition"])): int(p["leader"]) for t in described for p in t["partitions"]}
    finally:
        with contextlib.suppress(KafkaError, OSError, TimeoutError):
            await admin.close()
