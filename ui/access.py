"""Who may use this server, and who they are.

- Bound to localhost (the default in .streamlit/config.toml): one person's own machine, no sign-in.
- Sign-in configured (an ``[auth]`` section in .streamlit/secrets.toml, Streamlit's OIDC login):
  every page asks for it, and saved groups record the signed-in identity.
- Behind a reverse proxy that authenticates (basic auth on an offline box, see the README): the
  app stays bound to localhost and, with ``SEMANNO_PROXY_USER_HEADER`` naming the header the proxy
  sets (e.g. ``X-Remote-User``), records that identity.
- Bound to anything else with neither: every page refuses to serve, unless the operator sets
  ``SEMANNO_ALLOW_UNAUTHENTICATED=1`` (then a warning stays in the sidebar).
"""

from __future__ import annotations

import os

import streamlit as st

LOCAL_ADDRESSES = {"localhost", "127.0.0.1", "::1"}
ALLOW_FLAG = "SEMANNO_ALLOW_UNAUTHENTICATED"
PROXY_HEADER = "SEMANNO_PROXY_USER_HEADER"


def exposed(address: str | None = None) -> bool:
    """True when the server listens beyond this machine (Streamlit's default is every address)."""
    address = st.get_option("server.address") if address is None else address
    return not address or address.strip("[]") not in LOCAL_ADDRESSES


def sign_in_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets.toml at all (Streamlit raises its own not-found error)
        return False


def identity() -> str | None:
    """The signed-in user (email, else name), or the proxy's user header; None when anonymous."""
    if sign_in_configured() and bool(st.user.get("is_logged_in", False)):
        return str(st.user.get("email") or st.user.get("name") or "signed-in user")
    header = os.environ.get(PROXY_HEADER)
    if header:
        value = st.context.headers.get(header)
        if value:
            return value.strip()[:120]
    return None


def gate() -> None:
    """Every page's first check: sign in, or refuse an exposed server without sign-in."""
    if sign_in_configured():
        if not bool(st.user.get("is_logged_in", False)):
            st.title("Semantic Annotator")
            st.info("Sign in to use this server.")
            st.button("Sign in", on_click=st.login, type="primary", key="sign_in")
            st.stop()
        st.sidebar.caption(f"Signed in as {identity()}")
        st.sidebar.button("Sign out", on_click=st.logout, key="sign_out")
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
