"""The Methods page's sanity check: its button queues the job with the cost model's estimate, and the page draws the
cascade's ρ per method with verdicts that say what the drawn numbers say."""
import pytest

from tests.helpers.app_harness import open_app, recorded_prices, spec_titled, texts, values

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/methods.py"


@pytest.mark.slow  # the comparison, then the check, through the app: 17-29 s (measured)
def test_the_sanity_check_is_queued_priced_and_drawn(monkeypatch):
    estimates = recorded_prices(monkeypatch)
    app = open_app()
    app.selectbox(key="rcqa.widget.example_id").set_value("comet-who").run()
    app.switch_page(PAGE).run()
    app.button(key="rcqa.compare_methods").click().run()
    app.multiselect(key="rcqa.sanity_methods").set_value(["gradient", "attention_rollout"]).run()
    assert "on this server" in texts(app.caption)
    app.button(key="rcqa.ask.sanity").click().run()
    assert not app.exception, [e.value for e in app.exception]

    (estimate,) = [seconds for key, (seconds, _) in estimates.items() if key.startswith("sanity")]
    assert estimate > 0
    (compared,) = [seconds for key, (seconds, _) in estimates.items() if key.startswith("methods")]
    assert compared > 0  # the comparison is priced too: a job at 0 would count as short and jump the queue
    curves = spec_titled(app, "Sanity check: each method's word scores against the trained model's, the model "
                             "randomised from the top down")
    names = [trace["name"] for trace in curves["data"]]
    assert names == ["Gradient sensitivity, magnitude", "Attention rollout, magnitude", "Random"]
    steps = values(curves["data"][0]["x"]).tolist()
    assert steps == ["QA head", "… block 2", "… block 1", "… block 0", "… embeddings"]
    verdicts = texts(app.markdown)
    for trace in curves["data"]:
        rho = values(trace["y"])[steps.index("… block 0")]  # the verdict reads the head and every block random
        verdict = "fails" if rho >= 0.5 else "passes"
        assert f"**{trace['name']}**: {trace['name']} {verdict} the sanity check" in verdicts
        assert f"ρ = {rho:.2f}" in verdicts
    assert "**Random**: Random fails the sanity check" in verdicts
