"""A private single-node SLURM cluster for the tests: munged, slurmctld and slurmd from
Debian's ``slurm-wlm`` and ``munge``, each in the foreground in its own subprocess, with
their own slurm.conf, munge key and socket in a temporary folder and free ports. Stopped
by pid. Needs root (slurmd starts jobs as their user); ``unavailable_reason`` says why
it cannot start here."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo", "scontrol")
PACKAGES = ("slurm-wlm", "munge")
#: MaxTime of the default partition, in minutes
DEBUG_MAX_MINUTES = 30
#: CPUs the test node declares (one per task of the tests' jobs running at once)
NODE_CPUS = 6


def _find(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/sbin") / name) if p.exists()), None
    )


def missing_commands() -> list[str]:
    return [name for name in (*DAEMONS, *CLIENTS) if _find(name) is None]


def install_packages() -> str | None:
    """Install slurm-wlm and munge with apt when missing and running as root; the reason
    they could not be installed, or None."""
    if not missing_commands():
        return None
    if os.geteuid() != 0:
        return f"SLURM is not installed ({', '.join(missing_commands())} missing) and not root"
    if shutil.which("apt-get") is None:
        return "SLURM is not installed and there is no apt-get to install it"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *PACKAGES]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode:
            return f"{' '.join(command)} failed: {done.stderr.strip()[-300:]}"
    return None if not missing_commands() else f"still missing: {missing_commands()}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def node_line(hostname: str) -> str:
    """This machine's node with its memory as slurmd reports it and ``NODE_CPUS`` CPUs
    (``SlurmdParameters=config_overrides``: more than the machine has, so the tests' tiny
    jobs, a 2-rank one included, run side by side)."""
    done = subprocess.run([_find("slurmd") or "slurmd", "-C"], capture_output=True, text=True)
    first = done.stdout.splitlines()[0] if done.stdout else ""
    memory = next((f for f in first.split() if f.startswith("RealMemory=")), "RealMemory=4000")
    return f"NodeName={hostname} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} {memory} State=UNKNOWN"


class SlurmCluster:
    """munged + slurmctld + slurmd on this host, configured under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hostname = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.munge_socket = root / "munge" / "munge.socket"
        self.processes: list[subprocess.Popen] = []

    @property
    def env(self) -> dict[str, str]:
        """What a SLURM client needs to talk to this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def command(self, *args: str) -> str:
        """A SLURM client command against this cluster; its stdout (fails loudly)."""
        done = self._run(*args)
        if done.returncode:
            raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def write_config(self) -> None:
        munge = self.root / "munge"
        for folder in (munge, self.root / "state", self.root / "spool", self.root / "log"):
            folder.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)  # munged wants its socket's folders searchable by all
        munge.chmod(0o755)
        key = munge / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        logs = self.root / "log"
        lines = [
            "ClusterName=spherescope-test",
            f"SlurmctldHost={self.hostname}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "DefMemPerCPU=1000",
            "SchedulerType=sched/backfill",
            "SchedulerParameters=sched_interval=1",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/filetxt",  # what ``sacct -c`` reads without slurmdbd
            f"JobCompLoc={logs / 'jobcomp.txt'}",
            "SlurmdParameters=config_overrides",
            "MpiDefault=none",
            "ReturnToService=1",  # a node set DOWN stays down until RESUME (a failure)
            "SwitchType=switch/none",
            "MinJobAge=600",
            "KillWait=30",
            "OverTimeLimit=0",
            "InactiveLimit=0",
            "Waittime=0",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "MessageTimeout=10",
            "JobRequeue=1",
            f"StateSaveLocation={self.root / 'state'}",
            f"SlurmdSpoolDir={self.root / 'spool'}",
            f"SlurmctldPidFile={self.root / 'slurmctld.pid'}",
            f"SlurmdPidFile={self.root / 'slurmd.pid'}",
            f"SlurmctldLogFile={logs / 'slurmctld.log'}",
            f"SlurmdLogFile={logs / 'slurmd.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            node_line(self.hostname),
            f"PartitionName=debug Nodes={self.hostname} Default=YES "
            f"MaxTime={DEBUG_MAX_MINUTES} State=UP",
            f"PartitionName=long Nodes={self.hostname} MaxTime=120 State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.root / "log" / f"{name}.out", "ab")  # noqa: SIM115 (held by the child)
        process = subprocess.Popen(
            [_find(name) or name, *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **self.env},
            start_new_session=True,
        )
        log.close()
        self.processes.append(process)
        return process

    def start(self, timeout_s: float = 60.0) -> SlurmCluster:
        self.write_config()
        munge = self.root / "munge"
        self._spawn(
            "munged", "-F", "--force", f"--socket={self.munge_socket}",
            f"--key-file={munge / 'munge.key'}", f"--pid-file={munge / 'munged.pid'}",
            f"--seed-file={munge / 'munged.seed'}", f"--log-file={munge / 'munged.log'}",
        )  # fmt: skip
        self._wait(lambda: self.munge_socket.exists(), "munged", 10)
        self._spawn("slurmctld", "-D", "-i", "-f", str(self.conf))
        self._wait(lambda: self._run("scontrol", "ping").returncode == 0, "slurmctld", timeout_s)
        self._spawn("slurmd", "-D", "-f", str(self.conf), "-N", self.hostname)
        self._wait(self._node_idle, "slurmd", timeout_s)
        return self

    def return_node(self, timeout_s: float = 90.0) -> None:
        """Bring the node back after a test set it down: SLURM refuses to resume it while
        the killed jobs' processes are still ending (KillWait), so ask until it is idle."""
        deadline = time.monotonic() + timeout_s
        while not self._node_idle():
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {self.hostname} did not return: {self._node_states()}")
            self._run("scontrol", "update", f"NodeName={self.hostname}", "State=RESUME")
            time.sleep(1)

    def _node_states(self) -> str:
        return self._run("sinfo", "-h", "-N", "-o", "%t|%E").stdout.strip()

    def _node_idle(self) -> bool:
        done = self._run("sinfo", "-h", "-N", "-o", "%t")
        return done.returncode == 0 and "idle" in done.stdout

    def _run(self, *command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            command, capture_output=True, text=True, env={**os.environ, **self.env}, check=False
        )

    def _wait(self, ready, what: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if ready():
                return
            dead = [p for p in self.processes if p.poll() is not None]
            if dead:
                break
            time.sleep(0.2)
        self.stop()
        logs = "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-1500:]}"
            for path in sorted((self.root / "log").glob("*"))
        )
        raise RuntimeError(f"{what} did not start\n{logs}")

    def stop(self) -> None:
        """Cancel the jobs left (a failed test's), then stop the daemons by pid (slurmd
        first), TERM then KILL."""
        if self.processes and all(p.poll() is None for p in self.processes):
            jobs = self._run("squeue", "-h", "-o", "%i").stdout.split()
            if jobs:
                self._run("scancel", *jobs)
                deadline = time.monotonic() + 40  # KillWait, then the job's processes end
                while self._run("squeue", "-h", "-o", "%i").stdout.split():
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.5)
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)
        self.processes.clear()
        self._kill_job_leftovers()

    def _kill_job_leftovers(self) -> None:
        """Job step daemons (slurmstepd) outlive a stopped slurmd: kill, by pid, every
        process started with this cluster's SLURM_CONF (never this test process)."""
        marker = f"SLURM_CONF={self.conf}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environment = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if marker in environment:
                with contextlib.suppress(OSError):
                    os.kill(int(entry.name), signal.SIGKILL)
