"""A visitor's address as a real Streamlit server hands it over (issue 56): Streamlit 1.67 serves through uvicorn,
whose proxy-headers middleware resolves the address from X-Forwarded-For before a page sees it, trusting the peers
$FORWARDED_ALLOW_IPS lists. Each visit below is a real websocket to `streamlit run` of a page that calls
rcqa.ui.visitors' admitted() (the sessions an address holds) and client_address() as rcqa.ui.queue calls it (its
jobs), from a chosen source address on loopback (127.0.0.2 and 127.0.0.3 stand in for hosts that are not this one:
neither is in uvicorn's default trust, and Streamlit calls only 127.0.0.1 and ::1 "this machine"), with the
X-Forwarded-For lines a proxy, or a forger, would send."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import ClientConnection, connect

from tests.helpers.servers import free_port, wait_until_healthy

PAGE = """
import streamlit as st
from rcqa.ui.visitors import admitted, client_address
try:
    address = client_address(st.context.ip_address, st.context.headers)  # as rcqa.ui.queue counts a job's
except Exception as error:  # the page's one sentence, as a refused setting shows it in the server's log
    st.text(f"refused: {error}")
else:
    st.text(f"address: {address}")
    st.text("admitted" if admitted() else "not admitted")
"""
CDN_EDGE, CDN_NETWORK = "203.0.113.9", "203.0.113.0/24"
VISITOR, OTHER_VISITOR, FORGED = "198.51.100.7", "198.51.100.8", "6.6.6.6"
NGINX_HERE, PROXY_ELSEWHERE, STRANGER = "127.0.0.1", "127.0.0.2", "127.0.0.3"


@contextlib.contextmanager
def served(tmp_path: Path, **environment: str) -> Iterator[int]:
    """`streamlit run` of PAGE on a free loopback port with these variables (FORWARDED_ALLOW_IPS and
    RCQA_TRUSTED_PROXIES only where given); yields the port."""
    page, log = tmp_path / "page.py", tmp_path / "server.log"
    page.write_text(PAGE)
    env = {name: value for name, value in os.environ.items()
           if name not in ("FORWARDED_ALLOW_IPS", "RCQA_TRUSTED_PROXIES")}
    env.update(environment, RCQA_SESSIONS_PER_ADDRESS="1", PYTHONPATH=str(Path(__file__).parents[2]))
    port = free_port()
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(page), "--server.address", "127.0.0.1", "--server.port",
             str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            stdout=output, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until_healthy(f"http://127.0.0.1:{port}", process, log)
            yield port
        finally:
            process.terminate()
            process.wait(30)


@contextlib.contextmanager
def visit(port: int, source: str, *forwarded: str) -> Iterator[list[str]]:
    """A session opened from `source` with one X-Forwarded-For line per `forwarded`: what its page wrote, while the
    session stays open."""
    sock = socket.create_connection(("127.0.0.1", port), source_address=(source, 0), timeout=60)
    with connect(f"ws://127.0.0.1:{port}/_stcore/stream", sock=sock, subprotocols=["streamlit"],
                 additional_headers=[("X-Forwarded-For", line) for line in forwarded], open_timeout=60) as stream:
        yield page_texts(stream)


def page_texts(stream: ClientConnection) -> list[str]:
    """Ask for the page's run and collect its text elements until the run finishes."""
    rerun = BackMsg()
    rerun.rerun_script.query_string = ""
    stream.send(rerun.SerializeToString())
    texts = []
    while True:
        message = ForwardMsg()
        message.ParseFromString(stream.recv(timeout=120))
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            if element.WhichOneof("type") == "text":
                texts.append(element.text.body)
        if message.WhichOneof("type") == "script_finished":
            return texts


def address_of(port: int, source: str, *forwarded: str) -> str:
    with visit(port, source, *forwarded) as texts:
        return texts[0]


def test_behind_uvicorns_default_trust_one_proxy_here_names_its_visitor_and_a_stranger_cannot_forge(tmp_path):
    with served(tmp_path) as port:
        # nginx on this machine, one trusted hop: what it appended, whatever the visitor wrote before it
        assert address_of(port, NGINX_HERE, f"{FORGED}, {VISITOR}") == f"address: {VISITOR}"
        assert address_of(port, NGINX_HERE, FORGED, VISITOR) == f"address: {VISITOR}"  # a line of its own
        # a peer the setting does not list: the header is its own writing, and the peer is the address
        assert address_of(port, STRANGER, VISITOR) == f"address: {STRANGER}"
        assert address_of(port, STRANGER, f"{VISITOR}, {STRANGER}") == f"address: {STRANGER}"
        # a proxy elsewhere, not listed: all its visitors are one address (docs: list it)
        assert address_of(port, PROXY_ELSEWHERE, VISITOR) == f"address: {PROXY_ELSEWHERE}"
        assert address_of(port, NGINX_HERE) == "address: None"  # this machine: counted session by session


def test_two_trusted_hops_and_a_proxy_elsewhere_name_the_visitor_and_the_limits_count_by_it(tmp_path):
    listed = f"127.0.0.1,::1,{CDN_NETWORK},{PROXY_ELSEWHERE}"
    with served(tmp_path, FORWARDED_ALLOW_IPS=listed) as port:
        # CDN → nginx here: the CDN appended the visitor, nginx the CDN's edge; both trusted, so the visitor
        cdn_chain = f"{FORGED}, {VISITOR}, {CDN_EDGE}"
        with visit(port, NGINX_HERE, cdn_chain) as first:
            assert first == [f"address: {VISITOR}", "admitted"]
            # another visitor behind the same edge has a share of their own (before: both were the edge)
            with visit(port, NGINX_HERE, f"{OTHER_VISITOR}, {CDN_EDGE}") as other:
                assert other == [f"address: {OTHER_VISITOR}", "admitted"]
            # the same visitor's second tab meets the limit of one session an address, forged hop or not
            with visit(port, NGINX_HERE, FORGED, f"{VISITOR}, {CDN_EDGE}") as second:
                assert second == [f"address: {VISITOR}", "not admitted"]
        # a listed proxy that is not on this machine: what it appended
        assert address_of(port, PROXY_ELSEWHERE, f"{FORGED}, {OTHER_VISITOR}") == f"address: {OTHER_VISITOR}"
        # an unlisted peer forging the whole chain is still itself
        assert address_of(port, STRANGER, cdn_chain) == f"address: {STRANGER}"


def test_the_retired_hop_count_is_refused_rather_than_counting_the_cdns_edge(tmp_path):
    # before: with CDN → nginx and RCQA_TRUSTED_PROXIES=2 (then documented), every visitor behind the CDN was its
    # edge, 203.0.113.9, since uvicorn had already resolved the address and the setting was never read
    with served(tmp_path, RCQA_TRUSTED_PROXIES="2") as port:
        found = address_of(port, NGINX_HERE, f"{FORGED}, {VISITOR}, {CDN_EDGE}")
    assert found.startswith("refused: $RCQA_TRUSTED_PROXIES is no longer read") and "FORWARDED_ALLOW_IPS" in found
