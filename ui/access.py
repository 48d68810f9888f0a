"""Who may use this server, and who they are.

- Bound to localhost (the default in .streamlit/config.toml): one person's own machine, no sign-in.
- Sign-in configured (an ``[auth]`` section in .streamlit/secrets.toml, Streamlit's OIDC login):
  every page asks for it, and saved groups record the signed-in identity.
- Behind a reverse proxy that authenticates (basic auth on an offline box, see the README): the
  app stays bound to localhost and, with ``SEMANNO_PROXY_USER_HEADER`` naming the header the proxy
  sets (e.g. ``X-Remote-User``), records that identity. Anyone who reaches Streamlit's port directly
  (another local user of a shared box) could send that header too, so the header is believed only
  on requests that also carry the shared secret ``SEMANNO_PROXY_SECRET`` in ``X-Semanno-Proxy-Secret``,
  which only the proxy knows; every other request is refused.
- Bound to anything else with neither: every page refuses to serve, unless the operator sets
  ``SEMANNO_ALLOW_UNAUTHENTICATED=1`` (then a warning stays in the sidebar).
"""

from __future__ import annotations

import hmac
import os
from typing import Mapping

import streamlit as st

from ui.text import md

LOCAL_ADDRESSES = {"localhost", "127.0.0.1", "::1"}
ALLOW_FLAG = "SEMANNO_ALLOW_UNAUTHENTICATED"
PROXY_HEADER = "SEMANNO_PROXY_USER_HEADER"
PROXY_SECRET = "SEMANNO_PROXY_SECRET"
SECRET_HEADER = "X-Semanno-Proxy-Secret"
MIN_SECRET_CHARS = 16


class ProxyRefused(Exception):
    """A request in proxy-header mode that does not prove it came through the proxy; the message is
    what the page says."""


def proxy_user(headers: Mapping[str, str], env: Mapping[str, str]) -> str | None:
    """The user the authenticating proxy names, in proxy-header mode (``SEMANNO_PROXY_USER_HEADER`` set);
    None when that mode is off. ProxyRefused when the operator set no secret, or the request does not
    carry it (a client talking to the port directly), or the proxy named no user."""
    header = env.get(PROXY_HEADER)
    if not header:
        return None
    secret = env.get(PROXY_SECRET) or ""
    if len(secret) < MIN_SECRET_CHARS:
        raise ProxyRefused(f"{PROXY_HEADER} is set but {PROXY_SECRET} is not (or is shorter than {MIN_SECRET_CHARS} "
                           f"characters): without it anyone reaching this port could claim any name. Set it, and "
                           f"have the proxy send it in the {SECRET_HEADER} header (README, 'On a shared or GPU box').")
    sent = headers.get(SECRET_HEADER) or ""
    if not hmac.compare_digest(sent.encode("utf-8", "replace"), secret.encode("utf-8")):
        raise ProxyRefused("This server accepts requests only through its signing-in proxy.")
    user = (headers.get(header) or "").strip()
    if not user:
        raise ProxyRefused(f"The proxy sent no user name in {header}.")
    return user[:120]


def exposed(address: str | None = None) -> bool:
    """True when the server listens beyond this machine (Streamlit's default is every address)."""
    address = st.get_option("server.address") if address is None else address
    return not address or address.strip("[]") not in LOCAL_ADDRESSES


def sign_in_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets.toml at all (Streamlit raises its own not-found error)
        return False


def request_headers() -> Mapping[str, str]:
    """The headers of the request that opened this browser session (its WebSocket upgrade)."""
    return st.context.headers


def identity() -> str | None:
    """The signed-in user (email, else name), or the proxy's user header; None when anonymous."""
    if sign_in_configured() and bool(st.user.get("is_logged_in", False)):
        return str(st.user.get("email") or st.user.get("name") or "signed-in user")
    try:
        return proxy_user(request_headers(), os.environ)
    except ProxyRefused:  # gate() stops such a request before any page runs
        return None


XSRF_COOKIE = "_streamlit_xsrf"


def browser_id(cookies: Mapping[str, str] | None = None) -> str:
    """A stable name for the browser this request comes from, or "" when it cannot be told.

    Streamlit (through Tornado) gives every browser an XSRF cookie ``2|mask|masked token|time``
    whose token stays the same for that browser while the mask changes on every page load; the name
    is a hash of the unmasked token, so the token itself is never stored. Drafts are bound to it: on
    a server without sign-in, where every user is "local", a browser sees only its own drafts."""
    import hashlib

    cookies = st.context.cookies if cookies is None else cookies
    parts = (cookies.get(XSRF_COOKIE) or "").split("|")
    try:
        if len(parts) != 4 or parts[0] != "2":
            return ""
        mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return ""
    if len(mask) != 4 or not masked:
        return ""
    token = bytes(b ^ mask[i % 4] for i, b in enumerate(masked))
    return hashlib.sha256(b"semanno-browser:" + token).hexdigest()[:32]


def signed_in() -> bool:
    """True when the user is known by sign-in or the proxy (not the anonymous "local")."""
    return identity() is not None


def gate() -> None:
    """Every page's first check: sign in, or refuse an exposed server without sign-in."""
    if sign_in_configured():
        if not bool(st.user.get("is_logged_in", False)):
            st.title("Semantic Annotator")
            st.info("Sign in to use this server.")
            st.button("Sign in", on_click=st.login, type="primary", key="sign_in")
            st.stop()
        st.sidebar.caption(f"Signed in as {md(identity())}")
        st.sidebar.button("Sign out", on_click=st.logout, key="sign_out")
        return
    try:
        user = proxy_user(request_headers(), os.environ)
    except ProxyRefused as exc:
        st.title("Semantic Annotator")
        st.error(str(exc))
        st.stop()
    if user is not None:
        st.sidebar.caption(f"Signed in through the proxy as {md(user)}")
        return
    if not exposed():
        return
    if os.environ.get(ALLOW_FLAG) == "1":
        st.sidebar.warning("This server is reachable from other machines without sign-in "
                           f"({ALLOW_FLAG}=1): anyone who reaches it can read and change every group.")
        return
    st.error("This server listens on other machines' network (server.address is not localhost) and has no "
             "sign-in, so it refuses to serve: anyone reaching it could read the corpora and change saved groups. "
             "Configure sign-in (an [auth] section in .streamlit/secrets.toml), or bind to localhost behind an "
             f"authenticating reverse proxy, or, on a network you trust, set {ALLOW_FLAG}=1. See the README, "
             "'On a shared or GPU box'.")
    st.stop()
