"""Who a visitor is to the per-address limits: the address behind the operator's proxies, which a visitor cannot
forge, and the cap on one address's open sessions."""
import pytest
from streamlit.runtime.context import StreamlitHeaders

import rcqa.ui.visitors
from rcqa.ui.visitors import SessionLimit, client_address
from tests.helpers.app_harness import open_app, texts

FORWARDED = "X-Forwarded-For"


@pytest.mark.parametrize("address, lines, proxies, client", [
    ("203.0.113.5", ["198.51.100.1"], 1, "203.0.113.5"),  # a direct visitor: the connection's
    (None, ["6.6.6.6, 198.51.100.1"], 1, "198.51.100.1"),  # behind the proxy: what it appended to the line
    (None, ["6.6.6.6", "198.51.100.1"], 1, "198.51.100.1"),  # or on a line of its own (before: the forged 6.6.6.6)
    (None, [" 198.51.100.1 "], 1, "198.51.100.1"),
    (None, ["6.6.6.6, 198.51.100.1", "10.0.0.2"], 2, "198.51.100.1"),  # two proxies: what the first one appended
    (None, ["198.51.100.1"], 2, "198.51.100.1"),  # fewer hops than proxies: every hop is a proxy's
    (None, [], 1, None),  # on this machine: every session counts alone
])
def test_the_client_address_is_the_connection_or_what_the_first_trusted_proxy_saw(address, lines, proxies, client):
    headers = StreamlitHeaders([(FORWARDED, line) for line in lines])
    assert client_address(address, headers, proxies) == client


def test_the_number_of_trusted_proxies_is_the_operators_setting(monkeypatch):
    headers = StreamlitHeaders([(FORWARDED, "6.6.6.6, 203.0.113.9, 10.0.0.2")])
    assert client_address(None, headers) == "10.0.0.2"
    monkeypatch.setenv("RCQA_TRUSTED_PROXIES", "2")
    assert client_address(None, headers) == "203.0.113.9"
    monkeypatch.setenv("RCQA_TRUSTED_PROXIES", "0")
    with pytest.raises(ValueError, match=r"\$RCQA_TRUSTED_PROXIES must be a whole number of at least 1, not '0'"):
        client_address(None, headers)


def test_an_address_has_at_most_its_sessions_open_and_a_closed_one_frees_its_place():
    limit, open_sessions = SessionLimit(per_address=2), {"s1", "s2", "s3", "s4"}
    is_open = open_sessions.__contains__
    assert limit.admit("s1", "203.0.113.5", is_open) and limit.admit("s2", "203.0.113.5", is_open)
    assert not limit.admit("s3", "203.0.113.5", is_open)
    assert limit.admit("s3", "198.51.100.1", is_open)  # another address has its own count
    assert limit.admit("s4", None, is_open)  # this machine's sessions are not counted
    assert limit.admit("s1", "203.0.113.5", is_open)  # an admitted session's reruns stay admitted
    open_sessions.discard("s1")
    assert limit.admit("s5", "203.0.113.5", is_open)


def test_a_session_past_its_addresses_limit_is_one_sentence_and_nothing_else(app_env, monkeypatch):
    monkeypatch.setenv("RCQA_SESSIONS_PER_ADDRESS", "1")
    monkeypatch.setattr(rcqa.ui.visitors, "client_address", lambda address, headers: "203.0.113.5")
    rcqa.ui.visitors.session_limit.clear()
    try:
        assert rcqa.ui.visitors.session_limit().admit("another tab", "203.0.113.5", lambda session: True)
        app = open_app()  # before: served like any other
        assert texts(app.error) == ("Your address already has 1 session of this app open, the most this server "
                                    "serves one address: close a tab, then reload this page.")
        assert not app.title and not app.warning
    finally:
        rcqa.ui.visitors.session_limit.clear()
