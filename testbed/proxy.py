"""A minimal signing-in reverse proxy in front of Streamlit, for tests and the reliability campaign:
what nginx with ``auth_basic`` does in the README's set-up, in a few lines of Starlette and uvicorn
(Streamlit's own web stack, so nothing more to install).

    python -m testbed.proxy --upstream http://127.0.0.1:8501 --port 8600 --user alice --secret S

Every request gets ``X-Remote-User: <user>`` and ``X-Semanno-Proxy-Secret: <secret>`` set by the proxy
(whatever the client sent in those headers is dropped), HTTP and the WebSocket stream alike. The user
is fixed per proxy: a test of identity, not of passwords.
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

DROPPED = {"host", "x-remote-user", "x-semanno-proxy-secret", "content-length", "transfer-encoding", "connection",
           "upgrade", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
           "sec-websocket-accept", "sec-websocket-protocol", "accept-encoding"}


def proxied_headers(headers, user: str, secret: str) -> dict:
    """The client's headers as the upstream sees them: the identity headers are the proxy's own."""
    out = {k: v for k, v in headers.items() if k.lower() not in DROPPED}
    out.update({"X-Remote-User": user, "X-Semanno-Proxy-Secret": secret})
    return out


def app(upstream: str, user: str, secret: str):
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect
    from websockets.asyncio.client import connect

    upstream = upstream.rstrip("/")

    async def http(request: Request) -> Response:
        body = await request.body()
        req = urllib.request.Request(upstream + request.url.path + (f"?{request.url.query}" if request.url.query else ""),
                                     data=body or None, method=request.method,
                                     headers=proxied_headers(request.headers, user, secret))

        def fetch():
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    return r.status, r.headers.items(), r.read()
            except urllib.error.HTTPError as e:
                return e.code, e.headers.items(), e.read()

        status, headers, content = await asyncio.to_thread(fetch)
        keep = {k: v for k, v in headers if k.lower() not in ("content-length", "transfer-encoding", "connection")}
        return Response(content, status_code=status, headers=keep)

    async def stream(ws: WebSocket) -> None:
        protocols = [p.strip() for p in ws.headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
        url = upstream.replace("http", "ws", 1) + ws.url.path + (f"?{ws.url.query}" if ws.url.query else "")
        async with connect(url, additional_headers=proxied_headers(ws.headers, user, secret),
                           subprotocols=protocols or None, max_size=None) as peer:
            await ws.accept(subprotocol=peer.subprotocol)

            async def down():
                async for msg in peer:
                    await (ws.send_bytes(msg) if isinstance(msg, bytes) else ws.send_text(msg))

            task = asyncio.create_task(down())
            try:
                while True:
                    msg = await ws.receive()
                    if msg["type"] == "websocket.disconnect":
                        break
                    await peer.send(msg["bytes"] if msg.get("bytes") is not None else msg["text"])
            except WebSocketDisconnect:
                pass
            finally:
                task.cancel()

    methods = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"]
    return Starlette(routes=[WebSocketRoute("/_stcore/stream", stream), Route("/{path:path}", http, methods=methods)])


@contextmanager
def running(upstream: str, port: int, user: str, secret: str):
    """The proxy on 127.0.0.1:``port`` in a background thread, for the length of the block."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app(upstream, user, secret), host="127.0.0.1", port=port,
                                           log_level="warning", ws="websockets-sansio"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    deadline = time.time() + 20
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        t.join(10)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m testbed.proxy", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--upstream", default="http://127.0.0.1:8501")
    p.add_argument("--port", type=int, default=8600)
    p.add_argument("--user", required=True)
    p.add_argument("--secret", required=True)
    a = p.parse_args(argv)
    with running(a.upstream, a.port, a.user, a.secret) as url:
        print(f"proxy for {a.upstream} as {a.user} on {url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
