"""Who a visitor is to the server's per-address limits: the visitor's address, and how many sessions one address may
hold open: each session keeps its own state (an uploaded file's questions, results), so an address's sessions are
its memory.

The address is the one Streamlit's server hands over (st.context.ip_address). Streamlit 1.67 serves through
uvicorn, whose proxy-headers middleware has already read X-Forwarded-For for it: where the connection comes from a
peer $FORWARDED_ALLOW_IPS lists (uvicorn's setting: addresses or networks, "127.0.0.1,::1" by default), the
address is the last hop of X-Forwarded-For, over all its lines, that the setting does not list, so a proxy on the
list is passed over and whatever a visitor wrote before their own address is never reached; from any other peer
the header is ignored and the peer is the address. That one setting names the proxies: rcqa reads no header itself
(docs/serving.md: A visitor's address)."""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

import streamlit as st
from streamlit import runtime
from streamlit.runtime.context import StreamlitHeaders
from streamlit.runtime.scriptrunner import get_script_run_ctx

LOG = logging.getLogger(__name__)
SESSIONS_ENV, FORWARDED_ENV = "RCQA_SESSIONS_PER_ADDRESS", "FORWARDED_ALLOW_IPS"
RETIRED_ENV = "RCQA_TRUSTED_PROXIES"  # a count of hops, read before uvicorn resolved the address: now refused
SESSIONS_PER_ADDRESS = 8  # open tabs of one address; raise it for visitors behind one shared address (an office)
# peers whose X-Forwarded-For was ignored, each logged once; bounded, since a visitor may send it from many addresses
_unlisted_peers: set[str] = set()
UNLISTED_LOGGED = 64


class ProxySettingError(RuntimeError):
    """The server's proxy settings would let the per-address limits count the wrong address: its message says what
    to set instead."""


def check_proxy_settings() -> None:
    """Refuse the settings under which no address can be trusted: $RCQA_TRUSTED_PROXIES, which nothing reads any
    more (an operator who set it for a CDN in front of nginx would have every visitor counted as the CDN's edge),
    and a $FORWARDED_ALLOW_IPS of "*", under which uvicorn takes the first hop of X-Forwarded-For, the visitor's to
    write."""
    if os.environ.get(RETIRED_ENV, "").strip():
        raise ProxySettingError(
            f"${RETIRED_ENV} is no longer read: Streamlit's server (uvicorn) reads the visitor's address from "
            f"X-Forwarded-For itself, trusting the proxies ${FORWARDED_ENV} lists (loopback by default). List every "
            f"proxy in front of the app there (addresses or networks, comma-separated, e.g. "
            f"\"127.0.0.1,::1,203.0.113.0/24\" for nginx here behind a CDN), unset ${RETIRED_ENV}, and restart the "
            "app (docs/serving.md: A visitor's address).")
    if "*" in (hop.strip() for hop in os.environ.get(FORWARDED_ENV, "").split(",")):
        raise ProxySettingError(
            f"${FORWARDED_ENV}=\"*\" trusts X-Forwarded-For from any peer, and uvicorn then takes its first hop, which "
            "the visitor writes: each forged address would get a fresh share of the server. List the proxies' "
            "addresses or networks instead, and restart the app (docs/serving.md: A visitor's address).")


def client_address(address: str | None, headers: StreamlitHeaders | None = None) -> str | None:
    """The visitor's address from the one Streamlit resolved (st.context.ip_address: None where it is loopback, a
    visitor on this machine, whose sessions then count one by one), once the proxy settings are checked
    (check_proxy_settings). `headers`, where given, only serve to log once a peer whose X-Forwarded-For the server
    ignored: a proxy missing from $FORWARDED_ALLOW_IPS, which makes all its visitors one address, or a visitor
    who wrote the header themselves."""
    check_proxy_settings()
    if address is not None and headers is not None and len(_unlisted_peers) < UNLISTED_LOGGED \
            and address not in _unlisted_peers:
        hops = {hop.strip() for line in headers.get_all("X-Forwarded-For") for hop in line.split(",")}
        if hops - {""} and address not in hops:
            _unlisted_peers.add(address)
            LOG.warning("%s sent X-Forwarded-For, which the server ignored: if it is a proxy of yours, add it to "
                        "$%s so that its visitors are told apart", address, FORWARDED_ENV)
    return address


def visitor_address() -> str | None:
    """This session's visitor's address (client_address of what Streamlit hands over)."""
    return client_address(st.context.ip_address, st.context.headers)


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


def _count(variable: str, default: int) -> int:
    """A whole number of at least 1 from the environment, else the default."""
    text = os.environ.get(variable, "").strip() or str(default)
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"${variable} must be a whole number of at least 1, not {text[:20]!r}")
    return int(text)


@st.cache_resource
def session_limit() -> SessionLimit:
    """The process's one count of sessions per address ($RCQA_SESSIONS_PER_ADDRESS, default 8)."""
    return SessionLimit(_count(SESSIONS_ENV, SESSIONS_PER_ADDRESS))


def session_id() -> str:
    """This session's id, as Streamlit's runtime names it."""
    context = get_script_run_ctx()
    assert context is not None  # called from a page, inside a script run (an AppTest's too)
    return context.session_id


def admitted() -> bool:
    """Whether this session may be served; if not, one sentence saying why is shown (where the proxy settings are
    refused, the whole sentence goes to the log)."""
    session = session_id()
    try:
        address = visitor_address()
    except ProxySettingError as error:  # the operator's to fix: the log says how, the visitor only that it is so
        LOG.error("%s", error)
        st.error("This server cannot tell its visitors apart until its operator corrects its proxy settings (its "
                 "log says how).")
        return False
    is_open = runtime.get_instance().is_active_session if runtime.exists() else lambda _: True
    limit = session_limit()
    if limit.admit(session, address, is_open):
        return True
    sessions = f"{limit.per_address} session{'s' * (limit.per_address != 1)}"
    st.error(f"Your address already has {sessions} of this app open, the most this server serves one address: close "
             "a tab, then reload this page.")
    return False
