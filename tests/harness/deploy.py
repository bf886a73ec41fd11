"""The deployment files (docker-compose.yml, deploy/nginx.conf) as tests read them, and nginx
running the gateway's configuration over loopback ports."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.harness.ports import free_port
from tests.harness.served import GUARD_SECONDS

ROOT = Path(__file__).resolve().parents[2]


COMPOSE_FILE = ROOT / "docker-compose.yml"


NGINX_CONF = ROOT / "deploy" / "nginx.conf"

SECRETS_DIR = "/run/secrets"


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def mounted_secrets(service: dict[str, Any]) -> dict[str, str]:
    """Secret name -> its path in the container."""
    mounted = {}
    for entry in service.get("secrets", []):
        source, target = (
            (entry, entry)
            if isinstance(entry, str)
            else (entry["source"], entry.get("target", entry["source"]))
        )
        mounted[source] = target if target.startswith("/") else f"{SECRETS_DIR}/{target}"
    return mounted


NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)


@contextmanager
def running_gateway(upstreams: dict[str, int], tmp_path: Path) -> Iterator[str]:
    """nginx running deploy/nginx.conf with each container's name resolved to a loopback
    port (one nothing answers on, for a service missing from ``upstreams``)."""
    assert NGINX is not None
    text = NGINX_CONF.read_text(encoding="utf-8")
    for name in re.findall(r"^upstream (\w+) \{", text, re.M):
        port = upstreams[name] if name in upstreams else free_port()
        text = text.replace(f"server {name}:8080;", f"server 127.0.0.1:{port};")
    port = free_port()
    text = text.replace("listen 8080;", f"listen 127.0.0.1:{port};")
    for directory in ("body", "proxy"):
        (tmp_path / directory).mkdir(mode=0o777)
    (tmp_path / "default.conf").write_text(text, encoding="utf-8")
    (tmp_path / "nginx.conf").write_text(
        f"daemon off;\nmaster_process off;\npid {tmp_path}/nginx.pid;\n"
        f"error_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  client_body_temp_path {tmp_path}/body;\n"
        f"  proxy_temp_path {tmp_path}/proxy;\n  include {tmp_path}/default.conf;\n}}\n",
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(400):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None:
                raise AssertionError(process.stderr.read().decode() if process.stderr else "")
            subprocess.run(["sleep", "0.025"], check=True)
        else:
            raise AssertionError("nginx never listened")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=GUARD_SECONDS)
