"""Serving over streamable HTTP: the bind check, the Host/Origin/token gate, body size, uvicorn."""

from __future__ import annotations

import hmac
import ipaddress
import logging
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from vaultmem import __version__
from vaultmem.errors import UsageError
from vaultmem.server.app import VaultServer, build_server
from vaultmem.server.running import configure_logging, serving

if TYPE_CHECKING:
    from vaultmem.vault import Vault

log = logging.getLogger("vaultmem.server")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 48400
MAX_BODY_BYTES = 1024 * 1024  # a tool call's arguments are a few hundred bytes


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise UsageError(
            f"refusing to serve the vault on {host} without a token: anyone who can reach it "
            "could read every note. Pass --token SECRET (or set VAULTMEM_MCP_TOKEN), or bind "
            f"{DEFAULT_HOST}"
        )


def allowed_hosts(host: str, port: int, extra: tuple[str, ...] = ()) -> list[str]:
    """Host header values a request may carry: the bind address and localhost forms, with port."""
    names = {"127.0.0.1", "localhost", "[::1]", *extra}
    if host not in ("0.0.0.0", "::"):
        names.add(f"[{host}]" if ":" in host else host)
    out = []
    for name in sorted(names):
        out += [name, f"{name}:{port}"]
    return out


class Gate:
    """Checks every HTTP request before the app sees it: Host (DNS rebinding), then the token.

    `GET /health` needs no token (it tells nothing about the vault), but still a good Host.
    """

    def __init__(self, app: ASGIApp, hosts: list[str], token: str | None) -> None:
        self.app = app
        self.hosts = {h.lower() for h in hosts}
        self.origins = {f"{scheme}://{h}" for h in self.hosts for scheme in ("http", "https")}
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Host names (and an Origin's scheme and host) are case-insensitive: `LOCALHOST:8848`
        # is this server, and the SDK's own check behind this gate compares them as written
        scope = {**scope, "headers": [_lowered(k, v) for k, v in scope["headers"]]}
        request = Request(scope)
        host = request.headers.get("host", "")
        if host not in self.hosts:
            await _refuse(421, f"unexpected Host header {host!r}")(scope, receive, send)
            return
        origin = request.headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            await _refuse(403, f"unexpected Origin {origin!r}")(scope, receive, send)
            return
        if self.expected is not None and scope["path"] != "/health":
            given = request.headers.get("authorization", "").encode()
            # compare_digest takes time independent of where the strings differ.
            if not hmac.compare_digest(given, self.expected):
                response = _refuse(
                    401, "a valid 'Authorization: Bearer <token>' header is required"
                )
                response.headers["WWW-Authenticate"] = 'Bearer realm="vaultmem"'
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _lowered(name: bytes, value: bytes) -> tuple[bytes, bytes]:
    return (name, value.lower()) if name.lower() in (b"host", b"origin") else (name, value)


def _refuse(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


def http_app(
    server: VaultServer,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    extra_hosts: tuple[str, ...] = (),
    max_body: int = MAX_BODY_BYTES,
) -> ASGIApp:
    """The streamable-HTTP app: MCP at /mcp, `GET /health`, behind the Host and token gate."""
    check_bind(host, token)
    hosts = allowed_hosts(host, port, extra_hosts)

    @server.custom_route("/health", methods=["GET"])  # type: ignore[untyped-decorator]
    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "server": "vaultmem", "version": __version__})

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"{s}://{h}" for h in hosts for s in ("http", "https")],
    )
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        max_request_body_size=max_body,
        host=host,
    )
    return Gate(app, hosts, token)


def run_http(
    vault: Vault,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    extra_hosts: tuple[str, ...] = (),
) -> None:
    """Serve MCP over streamable HTTP at http://HOST:PORT/mcp until interrupted."""
    import uvicorn

    configure_logging()
    check_bind(host, token)  # before indexing: a refused start should be quick
    with serving(vault) as live:
        app = http_app(build_server(vault, live), host, port, token, extra_hosts)
        log.info("serving %s at http://%s:%d/mcp", vault.root, host, port)
        uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
