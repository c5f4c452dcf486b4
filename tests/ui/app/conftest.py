import pytest


@pytest.fixture(autouse=True)
def fresh_result_cache(tmp_path, monkeypatch):
    """Each test opens the app on an empty result cache: an explanation another test left (the app's cache is one
    per process, st.cache_resource) would otherwise be shown before the test asks for it."""
    from rcqa.ui.results.explanations import result_cache

    monkeypatch.setenv("RCQA_RESULT_CACHE", str(tmp_path / "results"))
    result_cache.clear()
    yield
    result_cache.clear()
