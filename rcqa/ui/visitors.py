"""Who a visitor is to the server's per-address limits: the visitor's address (behind the operator's reverse
proxies, the one the first of them appended to X-Forwarded-For), and how many sessions one address may hold open:
each session keeps its own state (an uploaded file's questions, results), so an address's sessions are its memory."""
from __future__ import annotations

import os
import threading
from collections.abc import Callable

import streamlit as st
from streamlit import runtime
from streamlit.runtime.context import StreamlitHeaders
from streamlit.runtime.scriptrunner import get_script_run_ctx

TRUSTED_PROXIES_ENV, SESSIONS_ENV = "RCQA_TRUSTED_PROXIES", "RCQA_SESSIONS_PER_ADDRESS"
SESSIONS_PER_ADDRESS = 8  # open tabs of one address; raise it for visitors behind one shared address (an office)


def _count(variable: str, default: int) -> int:
    """A whole number of at least 1 from the environment, else the default."""
    text = os.environ.get(variable, "").strip() or str(default)
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"${variable} must be a whole number of at least 1, not {text[:20]!r}")
    return int(text)


def client_address(address: str | None, headers: StreamlitHeaders, proxies: int | None = None) -> str | None:
    """The visitor's address from the connection's (st.context.ip_address: None from loopback) and its headers:
    the connection's own, or behind `proxies` reverse proxies ($RCQA_TRUSTED_PROXIES, default 1; the last one on
    this machine, connecting from loopback) the address the first of them appended to X-Forwarded-For: the
    `proxies`-th from the end over every header line, since each proxy appends to the line or adds a line of its
    own, and what comes before is the visitor's to forge. None for a visitor on this machine, whose sessions then
    count one by one."""
    if address is not None:
        return address
    hops = [hop.strip() for line in headers.get_all("X-Forwarded-For") for hop in line.split(",") if hop.strip()]
    if not hops:
        return None
    proxies = _count(TRUSTED_PROXIES_ENV, 1) if proxies is None else proxies
    return hops[max(0, len(hops) - proxies)]


class SessionLimit:
    """At most `per_address` open sessions for one address; sessions without an address (this machine's) are not
    counted. Standard library only."""

    def __init__(self, per_address: int):
        self.per_address = per_address
        self._addresses: dict[str, str] = {}  # admitted session → its address
        self._lock = threading.Lock()

    def admit(self, session: str, address: str | None, is_open: Callable[[str], bool]) -> bool:
        """Whether the session may be served: one admitted before stays admitted; a new one is refused while its
        address has per_address sessions that is_open (closed ones are forgotten here)."""
        if address is None:
            return True
        with self._lock:
            if session in self._addresses:
                return True
            self._addresses = {known: at for known, at in self._addresses.items() if is_open(known)}
            if sum(at == address for at in self._addresses.values()) >= self.per_address:
                return False
            self._addresses[session] = address
            return True


@st.cache_resource
def session_limit() -> SessionLimit:
    """The process's one count of sessions per address ($RCQA_SESSIONS_PER_ADDRESS, default 8)."""
    return SessionLimit(_count(SESSIONS_ENV, SESSIONS_PER_ADDRESS))


def admitted() -> bool:
    """Whether this session may be served; if not, one sentence saying why is shown."""
    context = get_script_run_ctx()
    assert context is not None  # called from a page, inside a script run (an AppTest's too)
    session = context.session_id
    address = client_address(st.context.ip_address, st.context.headers)
    is_open = runtime.get_instance().is_active_session if runtime.exists() else lambda _: True
    limit = session_limit()
    if limit.admit(session, address, is_open):
        return True
    sessions = f"{limit.per_address} session{'s' * (limit.per_address != 1)}"
    st.error(f"Your address already has {sessions} of this app open, the most this server serves one address: close "
             "a tab, then reload this page.")
    return False
