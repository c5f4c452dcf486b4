"""Who a visitor is to the per-address limits: the address Streamlit's server resolved behind the operator's
proxies (through a real server: tests/ui/test_visitors_server.py), the settings refused because no address would
hold under them, and the cap on one address's open sessions."""
import pytest
from streamlit.runtime.context import StreamlitHeaders

import rcqa.ui.visitors
from rcqa.ui.visitors import ProxySettingError, SessionLimit, client_address
from tests.helpers.app_harness import open_app, texts

FORWARDED = "X-Forwarded-For"


def test_the_address_is_the_one_streamlit_resolved_whatever_the_header_says():
    # uvicorn has read X-Forwarded-For behind the peers $FORWARDED_ALLOW_IPS lists (tests/ui/test_visitors_server.py);
    # reading it again would let a visitor's own hops count
    forged = StreamlitHeaders([(FORWARDED, "6.6.6.6, 198.51.100.1")])
    assert client_address("203.0.113.5", forged) == "203.0.113.5"
    assert client_address(None, forged) is None  # loopback: this machine, counted session by session
    assert client_address(None, StreamlitHeaders([])) is None


@pytest.mark.parametrize("variable, value, refusal", [
    ("RCQA_TRUSTED_PROXIES", "2", r"\$RCQA_TRUSTED_PROXIES is no longer read: .* List every proxy in front of the app "
                                  r"there .*unset \$RCQA_TRUSTED_PROXIES, and restart the app"),
    ("RCQA_TRUSTED_PROXIES", "1", r"\$RCQA_TRUSTED_PROXIES is no longer read"),
    ("FORWARDED_ALLOW_IPS", "127.0.0.1, *", r'\$FORWARDED_ALLOW_IPS="\*" trusts X-Forwarded-For from any peer'),
])
def test_settings_under_which_no_address_holds_are_refused_in_one_sentence(monkeypatch, variable, value, refusal):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ProxySettingError, match=refusal):
        client_address("203.0.113.5")


def test_a_listed_network_is_no_refusal_and_an_ignored_header_is_logged_once_for_its_peer(monkeypatch, caplog):
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "127.0.0.1,::1,203.0.113.0/24")
    monkeypatch.setattr(rcqa.ui.visitors, "_unlisted_peers", set())
    listed = StreamlitHeaders([(FORWARDED, "198.51.100.1, 203.0.113.9")])
    assert client_address("198.51.100.1", listed) == "198.51.100.1"  # resolved from the header: nothing to say
    unlisted = StreamlitHeaders([(FORWARDED, "198.51.100.1")])
    for _ in range(2):
        assert client_address("192.0.2.4", unlisted) == "192.0.2.4"
    said = [record.getMessage() for record in caplog.records if record.name == "rcqa.ui.visitors"]
    assert said == ["192.0.2.4 sent X-Forwarded-For, which the server ignored: if it is a proxy of yours, add it to "
                    "$FORWARDED_ALLOW_IPS so that its visitors are told apart"]
    for peer in range(2 * rcqa.ui.visitors.UNLISTED_LOGGED):  # a forger on many addresses fills no memory
        client_address(f"2001:db8::{peer:x}", unlisted)
    assert len(rcqa.ui.visitors._unlisted_peers) == rcqa.ui.visitors.UNLISTED_LOGGED


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


def test_a_refused_proxy_setting_stops_every_page_with_one_sentence_and_logs_what_to_set(app_env, monkeypatch,
                                                                                          caplog):
    monkeypatch.setenv("RCQA_TRUSTED_PROXIES", "2")
    app = open_app()
    assert texts(app.error) == ("This server cannot tell its visitors apart until its operator corrects its proxy "
                                "settings (its log says how).")
    assert not app.title and not app.exception
    assert any("$RCQA_TRUSTED_PROXIES is no longer read" in record.getMessage() for record in caplog.records)
