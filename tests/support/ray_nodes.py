"""Ray nodes started with the ``ray start`` CLI, as an operator starts them, and stopped one by one.

``ray stop`` stops every Ray process of the machine (other test runs' clusters too), so each node here gets a
temporary directory of its own and is stopped by signalling exactly the processes whose command line names
that directory (its raylet, agents and workers; on the head also the GCS and monitors). Every port is
chosen free, so two nodes (and other clusters) share this machine."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.net import free_ports

RAY = Path(sys.executable).with_name("ray")


@dataclass
class RayNode:
    temp_dir: Path
    address: str  # the head's GCS address, host:port
    head: bool
    log: list[str] = field(default_factory=list)

    def pids(self) -> list[int]:
        """Processes of this node: every live process whose command line names its temp dir."""
        needle = str(self.temp_dir).encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:  # gone meanwhile, or not ours to read
                continue
            if needle in cmdline:
                found.append(int(entry.name))
        return found

    def stop(self, timeout_s: float = 20.0) -> None:
        """SIGTERM to this node's processes (what ``ray stop`` sends), SIGKILL to any left after the wait."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + timeout_s
            while self.pids() and time.monotonic() < deadline:
                time.sleep(0.2)
            if not self.pids():
                return

    def remove(self) -> None:
        """Stop the node and delete its temp dir (sessions, logs, sockets)."""
        self.stop()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _ports(ports: list[int]) -> list[str]:
    """Ports that default to fixed numbers (dashboard agent, client server) or to one shared range (workers),
    made free ones (six, distinct) so that two nodes of one machine do not collide."""
    return [
        f"--dashboard-agent-listen-port={ports[0]}",
        f"--dashboard-agent-grpc-port={ports[1]}",
        f"--runtime-env-agent-port={ports[2]}",
        f"--metrics-export-port={ports[3]}",
        f"--node-manager-port={ports[4]}",
        f"--object-manager-port={ports[5]}",
        "--min-worker-port=0",  # 0: each worker takes a port the OS picks
        "--max-worker-port=0",
    ]


def _command(
    num_cpus: float, resources: dict[str, float], temp_dir: Path, head_address: str | None
) -> tuple[list[str], str]:
    """One ``ray start`` command line with ports chosen afresh (all distinct), and the head's address."""
    ports = free_ports(8)
    command = [
        str(RAY),
        "start",
        f"--num-cpus={num_cpus:g}",
        f"--resources={json.dumps(resources)}",
        f"--temp-dir={temp_dir}",
        "--node-ip-address=127.0.0.1",
        "--object-store-memory=100000000",
        "--disable-usage-stats",
        *_ports(ports[:6]),
    ]
    if head_address is not None:
        return [*command, f"--address={head_address}"], head_address
    address = f"127.0.0.1:{ports[6]}"
    command += ["--head", f"--port={ports[6]}", "--include-dashboard=false"]
    command.append(f"--ray-client-server-port={ports[7]}")
    return command, address


def start_node(
    *, num_cpus: float, resources: dict[str, float], env: dict[str, str], head_address: str | None = None
) -> RayNode:
    """``ray start --head`` (``head_address`` None) or ``ray start --address=HEAD``, with a temp dir of its
    own (short: Ray's socket paths must fit 107 bytes)."""
    temp_dir = Path(tempfile.mkdtemp(prefix="rn", dir="/tmp"))
    node = RayNode(temp_dir=temp_dir, address=head_address or "", head=head_address is None)
    # Ray's own start-up waits 30 s for the node to register (fixed in ray/_private/node.py): on a loaded
    # machine that can pass, and then a second try (after stopping what the first one left) succeeds. Each
    # try takes new ports: a port taken meanwhile by another process fails the same way every time.
    for _ in range(3):
        command, node.address = _command(num_cpus, resources, temp_dir, head_address)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
        node.log.append(done.stdout + done.stderr)
        if done.returncode == 0:
            return node
        node.stop()
    raise RuntimeError(f"ray start failed ({done.returncode}): {done.stderr[-2000:]}")
