"""The sandbox as an ASGI app, an in-process httpx transport, and an HTTP server.

One implementation serves both ways: tests and `make demo` plug `SandboxTransport` under the
real client (no port, no thread), `adwh sandbox serve` runs the same app under uvicorn.
"""

import asyncio
import time
from urllib.parse import parse_qsl

import httpx
import orjson

from sandbox.faults import ConnectionDropped
from sandbox.service import SandboxService

# Spec 7.1's error `type` of a status a broken route answers with, where it is not the default.
ERROR_TYPES = {401: "authentication_error", 429: "rate_limit_error"}


class SandboxApp:
    """ASGI callable around a `SandboxService`, applying its fault plan."""

    def __init__(self, service: SandboxService) -> None:
        self.service = service
        self._counter = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        self._counter += 1
        number = self._counter
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        account = headers.get("service-account")
        fault = self.service.faults.pick(number, account) if scope["path"] != "/health" else None
        broken = self.service.faults.broken(scope["path"], account)
        if broken is not None:
            kind = ERROR_TYPES.get(
                broken, "api_error" if broken >= 500 else "invalid_request_error"
            )
            body = {"error": {"type": kind, "message": f"{scope['path']} is not available."}}
            await _respond(
                send, broken, orjson.dumps(body), [(b"content-type", b"application/json")]
            )
            return
        if fault == "slow":
            await asyncio.sleep(self.service.faults.slow_seconds)
        if fault == "429":
            headers = [(b"content-type", b"application/json")]
            retry_after = self.service.faults.retry_after(number, time.time())
            if retry_after is not None:
                headers.append((b"retry-after", retry_after.encode()))
            body = {"error": {"type": "rate_limit_error", "message": "Too many requests."}}
            await _respond(send, 429, orjson.dumps(body), headers)
            return
        if fault == "5xx":
            body = {"error": {"type": "api_error", "message": "Internal error, try again."}}
            await _respond(send, 503, orjson.dumps(body), [(b"content-type", b"application/json")])
            return
        if fault == "502":  # a gateway's answer: no body at all
            await _respond(send, 502, b"", [])
            return
        query = parse_qsl(scope["query_string"].decode(), keep_blank_values=True)
        status, body, extra = self.service.handle(scope["method"], scope["path"], query, headers)
        # Variant 0 is plain orjson; others may write money as JSON numbers (`variants.py`).
        payload = b"" if body is None else self.service.variant.encode(scope["path"], body)
        response_headers = [(b"content-type", b"application/json")]
        response_headers += [(k.encode(), v.encode()) for k, v in extra.items()]
        if fault == "truncate" and payload:
            payload = payload[: len(payload) // 2]
        if fault == "drop":
            await send(
                {"type": "http.response.start", "status": status, "headers": response_headers}
            )
            await send({"type": "http.response.body", "body": payload[:10], "more_body": True})
            raise ConnectionDropped
        await _respond(send, status, payload, response_headers)


async def _respond(send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class SandboxTransport(httpx.AsyncBaseTransport):
    """httpx transport that answers from the sandbox in-process, as a network would."""

    def __init__(self, service: SandboxService) -> None:
        self.service = service
        self._asgi = httpx.ASGITransport(app=SandboxApp(service))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self._asgi.handle_async_request(request)
        except ConnectionDropped:
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body", request=request
            ) from None


def serve(service: SandboxService, port: int) -> None:
    """Serve the sandbox over HTTP on 127.0.0.1 until interrupted."""
    import uvicorn

    uvicorn.run(
        SandboxApp(service), host="127.0.0.1", port=port, log_level="warning", access_log=False
    )
