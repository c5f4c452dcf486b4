"""Every job priced (issue 42): the queue refuses a job without a positive price, the short lane takes only jobs
whose worst case is short, and every place in the dashboard that submits a job to the queue hands it a price; a job
whose worst case is past the time limit is refused, however short it is expected to be (issue 56)."""
import ast
import inspect
import math
import pathlib
import time

import pytest

import rcqa.ui
from rcqa.attribution.cost import Price, explanation_price
from rcqa.attribution.settings import resolve
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import encode
from rcqa.ui import queue as ui_queue
from rcqa.ui.results import requested
from rcqa.ui.capacity import refusal
from rcqa.ui.jobs import JobQueue, Unpriced
from tests.helpers.app_harness import open_app, recorded_prices
from tests.ui.test_lanes import LONG, SHORT, WAIT, Gate, lanes

UI = pathlib.Path(rcqa.ui.__file__).parent
# the functions that queue a job, and how many positional arguments hold its price: (slot, key, work, estimate)
SUBMITTERS = {"submit": 4, "queued": None, "compute_comparison": 5}


@pytest.mark.parametrize("estimate, worst", [(0, None), (0.0, None), (-3, None), (math.nan, None), (math.inf, None),
                                             (None, None), ("10", None), (10, 5), (10, math.nan)])
def test_the_queue_refuses_a_job_without_a_price(estimate, worst):
    queue = JobQueue(workers=1)
    with pytest.raises(Unpriced, match="has no price"):
        queue.submit("unpriced", "s1", Gate(), estimate=estimate, worst=worst)
    assert queue.waiting == 0 and queue.running == 0


def test_a_price_is_required_on_every_submit_path():
    with pytest.raises(TypeError, match="estimate"):
        JobQueue(workers=1).submit("unpriced", "s1", Gate())
    for function in (JobQueue.submit, ui_queue.submit, requested.queued):
        assert inspect.signature(function).parameters["estimate"].default is inspect.Parameter.empty


def test_the_short_lane_takes_only_a_job_whose_worst_case_is_short():
    queue = lanes()
    long, risky, short = Gate(), Gate(), Gate()
    running = queue.submit("long", "s1", long, estimate=LONG)
    assert long.started.wait(WAIT)
    # expected to be short, but its refinement may run to max_steps: it waits for the main lane
    waiting = queue.submit("risky", "s2", risky, estimate=SHORT, worst=LONG)
    beside = queue.submit("short", "s3", short, estimate=SHORT, worst=SHORT)
    assert short.started.wait(WAIT) and beside.job.lane == "short"
    time.sleep(0.2)
    assert waiting.state == "waiting" and risky.runs == 0
    short.release.set()
    long.release.set()
    assert risky.started.wait(WAIT) and waiting.job.lane == "main"
    risky.release.set()
    assert running.wait(WAIT) and waiting.wait(WAIT) and beside.wait(WAIT)


def submit_calls() -> list[tuple[str, int, ast.Call]]:
    """Every call in rcqa/ui of a function that queues a job: (file, line, call)."""
    found = []
    for path in sorted(UI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", getattr(node.func, "id", None))
                if name in SUBMITTERS:
                    found.append((str(path.relative_to(UI)), node.lineno, node))
    return found


def price_argument(name: str, call: ast.Call) -> ast.expr | None:
    keyword = next((k.value for k in call.keywords if k.arg == "estimate"), None)
    position = SUBMITTERS[name]
    if keyword is None and position is not None and len(call.args) >= position:
        return call.args[position - 1]
    return keyword


def test_every_place_that_queues_a_job_hands_it_a_computed_price():
    calls = submit_calls()
    places = {(path, getattr(call.func, "attr", getattr(call.func, "id", None))) for path, _, call in calls}
    # the explanations, the answer, the comparison, the lens, the margins, the knock-outs, the projection, the
    # analyses, the sanity check, the images: in these files
    assert {path for path, _ in places} >= {"results/answers.py", "results/explanations.py", "results/comparisons.py",
                                            "results/per_layer.py", "analyses.py", "sanity.py", "show.py", "queue.py",
                                            "dashboard/pages/methods.py"}
    assert len(calls) >= 12
    for path, line, call in calls:
        name = getattr(call.func, "attr", getattr(call.func, "id", None))
        price = price_argument(name, call)
        assert price is not None, f"{path}:{line}: {name}(…) queues a job without its price"
        assert not isinstance(price, ast.Constant), f"{path}:{line}: a constant price, not one computed"


# --- admission reads the worst case against the time limit (issue 56) ----------------------------------------------

def test_a_job_whose_worst_case_is_past_the_time_limit_is_refused_whatever_it_is_expected_to_take(monkeypatch):
    monkeypatch.delenv("RCQA_JOB_TIME_LIMIT_S", raising=False)  # the default: 600 s
    # the link, steps=1&tol=0.001&maxsteps=512: 26 s expected, 1,096 s if it refines to max_steps everywhere
    assert refusal("explanation", Price(26.0, 1096.0), "choose fewer steps, or a preset with fewer") == (
        "This explanation could take up to 18 minutes on this server, past the 10 minutes it lets one job run before "
        "stopping it: choose fewer steps, or a preset with fewer.")
    assert refusal("explanation", Price(26.0, 599.0), "choose fewer steps") is None  # within the limit at worst
    assert refusal("explanation", Price(26.0), "choose fewer steps") is None  # no worst case: as expected
    monkeypatch.setenv("RCQA_JOB_TIME_LIMIT_S", "off")
    assert refusal("explanation", Price(26.0, 1096.0), "choose fewer steps") is None


@pytest.fixture
def queue_made_afresh():
    """The process's job queue (an st.cache_resource) made again after the test: one made while the test shortens
    RCQA_JOB_TIME_LIMIT_S keeps that limit, and every explanation a later test asks of it ran past it."""
    from rcqa.ui.queue import job_queue

    yield
    job_queue.clear()


def test_a_link_whose_worst_case_is_past_the_time_limit_is_refused_before_the_button(app_env, monkeypatch,
                                                                                      queue_made_afresh):
    qa_model = load_model(app_env["bert"])
    example = gallery_example("orchard-how-many")
    tokens = int(encode(qa_model, example.question, example.passage).inputs["attention_mask"].sum())
    link = {"ex": example.id, "steps": "1", "tol": "0.001", "maxsteps": "512"}
    price = explanation_price(qa_model, resolve("default", steps=1, tolerance=0.001, max_steps=512), 1, tokens, 1)
    assert price.worst is not None and price.worst > 20 * price.seconds
    monkeypatch.setenv("RCQA_JOB_TIME_LIMIT_S", str(price.worst / 2))  # past the limit at worst, far within it expected
    monkeypatch.setenv("RCQA_JOB_BUDGET_S", "off")
    prices = recorded_prices(monkeypatch)
    app = open_app(query=link)
    said = [w.value for w in app.warning if "could take up to" in w.value]
    assert len(said) == 1 and said[0].startswith("This explanation could take up to ")  # before: offered, then taken
    assert "rcqa.explain" not in [button.key for button in app.button] and prices == {}
    monkeypatch.setenv("RCQA_JOB_TIME_LIMIT_S", str(price.worst * 2))
    app.run()
    assert "rcqa.explain" in [button.key for button in app.button]
