"""``plancheck mcp-proxy`` in front of the official MCP reference servers.

Python ones from PyPI (``mcp-server-time``, ``mcp-server-git``, ``mcp-server-fetch``, in the
``test`` extra), driven by the MCP Python SDK's client; the npm ones
(``@modelcontextprotocol/server-filesystem``, ``-memory``, ``-everything``, on the TypeScript
SDK) installed with npm into a cache directory on first use (``PLANCHECK_NPM_CACHE``, default
``$TMPDIR/plancheck-mcp-npm``), driven byte by byte. A test skips, saying why, only when its
server cannot be installed here.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.mcp_raw_client import RawClient, call, proxy_command

BIN = Path(sys.executable).parent
NPM_PACKAGES = {"server-filesystem": "2026.8.31", "server-memory": "2026.8.31",
                "server-everything": "2026.8.31"}


def _python_server(name: str) -> list[str]:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed (pip install {name}; it is in the test extra)")
    return [str(path)]


@pytest.fixture(scope="module")
def npm_bin() -> Path:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are not installed: the npm reference servers cannot run")
    cache = Path(os.environ.get("PLANCHECK_NPM_CACHE",
                                Path(tempfile.gettempdir()) / "plancheck-mcp-npm"))
    bin_dir = cache / "node_modules" / ".bin"
    cache.mkdir(parents=True, exist_ok=True)
    # One install at a time into the cache: the suite's workers (pytest-xdist) and other
    # checkouts' suites share it.
    with open(cache / ".install-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all((bin_dir / f"mcp-{name}").exists() for name in NPM_PACKAGES):
            done = subprocess.run(
                [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund",
                 *(f"@modelcontextprotocol/{name}@{version}"
                   for name, version in NPM_PACKAGES.items())],
                capture_output=True, text=True, timeout=600, check=False)
            if done.returncode != 0:
                pytest.skip(f"npm could not install the reference servers: "
                            f"{done.stderr[-500:]}")
    return bin_dir


def _policy(tmp_path: Path, rule: str) -> str:
    path = tmp_path / "p.wf"
    path.write_text(f'policy p "test" {{\n  {rule}\n}}\n', encoding="utf-8")
    return str(path)


def _sdk_calls(command: list[str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    async def main() -> list[Any]:
        params = StdioServerParameters(command=command[0], args=command[1:],
                                       env=dict(os.environ))
        async with Client(params) as client:
            with anyio.fail_after(90):
                return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(main)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


# ------------------------------------------------------------------- Python servers (PyPI)

def test_mcp_server_time(tmp_path: Path) -> None:
    server = _python_server("mcp-server-time")
    good, bad = _sdk_calls(proxy_command(server=server), [
        ("get_current_time", {"timezone": "Europe/Paris"}),
        ("convert_time", {"source_timezone": "Europe/Paris", "time": "12:00"})])
    assert not good.is_error and "Europe/Paris" in _text(good)
    assert bad.is_error and "`target_timezone` is missing" in _text(bad)


@pytest.mark.slow
def test_mcp_server_git_refused_commit_never_happens(tmp_path: Path) -> None:
    server = _python_server("mcp-server-git")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True, timeout=30)
    command = proxy_command("--policy", _policy(tmp_path, "forbid git_commit after git_status"),
                            server=[*server, "--repository", str(repo)])
    status, commit = _sdk_calls(command, [
        ("git_status", {"repo_path": str(repo)}),
        ("git_commit", {"repo_path": str(repo), "message": "sneaky"})])
    assert not status.is_error and "a.txt" in _text(status)
    assert commit.is_error and "policy p" in _text(commit)
    log = subprocess.run(["git", "-C", str(repo), "log", "--oneline"], capture_output=True,
                         text=True, timeout=30, check=False)
    assert "sneaky" not in log.stdout


@pytest.mark.slow
def test_mcp_server_fetch_checks_its_arguments(tmp_path: Path) -> None:
    server = _python_server("mcp-server-fetch")
    (bad,) = _sdk_calls(proxy_command(server=server), [
        ("fetch", {"url": "http://127.0.0.1:9/", "max_length": "lots"})])
    assert bad.is_error and "max_length" in _text(bad) and "[PC" in _text(bad)


# ------------------------------------------------------------------- npm servers (TypeScript SDK)

def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _write_with_deep_extra(request_id: int, path: Path) -> bytes:
    return (f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":'
            f'{{"name":"write_file","arguments":{{"path":{json.dumps(str(path))},'
            f'"content":"pwned","extra":{_deep(3000)}}}}}}}\n').encode()


@pytest.mark.parametrize("through_proxy", [False, True])
def test_server_filesystem_deep_nesting_differential(tmp_path: Path, npm_bin: Path,
                                                     through_proxy: bool) -> None:
    """Issue 32: a policy-forbidden ``write_file`` with one 3,000-deep extra argument wrote the
    file through the proxy (its parser gave up, Node's did not). Direct, it is written (the
    control); through the proxy, it is refused with a parse error and never written."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "secret.txt").write_text("s3cret", encoding="utf-8")
    server = ["node", str(npm_bin / "mcp-server-filesystem"), str(root)]
    command = proxy_command("--policy", _policy(tmp_path,
                                                "forbid write_file after read_text_file"),
                            server=server) if through_proxy else server
    target = root / "out.txt"
    with RawClient(command) as client:
        client.start()
        client.send(call(1, "read_text_file", {"path": str(root / "secret.txt")}))
        assert "s3cret" in json.dumps(client.reply(1, timeout=60))
        client.send(_write_with_deep_extra(2, target))
        answer = client.reply(2, timeout=60) if not through_proxy else client.next()
        client.send(call(3, "write_file", {"path": str(target), "content": "plain"}))
        plain = client.reply(3, timeout=60)
        client.close()
    if through_proxy:
        assert answer["error"]["code"] == -32700 and "nested too deeply" in json.dumps(answer)
        assert plain["result"]["isError"] is True and "policy p" in json.dumps(plain)
        assert not target.exists()
    else:
        assert target.read_text(encoding="utf-8") == "plain"  # both writes ran


def test_server_memory(tmp_path: Path, npm_bin: Path) -> None:
    env = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    with RawClient(proxy_command(server=["node", str(npm_bin / "mcp-server-memory")]),
                   env=env) as client:
        client.start()
        client.send(call(1, "create_entities", {"entities": [
            {"name": "Ada", "entityType": "person", "observations": ["wrote programs"]}]}))
        client.send(call(2, "create_entities", {"entities": [{"name": "Bob"}]}))
        good, bad = client.reply(1, 60), client.reply(2, 60)
        client.send(call(3, "read_graph", {}))  # (after the write: the server runs calls
        graph = client.reply(3, 60)             # concurrently)
        client.close()
    assert "isError" not in good["result"] or good["result"]["isError"] is False
    assert bad["result"]["isError"] is True and "entityType" in json.dumps(bad)
    assert "Ada" in json.dumps(graph) and "Bob" not in json.dumps(graph)


@pytest.fixture
def everything(npm_bin: Path) -> list[str]:
    return ["node", str(npm_bin / "mcp-server-everything"), "stdio"]


def _descendants(pid: int) -> list[int]:
    """Every process started, directly or not, by ``pid``."""
    done = subprocess.run(["ps", "-eo", "pid,ppid"], capture_output=True, text=True,
                          timeout=30, check=False)
    parent = dict(tuple(int(x) for x in line.split()) for line in done.stdout.splitlines()[1:])
    found: list[int] = []
    frontier = {pid}
    while frontier:
        frontier = {child for child, ppid in parent.items() if ppid in frontier}
        found.extend(frontier)
    return found


def test_server_everything_calls_and_sigterm(everything: list[str]) -> None:
    """Issue 32: SIGTERM to the proxy was not passed on (server-everything outlived it by
    59 s)."""
    with RawClient(proxy_command(server=everything)) as client:
        client.start()
        client.send(call(1, "echo", {"message": "hi"}))
        client.send(call(2, "echo", {"message": 5}))
        good, bad = client.reply(1, 60), client.reply(2, 60)
        pids = _descendants(client.process.pid)
        assert pids
        os.kill(client.process.pid, signal.SIGTERM)
        client.process.wait(timeout=15)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pids):
            time.sleep(0.1)
        left = _alive(pids)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert "hi" in json.dumps(good)
    assert bad["result"]["isError"] is True and "message" in json.dumps(bad)
    assert left == []


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
                if handle.read().split(") ")[1][0] != "Z":
                    alive.append(pid)
        except FileNotFoundError:
            pass
    return alive
