"""The HTTP client under `ServiceClient`: httpx's API, over aiohttp on the network.

One API, whatever carries a request. Over the network the transport is aiohttp's, through
httpx-aiohttp: its HTTP parser is C where httpx's own (h11) is Python, and a page costs the
client less CPU (bench/SPEED.md, "Issue 59" and "Issue 71"). In process the transport is
handed in: the embedded sandbox answers through one (`pipelines/plugin.py`), and so do the
tests' faulty services. httpx configures either as it configures any transport: the query
string, the timeouts, TLS, and the proxy the environment names (`HTTPS_PROXY`, `NO_PROXY`, …,
read once, when the client is made; not for a transport handed in).
"""

import os
import ssl
from functools import cache

import aiohttp
import httpx
from httpx_aiohttp import HttpxAiohttpClient

ACCEPT_JSON = {"Accept": "application/json"}

# What "no complete answer came" is: no connection, a reset, a body cut short, a socket
# timeout. httpx's transport errors; aiohttp's that the package lets through unmapped (an answer
# that is not HTTP: `ClientResponseError`); and a socket's own, should one come through bare.
UNANSWERED = (httpx.TransportError, aiohttp.ClientError, OSError)


def http_client(
    base_url: str,
    transport: httpx.AsyncBaseTransport | None,
    *,
    max_in_flight: int,
    timeout: httpx.Timeout,
    verify: bool,
) -> httpx.AsyncClient:
    """A pool of `max_in_flight` connections kept alive, redirects not followed, JSON asked
    for; over aiohttp unless a `transport` is given (in process: no TLS context is built). The
    timeouts apply per socket operation (the client bounds each attempt as a whole): aiohttp's
    `sock_connect` and `sock_read` are httpx's connect and read, its `connect` httpx's pool."""
    return HttpxAiohttpClient(
        base_url=base_url,
        transport=transport,
        timeout=timeout,
        limits=httpx.Limits(max_connections=max_in_flight, max_keepalive_connections=max_in_flight),
        verify=tls_context(verify) if transport is None else verify,
        headers=ACCEPT_JSON,
    )


def tls_context(verify: bool) -> ssl.SSLContext:
    """One TLS context per process and trust store: building one loads the CA bundle (~30 ms,
    a client per extraction step). A private authority is trusted through `SSL_CERT_FILE` or
    `SSL_CERT_DIR`, as httpx reads them; they are part of the key, so a changed one counts."""
    return _tls_context(verify, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@cache
def _tls_context(verify: bool, cafile: str | None, capath: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context(verify=verify)


def said(fault: BaseException) -> str:
    """The fault in the words of the library that met it. httpx-aiohttp raises aiohttp's as
    httpx's, loosely (a refused connection or a reset becomes `ConnectTimeout`) and in words
    that hold the TLS context's repr; aiohttp's own, its cause, is said instead."""
    if isinstance(fault.__cause__, aiohttp.ClientError):
        fault = fault.__cause__
    name = type(fault).__name__
    if isinstance(fault, aiohttp.ClientConnectorCertificateError):
        return f"{name}: cannot connect to {fault.host}:{fault.port}: {fault.certificate_error}"
    if isinstance(fault, aiohttp.ClientConnectorError):
        return f"{name}: cannot connect to {fault.host}:{fault.port}: {fault.strerror}"
    return f"{name}: {fault}"
