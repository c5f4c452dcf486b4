"""The server's own time to a visitor's first answer, timed inside the server where $RCQA_PAGE_TIMING_LOG names a
file (benchmarks.measure_sessions reads it; docs/serving.md: Where a new visitor's time goes).

From a session's first rerun request, as the websocket handed it to Streamlit's runtime, to the message carrying the
answer's summary (rcqa.figures.answer.ANSWER_MARK), as the runtime handed it to the websocket: one JSON line per
session, {"session", "rerun_to_answer_s", "answered_at"} (answered_at in time.time(), to match a browser's clock).
What a browser measures adds its own loading of the app before the request and its drawing after the message.
Unset (the default), nothing is patched and nothing is looked at."""
from __future__ import annotations

import json
import os
import threading
import time

LOG_ENV = "RCQA_PAGE_TIMING_LOG"
_installed = threading.Lock()
_asked: dict[str, float] = {}  # session id: when its first rerun request arrived, until its answer goes out
_seen: set[str] = set()  # sessions whose first rerun request was timed (a later one is not a first page)


def install() -> None:
    """Wrap the runtime's handling of a browser's messages and its sending of the server's, once per process, where
    $RCQA_PAGE_TIMING_LOG is set. Both run on the server's event loop thread, so the two dicts need no lock."""
    path = os.environ.get(LOG_ENV)
    if not path or not _installed.acquire(blocking=False):
        return
    from streamlit.runtime.runtime import Runtime

    # imported only when asked: rcqa.figures brings torch, and a server's first page paints before it does
    from rcqa.figures.answer import ANSWER_MARK

    handle, send = Runtime.handle_backmsg, Runtime._send_message

    def handle_backmsg(self, session_id, msg, **options):
        if msg.WhichOneof("type") == "rerun_script" and session_id not in _seen:
            _seen.add(session_id)
            _asked[session_id] = time.monotonic()
        return handle(self, session_id, msg, **options)

    def send_message(self, session_info, msg):
        session_id = session_info.session.id
        if session_id in _asked and ANSWER_MARK.encode() in msg.SerializeToString():
            seconds = time.monotonic() - _asked.pop(session_id)
            with open(path, "a", encoding="utf-8") as log:
                log.write(json.dumps({"session": session_id, "rerun_to_answer_s": round(seconds, 3),
                                      "answered_at": time.time()}) + "\n")
        return send(self, session_info, msg)

    Runtime.handle_backmsg, Runtime._send_message = handle_backmsg, send_message  # type: ignore[method-assign]
