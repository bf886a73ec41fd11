"""The container deployment (docs/operations.md, "Running in containers"): docker-compose.yml,
the Dockerfile and the nginx gateway, checked for their structure, since this machine has no
Docker engine.

The commands are parsed by the real ``league`` parser, the routes come from the apps the
registry composes, and the gateway's locations are matched against them as nginx matches
(an exact location first, then the longest prefix).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.http.apps import OPERATOR_ENDPOINTS
from services.http.problems import HTTP_SLUGS, PROBLEMS, title_of
from services.kernel.compose import compose
from services.kernel.founding import create_league
from services.kernel.settings import LeagueSettings
from services.league import cli
from services.league.registry import SERVICES
from tests.harness.deploy import (
    COMPOSE_FILE,
    NGINX_CONF,
    ROOT,
    SECRETS_DIR,
    environment,
    mounted_secrets,
)

DOCKERFILE = ROOT / "Dockerfile"

#: Services the compose file runs before the registry has them (the treasury is being built:
#: its container is there so the deployment is whole the day it is registered).
PENDING = {"treasury"} - set(SERVICES)
#: An environment variable whose name says it holds one of these holds a file's path instead.
SECRET_WORDS = re.compile(r"KEY|SECRET|PASS|TOKEN|SEED|CREDENTIAL", re.I)


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def services(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return dict(spec["services"])


def league_containers(services: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Container name -> the service it serves (``league serve NAME``)."""
    served = {}
    for name, service in services.items():
        command = service.get("command", [])
        if command[:2] == ["league", "serve"]:
            assert len(command) == 3, f"{name}: one service per container, not {command}"
            served[name] = command[2]
    return served


# -- services and their order ---------------------------------------------------------------


def test_every_registered_service_has_its_own_container(
    services: dict[str, dict[str, Any]],
) -> None:
    served = league_containers(services)
    assert sorted(served.values()) == sorted(set(served.values())), "a service runs twice"
    assert set(served.values()) == set(SERVICES) | PENDING
    assert {"db", "migrate", "gateway"} <= set(services)
    images = {services[name].get("image") for name in (*served, "migrate")}
    assert len(images) == 1, f"one image for every league container, not {images}"
    assert "Dockerfile" in (ROOT / "Dockerfile").name
    for name in (*served, "migrate"):
        assert services[name]["build"] == "."


def test_every_command_is_a_real_league_command(services: dict[str, dict[str, Any]]) -> None:
    parser = cli.build_parser()
    runs = {}
    for name, service in services.items():
        command = service.get("command")
        if command is None:
            continue
        assert command[0] == "league", f"{name}: {command}"
        args = parser.parse_args(command[1:])
        runs[name] = args.run
    assert runs["migrate"] is cli.cmd_migrate
    for name in league_containers(services):
        assert runs[name] is cli.cmd_serve


def test_services_start_in_order(services: dict[str, dict[str, Any]]) -> None:
    """db healthy -> migrate completes -> every service -> each healthy -> the gateway."""

    def depends(name: str) -> dict[str, str]:
        return {dep: cond["condition"] for dep, cond in services[name]["depends_on"].items()}

    assert depends("migrate") == {"db": "service_healthy"}
    for name in league_containers(services):
        assert depends(name) == {"migrate": "service_completed_successfully"}
    assert depends("gateway") == dict.fromkeys(league_containers(services), "service_healthy")
    assert services["migrate"]["restart"] == "no"


def test_what_is_waited_on_for_health_has_a_healthcheck(
    services: dict[str, dict[str, Any]],
) -> None:
    for name in ("db", "gateway", *league_containers(services)):
        check = services[name]["healthcheck"]
        assert check["test"][0] in ("CMD", "CMD-SHELL"), name
        assert {"interval", "timeout", "retries"} <= set(check), name
    for name in league_containers(services):
        probe = " ".join(services[name]["healthcheck"]["test"])
        port = environment(services[name])["LEAGUE_PORT"]
        assert f"http://127.0.0.1:{port}/readyz" in probe
    assert "pg_isready" in services["db"]["healthcheck"]["test"]
    assert "healthcheck" not in services["migrate"], "a one-shot job is waited on to complete"


# -- keys, secrets, configuration --------------------------------------------------------------


def test_each_service_gets_its_own_key_as_a_secret_and_no_other(
    spec: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    declared = spec["secrets"]
    for name, service in services.items():
        for secret in mounted_secrets(service):
            assert secret in declared, f"{name}: secret {secret} is not declared"
    for secret in declared.values():
        assert set(secret) == {"file"}, "secrets come from files (never from the environment)"
    for container, served in league_containers(services).items():
        service = services[container]
        env = environment(service)
        mounted = mounted_secrets(service)
        keys = {path for path in mounted.values() if path.endswith(".key")}
        assert keys == {f"{env['LEAGUE_KEYS_DIR']}/{served}.key"}, container
        assert env["LEAGUE_PASSPHRASE_FILE"] in mounted.values(), container
        assert env["PGPASSFILE"] in mounted.values(), container
        key_file = declared[next(s for s, p in mounted.items() if p.endswith(".key"))]["file"]
        assert Path(key_file).name == f"{served}.key"
    everywhere = [path for service in services.values() for path in mounted_secrets(service)]
    assert not [s for s in everywhere if "root" in s], "the root key stays offline"
    assert not [f for f in declared.values() if "root" in f["file"]]


def test_no_key_passphrase_or_password_in_any_environment_variable(
    services: dict[str, dict[str, Any]],
) -> None:
    for name, service in services.items():
        mounted = set(mounted_secrets(service).values())
        for variable, value in environment(service).items():
            if SECRET_WORDS.search(variable):
                assert variable.endswith(("_FILE", "_DIR")) or variable == "PGPASSFILE", (
                    f"{name}: {variable} names a secret but is not a file's path"
                )
                assert value == SECRETS_DIR or value in mounted, f"{name}: {variable}={value}"
            assert not re.search(r"[A-Za-z0-9_\-+/]{40,}", value), f"{name}: {variable}: key-like"
            if "://" in value:
                url = urllib.parse.urlsplit(value)
                assert url.password is None, f"{name}: {variable} holds a password"
    for name, service in services.items():
        assert "env_file" not in service, f"{name}: configuration is the file's environment"


def test_the_manifest_is_a_config_in_the_league_home(services: dict[str, dict[str, Any]]) -> None:
    for container in league_containers(services):
        service = services[container]
        home = environment(service)["LEAGUE_HOME"]
        settings = LeagueSettings(data_dir=Path(home))
        targets = {config["source"]: config["target"] for config in service["configs"]}
        assert targets == {"manifest": str(settings.manifest_path)}


def test_data_lives_in_named_volumes(
    spec: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    declared = set(spec["volumes"])
    used: dict[str, str] = {}
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source, target = volume.split(":")[:2]
            assert source in declared, f"{name}: {source} is not a named volume"
            assert source not in used, f"{source} is shared by {used[source]} and {name}"
            used[source] = name
            if name in league_containers(services):
                settings = LeagueSettings(data_dir=Path(environment(service)["LEAGUE_HOME"]))
                assert target == str(settings.checkpoint_path(name).parent)
    assert used["pgdata"] == "db"
    assert set(league_containers(services).values()) <= set(used.values())
    assert set(used) == declared


def test_the_image_holds_no_secret_and_runs_unprivileged() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert re.search(r"^USER league$", text, re.M)
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {"league/", "secrets/", "**/*.key", ".git/"} <= set(ignored)
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M)
    assert not [c for c in copied if "key" in c or "secret" in c or c.strip() == "."]


# -- the gateway -------------------------------------------------------------------------------


@dataclass
class Block:
    name: str
    args: list[str]
    directives: list[list[str]] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    def values(self, directive: str) -> list[list[str]]:
        return [d[1:] for d in self.directives if d[0] == directive]


def _tokens(text: str) -> Iterator[str]:
    pattern = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|([{};])|([^\s{};'\"]+)")
    for line in text.splitlines():
        line = re.sub(r"^\s*#.*$", "", line)
        for match in pattern.finditer(line):
            single, double, punct, word = match.groups()
            if word is not None and word.startswith("#"):
                break
            yield next(g for g in (single, double, punct, word) if g is not None)


def parse_nginx(text: str) -> Block:
    root = Block("", [])
    stack = [root]
    words: list[str] = []
    for token in _tokens(text):
        if token == "{":
            block = Block(words[0], words[1:])
            stack[-1].blocks.append(block)
            stack.append(block)
            words = []
        elif token == ";":
            stack[-1].directives.append(words)
            words = []
        elif token == "}":
            assert not words, f"unterminated directive {words}"
            stack.pop()
        else:
            words.append(token)
    assert len(stack) == 1, "unbalanced braces"
    assert not words, f"unterminated directive {words}"
    return root


@pytest.fixture(scope="module")
def gateway() -> Block:
    return parse_nginx(NGINX_CONF.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Each registered service's route templates, from the app ``league serve`` composes."""
    home = tmp_path_factory.mktemp("league")
    settings = LeagueSettings(data_dir=home, database_url="postgresql://league@db/league")
    create_league(settings)
    return {
        name: {resource.canonical for resource in compose(settings, [service]).router.resources()}
        for name, service in SERVICES.items()
    }


def server_of(gateway: Block) -> Block:
    (server,) = [b for b in gateway.blocks if b.name == "server"]
    return server


def upstream_of(location: Block) -> str | None:
    passes = location.values("proxy_pass")
    if not passes:
        return None
    (target,) = passes[0]
    url = urllib.parse.urlsplit(target)
    assert url.scheme == "http", target
    assert url.path == "", f"proxy_pass {target} rewrites the path"
    return url.netloc


def route_location(server: Block, path: str) -> Block:
    """The location nginx picks for ``path``: an exact match, else the longest prefix."""
    locations = [b for b in server.blocks if b.name == "location"]
    for location in locations:
        assert location.args[0] in ("=",) or location.args[0].startswith(("/", "@")), (
            f"location {location.args}: only exact and prefix locations are matched here"
        )
    exact = [b for b in locations if b.args[0] == "=" and b.args[1] == path]
    if exact:
        return exact[0]
    prefixes = [b for b in locations if b.args[0].startswith("/") and path.startswith(b.args[0])]
    return max(prefixes, key=lambda b: len(b.args[0]))


def sample(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", template)


def test_upstreams_are_the_league_containers(
    gateway: Block, services: dict[str, dict[str, Any]]
) -> None:
    upstreams = {b.args[0]: b for b in gateway.blocks if b.name == "upstream"}
    assert set(upstreams) == set(league_containers(services))
    for name, upstream in upstreams.items():
        port = environment(services[name])["LEAGUE_PORT"]
        assert upstream.values("server") == [[f"{name}:{port}"]]
    assert services["gateway"]["configs"] == [
        {"source": "gateway", "target": "/etc/nginx/conf.d/default.conf"}
    ]


def test_every_route_a_service_serves_reaches_a_service_serving_it(
    gateway: Block, routes: dict[str, set[str]], services: dict[str, dict[str, Any]]
) -> None:
    server = server_of(gateway)
    container_of = {served: name for name, served in league_containers(services).items()}
    operator = {endpoint.path for endpoint in OPERATOR_ENDPOINTS}
    for service, templates in routes.items():
        assert operator <= templates
        for template in templates:
            location = route_location(server, sample(template))
            upstream = upstream_of(location)
            if template in operator:
                assert upstream is None, f"the gateway proxies the operator's {template}"
                continue
            assert upstream is not None, f"{template} ({service}) is not proxied"
            reached = next(s for s, c in container_of.items() if c == upstream)
            assert template in routes.get(reached, set()), (
                f"{template} of the {service} reaches the {reached}, which does not serve it"
            )
            if not template.startswith(("/problems/", "/health")) and template != "/":
                assert reached == service, f"{template} reaches the {reached}, not the {service}"


def test_a_problem_type_is_asked_of_every_service_in_turn(
    gateway: Block, services: dict[str, dict[str, Any]]
) -> None:
    server = server_of(gateway)
    named = {b.args[0]: b for b in server.blocks if b.name == "location"}
    location = route_location(server, "/problems/x")
    asked = []
    while True:
        asked.append(upstream_of(location))
        fallbacks = [args for args in location.values("error_page") if "404" in args]
        if not fallbacks:
            break
        # Past a service that does not know the type, and past one that does not answer.
        assert {"404", "502", "503", "504"} <= set(fallbacks[0][:-1])
        assert location.values("proxy_intercept_errors") == [["on"]]
        assert location.values("recursive_error_pages") == [["on"]]
        location = named[fallbacks[0][-1]]
    assert sorted(asked) == sorted(league_containers(services))


def test_the_gateways_own_answers_are_problems_the_league_describes(gateway: Block) -> None:
    slugs = {spec.slug for spec in PROBLEMS.values()} | set(HTTP_SLUGS.values())
    answers = [b for b in server_of(gateway).blocks if b.name == "location" and b.values("return")]
    assert answers
    for location in answers:
        assert location.values("default_type") == [["application/problem+json"]]
        ((status, body),) = location.values("return")
        problem = json.loads(body)
        slug = problem["type"].removeprefix("/problems/")
        assert slug in slugs
        assert problem["title"] == title_of(slug)
        assert problem["status"] == int(status)


# -- docker compose's own check ----------------------------------------------------------------


def test_docker_compose_config_accepts_the_file(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker CLI on this machine: `docker compose config` not run")
    probe = subprocess.run(
        [docker, "compose", "version"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip("the docker CLI has no compose plugin: `docker compose config` not run")
    result = subprocess.run(
        [docker, "compose", "--file", str(COMPOSE_FILE), "config", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr


#: How the file and docs/operations.md state the Compose version the file needs.
NEEDS_V2 = "Compose v2"
OPERATIONS = ROOT / "docs" / "operations.md"


def test_the_file_and_the_docs_say_it_needs_compose_v2() -> None:
    """Compose v1 drops the top-level ``configs`` (the manifest) without a word: the file's
    opening comment and docs/operations.md's "Running in containers" both say v2 is needed,
    and why, and the file does use ``configs``."""
    text = COMPOSE_FILE.read_text(encoding="utf-8")
    header = text[: text.index("\nname:")]
    assert f"Needs {NEEDS_V2}" in header
    assert "configs" in header
    assert "configs" in yaml.safe_load(text)
    docs = OPERATIONS.read_text(encoding="utf-8")
    section = docs[docs.index("## Running in containers") :]
    section = section[: section.index("\n## ", 1)]
    assert f"It needs {NEEDS_V2}" in section
    assert "`configs`" in section
    assert "docker compose version" in section


def test_the_docker_compose_here_is_v2() -> None:
    """Where a docker CLI with a compose command is installed, it is Compose v2 or later (the
    file needs it, see above)."""
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker CLI on this machine: the Compose version not checked")
    probe = subprocess.run(
        [docker, "compose", "version", "--short"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if probe.returncode != 0:
        pytest.skip("the docker CLI has no compose plugin: the Compose version not checked")
    version = probe.stdout.strip().removeprefix("v")
    assert int(version.split(".")[0]) >= 2, probe.stdout


def test_nginx_accepts_the_gateway(tmp_path: Path, services: dict[str, dict[str, Any]]) -> None:
    """``nginx -t`` over the gateway as the nginx image includes it (inside ``http``), with the
    containers' names resolved to loopback as a compose network resolves them."""
    nginx = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None
    )
    if nginx is None:
        pytest.skip("no nginx on this machine (Debian: apt-get install nginx-light)")
    text = NGINX_CONF.read_text(encoding="utf-8")
    for name in league_containers(services):
        text = text.replace(f"server {name}:", "server 127.0.0.1:")
    (tmp_path / "default.conf").write_text(text, encoding="utf-8")
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  client_body_temp_path {tmp_path}/body;\n"
        f"  proxy_temp_path {tmp_path}/proxy;\n  include {tmp_path}/default.conf;\n}}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_gateway_is_trusted_to_name_clients_and_only_it_is_reachable(
    services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The services believe X-Forwarded-For from the compose network's private ranges; that
    is sound only while no service publishes a port (so every peer is a container beside it)
    and the gateway overwrites the header with the address it saw."""
    for name in league_containers(services):
        service = services[name]
        assert "ports" not in service, f"{name} publishes a port"
        monkeypatch.setenv("LEAGUE_TRUSTED_PROXIES", environment(service)["LEAGUE_TRUSTED_PROXIES"])
        trusted = LeagueSettings.from_env().trusted_proxies
        assert trusted
        assert all(network.is_private for network in trusted)
    assert "ports" in services["gateway"]
    headers = server_of(parse_nginx(NGINX_CONF.read_text(encoding="utf-8"))).values(
        "proxy_set_header"
    )
    assert ["X-Forwarded-For", "$remote_addr"] in headers
