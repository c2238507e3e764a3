"""How one GET reaches the service and comes back as bytes, in one of two ways.

Over the network with aiohttp: its HTTP parser is C, where httpx's (h11) is Python, and a
page costs the client a half to a third of the CPU (bench/SPEED.md, "Issue 59"). Or through
an httpx transport handed in: the embedded sandbox answers in process through one
(`pipelines/plugin.py`), and so do the tests' faulty services. Both map their library's faults
to `UnansweredError`, so what is retried, and what is said, is decided once, in `http.py`.
"""

import os
import ssl
from dataclasses import dataclass
from functools import cache
from typing import Protocol
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass  # noqa: TID251 (they send nothing)

import aiohttp
import httpx


@dataclass(frozen=True, slots=True)
class Answer:
    """What came back: the status, its reason phrase, the body as sent, and `Retry-After`."""

    status: int
    reason: str
    content: bytes
    retry_after: str | None


class UnansweredError(Exception):
    """No complete answer came: no connection, a reset, a body cut short, a socket timeout.
    The message names the library's fault; its cause is the library's exception (a refused
    certificate is found there)."""


class Fetcher(Protocol):
    base_url: str

    async def get(self, path: str, params: dict | None, headers: dict[str, str]) -> Answer: ...

    async def aclose(self) -> None: ...


ACCEPT_JSON = {"Accept": "application/json"}


def tls_context(verify: bool) -> ssl.SSLContext:
    """One TLS context per process and trust store: building one loads the CA bundle (~30 ms,
    a client per extraction step). A private authority is trusted through `SSL_CERT_FILE` or
    `SSL_CERT_DIR`, as httpx reads them; they are part of the key, so a changed one counts."""
    return _tls_context(verify, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@cache
def _tls_context(verify: bool, cafile: str | None, capath: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context(verify=verify)


class NetworkFetcher:
    """GETs over HTTP(S) with aiohttp: a pool of `max_in_flight` connections kept alive, the
    connect and read timeouts per socket operation (the client bounds each attempt as a
    whole), redirects not followed, the proxy the environment names (`HTTPS_PROXY`,
    `NO_PROXY`, …) as httpx used it.

    The proxy is read once: aiohttp's `trust_env` reads it, and ~/.netrc, again on every
    request, each in a thread (two thread hand-offs a page, measured at a third of its CPU)."""

    def __init__(
        self, base_url: str, *, max_in_flight: int, timeout: httpx.Timeout, verify: bool
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._limit = max_in_flight
        self._timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=timeout.connect, sock_read=timeout.read
        )
        self._tls = tls_context(verify)
        self._proxy = environment_proxy(self.base_url)
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        """The session, made on first use: aiohttp binds it to the running event loop."""
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit, ssl=self._tls),
                timeout=self._timeout,
                headers=ACCEPT_JSON,
                proxy=self._proxy,
            )
        return self._session

    async def get(self, path: str, params: dict | None, headers: dict[str, str]) -> Answer:
        query = {name: _text(value) for name, value in (params or {}).items()}
        try:
            async with self._open().get(
                self.base_url + path, params=query, headers=headers, allow_redirects=False
            ) as answer:
                content = await answer.read()
        except (aiohttp.ClientError, OSError) as fault:
            raise UnansweredError(_said(fault)) from fault
        return Answer(
            answer.status, answer.reason or "", content, answer.headers.get("Retry-After")
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def environment_proxy(base_url: str) -> str | None:
    """The proxy the environment names for `base_url`, unless `NO_PROXY` exempts its host."""
    parts = urlsplit(base_url)
    if not parts.hostname or proxy_bypass(parts.hostname):
        return None
    return getproxies().get(parts.scheme)


class TransportFetcher:
    """GETs through an httpx transport (in process: no sockets, no TLS)."""

    def __init__(
        self,
        base_url: str,
        transport: httpx.AsyncBaseTransport,
        *,
        max_in_flight: int,
        timeout: httpx.Timeout,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            transport=transport,
            timeout=timeout,
            limits=httpx.Limits(
                max_connections=max_in_flight, max_keepalive_connections=max_in_flight
            ),
            headers=ACCEPT_JSON,
        )

    async def get(self, path: str, params: dict | None, headers: dict[str, str]) -> Answer:
        try:
            answer = await self._http.get(path, params=params, headers=headers)
        except httpx.TransportError as fault:
            raise UnansweredError(f"{type(fault).__name__}: {fault}") from fault
        return Answer(
            answer.status_code,
            answer.reason_phrase,
            answer.content,
            answer.headers.get("retry-after"),
        )

    async def aclose(self) -> None:
        await self._http.aclose()


def _said(fault: Exception) -> str:
    """The fault in aiohttp's words, less the TLS context's repr it puts in a connection's."""
    name = type(fault).__name__
    if isinstance(fault, aiohttp.ClientConnectorCertificateError):
        return f"{name}: cannot connect to {fault.host}:{fault.port}: {fault.certificate_error}"
    if isinstance(fault, aiohttp.ClientConnectorError):
        return f"{name}: cannot connect to {fault.host}:{fault.port}: {fault.strerror}"
    return f"{name}: {fault}"


def _text(value: object) -> str:
    """A query value as httpx writes it, so both ways send the same query."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
