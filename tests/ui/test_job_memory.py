"""Every kind of job the dashboard queues, its peak over the loaded process measured in a process of its own
(tests.helpers.peak_memory: the resident set's high-water mark), held against its figure (issue 56): the heads'
own (rcqa.attention_heads.heads_memory_mb), and for the kinds whose price holds no figure of the whole job, what
the server promises each job, its memory budget (its least batch of path points where that is more). On the tiny
BERT, and on the default model's full 384-token window (the reading: a paste of 10,000 words). Not here: the margins
(two forwards of the lens's kind), the token map (t-SNE of one layer's vectors) and images (kaleido's Chromium, a
process of its own)."""
import pytest

from tests.helpers.peak_memory import JOBS, measured

KINDS = sorted(JOBS)


@pytest.mark.parametrize("job", KINDS)
def test_on_the_tiny_model_each_kind_of_job_holds_at_most_its_figure(tiny_model_dirs, job):
    found = measured(job, tiny_model_dirs["bert"])
    assert found["peak_mb"] <= found["figure_mb"], found


@pytest.mark.slow
@pytest.mark.parametrize("job", KINDS)
def test_on_the_default_model_each_kind_of_job_holds_at_most_its_figure(job):
    found = measured(job, "default")  # 5-45 s each on 2 shared cores; the sanity check longer
    assert found["tokens"] == 384
    assert found["peak_mb"] <= found["figure_mb"] <= 1024 + 48, found  # before: the heads +1,129-1,211 MB
