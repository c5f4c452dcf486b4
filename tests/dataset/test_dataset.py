"""`python -m rcqa reproduce`: rows equal to explain + analyses run directly, EM/F1 equal to the official metric,
resume after finished, deleted and truncated shards, failing examples, and a real scheduler and worker."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from rcqa.analysis.report import analyses
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.cli import main
from rcqa.dataset import store
from rcqa.dataset.aggregate import load_run, run_examples, summarize
from rcqa.dataset.kept_summary import kept_summary
from rcqa.dataset.rows import question_type
from rcqa.dataset.runner import Job, explain_chunk
from rcqa.evaluate import score
from rcqa.gallery import gallery_example
from rcqa.model import ModelLoadError, load_model
from rcqa.types import Example
from tests.helpers.squad_files import squad_json

ROOT = Path(__file__).resolve().parents[2]
# a who, how many, how much, which, what and an unanswerable question (no gold: EM and F1 are null)
CHOSEN = {"lighthouse-who": "who", "orchard-how-many": "how many", "bridge-how-much": "how much",
          "bakery-where": "which", "vaccine-what": "what", "library-unanswerable": "who"}
UNREADABLE = Example(id="unreadable", passage="!!! ... ???", question="What is it?")  # no word to read
TEXT_LISTS = {"gold_answers", "layers", "passage_words"}
VOLATILE = {"seconds"}  # wall time: the one column two runs may not share


@pytest.fixture(scope="module")
def data_file(tmp_path_factory) -> Path:
    """The chosen gallery questions with an unreadable passage among them."""
    examples = [gallery_example(i) for i in CHOSEN]
    path = tmp_path_factory.mktemp("data") / "squad.json"
    path.write_text(json.dumps(squad_json(examples[:3] + [UNREADABLE] + examples[3:])))
    return path


# the default preset with a fixed 8-point rule: a random tiny model would refine its paths at length
FAST = ExplainSettings(tolerance=None)


def reproduce_cli(data: Path, out: Path, model: str, *extra: str) -> int:
    return main(["reproduce", "--data", str(data), "--out", str(out), "--model", model, "--tolerance", "0", *extra])


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny models run 50x slower with two torch threads on a busy 2-core machine (threads spin waiting for
    each other), so the direct explanations here use one, as each of the two local workers below does."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory, tiny_model_dirs, data_file) -> Path:
    """One run through the default path: a local cluster of worker processes."""
    out = tmp_path_factory.mktemp("run") / "local"
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--workers", "2") == 0
    return out


def rows_by_id(folder: Path) -> dict[str, dict]:
    return {row["id"]: row for row in pq.read_table(folder / "shards").to_pylist()}


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def assert_close(actual, expected) -> None:
    """Nested lists of numbers equal within float noise between processes; None (undefined) only where expected."""
    as_array = lambda v: np.array(v, dtype=float)
    np.testing.assert_allclose(as_array(actual), as_array(expected), rtol=1e-5, atol=2e-6, equal_nan=True)


def shares_of(top_k: list[list[dict]], chosen) -> list:
    return [round(100 * float(np.mean([chosen(w) for w in layer])), 2) if layer else None for layer in top_k]


def without_weights(top_k: list[list[dict]]) -> list:
    return [[{key: value for key, value in w.items() if key != "weight"} for w in layer] for layer in top_k]


def weights(top_k: list[list[dict]]) -> list:
    return [w["weight"] for layer in top_k for w in layer]


def test_rows_equal_explain_and_analyses_run_directly(local_run, tiny_model_dirs):
    rows = rows_by_id(local_run)
    assert set(rows) == set(CHOSEN)
    qa_model = load_model(tiny_model_dirs["bert"])
    for example_id, expected_type in CHOSEN.items():
        example, row = gallery_example(example_id), rows[example_id]
        result = explain(qa_model, example, FAST)
        direct = analyses(result, "l2", 5)
        assert row["question"] == example.question and row["question_type"] == expected_type
        assert row["is_quantifier"] == expected_type.startswith("how m")
        assert row["prediction"] == result.answer.text and row["n_windows"] == result.answer.n_windows
        assert row["probability"] == pytest.approx(result.answer.best.probability, rel=1e-5)
        golds = [a.text for a in example.answers]
        assert row["gold_answers"] == golds
        assert (row["em"], row["f1"]) == (score(result.answer.text, golds) if golds else (None, None))
        assert row["layers"] == result.layers and row["passage_words"] == direct["passage_words"]
        assert_close(row["distribution"], direct["distribution"])
        assert [[w["word"] for w in layer] for layer in row["top_k"]] == direct["top_k"]
        # each layer's top words, flagged, give back its shares: the drill-down and the averages agree
        for category, values in direct["categories"].items():
            assert_close(row[f"category_{category}"], values)
            assert_close(shares_of(row["top_k"], lambda w: w[category]), values)
        for group, values in direct["pos"].items():
            assert_close(row[f"pos_{group}"], values)
            assert_close(shares_of(row["top_k"], lambda w: w["pos"] == group), values)
        assert row["answer_pos"] == direct["answer_pos"]
        assert_close(row["quantifier_share"], direct["quantifier_share"])
        for variant, matrix in direct["jsd"].items():
            assert_close(row[f"jsd_{variant}"], matrix)
        assert_close(row["completeness"], [c.relative_error for c in result.completeness])
    assert manifest(local_run)["counts"] == {"total": 7, "done": 6, "failed": 1}


def test_the_run_keeps_each_explanation_for_explore(local_run, tiny_model_dirs):
    qa_model = load_model(tiny_model_dirs["bert"])
    kept = store.results(local_run)
    for example_id in CHOSEN:
        example = gallery_example(example_id)
        stored = kept.get(ResultCache.key(qa_model.fingerprint, example, FAST))
        direct = explain(qa_model, example, FAST)
        assert stored.hidden_states is None
        assert (stored.example.id, stored.example.passage, stored.example.question) == (example_id, example.passage,
                                                                                  example.question)
        assert [(w.text, w.tag) for w in stored.words] == [(w.text, w.tag) for w in direct.words]
        np.testing.assert_allclose(stored.scores, direct.scores, rtol=1e-4, atol=1e-9)
    assert len(list((local_run / store.RESULTS).glob("*.npz"))) == len(CHOSEN)


def test_a_twin_question_kept_by_the_run_gets_its_own_row(tmp_path, tiny_model_dirs):
    """SQuAD v1.1 dev asks some questions twice (the same passage and question under two ids, e.g.
    56beace93aeaaa14008c91e1 and 56bf10f43aeaaa14008c94fe): the result kept for the first answers the second, whose
    row must still carry its own id and be scored against its own gold answer, or the run never counts it done."""
    qa_model = load_model(tiny_model_dirs["bert"])
    first = gallery_example("lighthouse-who")
    twin = Example(id="twin", passage=first.passage, question=first.question, title="another title", answers=())
    key = ResultCache.key(qa_model.fingerprint, first, FAST)
    assert key == ResultCache.key(qa_model.fingerprint, twin, FAST)  # the key does not hold the id or the gold
    store.results(tmp_path).put(key, explain(qa_model, first, FAST))
    job = Job(tiny_model_dirs["bert"], FAST, "l2", 3, folder=str(tmp_path))
    (row,), failures, kept = explain_chunk(job, [twin])
    assert failures == [] and kept == []  # read from the run, not computed again
    assert (row["id"], row["title"], row["gold_answers"], row["em"]) == ("twin", "another title", [], None)


def test_a_run_whose_twin_row_took_the_other_twins_id_is_said_and_mended_when_resumed(tmp_path, tiny_model_dirs,
                                                                                        capsys):
    """A run written before the fix above holds the first twin's row twice and none of the second's: resumed, the
    repeated row is dropped and the second twin scored, so the run is whole, each question once."""
    first = gallery_example("lighthouse-who")
    twin = Example(id="twin", passage=first.passage, question=first.question, title="another title")
    data = tmp_path / "twins.json"
    data.write_text(json.dumps(squad_json([first, twin])))
    out = tmp_path / "run"
    assert reproduce_cli(data, out, tiny_model_dirs["bert"], "--workers", "1") == 0
    rows = rows_by_id(out)
    for shard in (out / "shards").glob("*.parquet"):
        shard.unlink()
    store.write_shard(out, [rows[first.id]])
    store.write_shard(out, [rows[first.id]])  # the twin's row, as the old code wrote it: under the first's id
    assert store.repeated_rows(out) == 1
    (out / "shards" / "part-truncated.parquet").write_bytes(b"PAR1 cut short")  # a killed run's: read past
    assert store.repeated_rows(out) == 1
    assert main(["report", str(out), "--out", str(tmp_path / "report"), "--no-images"]) == 0
    said = capsys.readouterr().err
    assert (f"{out}: 1 row repeats another's id (a question asked twice in the data, scored under its twin's id by an "
            "earlier rcqa), which the report counts twice; `reproduce` into the folder again mends the run") in said
    assert reproduce_cli(data, out, tiny_model_dirs["bert"], "--workers", "1") == 0
    assert store.repeated_rows(out) == 0
    table = pq.read_table(out / "shards").to_pylist()
    assert sorted(row["id"] for row in table) == sorted([first.id, "twin"])
    assert manifest(out)["counts"] == {"total": 2, "done": 2, "failed": 0}


def test_a_failing_example_is_recorded_and_the_others_finish(local_run):
    [failure] = manifest(local_run)["failed"]
    assert failure == {"id": "unreadable", "reason": "InputError: the passage has no words, only punctuation or markup"}
    assert set(rows_by_id(local_run)) == set(CHOSEN)


def test_manifest_describes_the_run(local_run, tiny_model_dirs, data_file):
    import hashlib

    described = manifest(local_run)
    assert described["model"]["fingerprint"] == load_model(tiny_model_dirs["bert"]).fingerprint
    assert described["data"]["sha256"] == hashlib.sha256(data_file.read_bytes()).hexdigest()
    assert described["data"]["source"] == str(data_file)
    qa_model = load_model(tiny_model_dirs["bert"])
    window = {"max_len": qa_model.max_len, "doc_stride": qa_model.doc_stride}
    assert described["analysis"]["settings"] == {**FAST.to_dict(), **window}
    assert described["analysis"]["aggregation"] == "l2" and described["rcqa_version"]
    # the summary the Dataset page opens the run on, kept as the sitting ended
    assert kept_summary(local_run).to_json() == summarize(load_run(local_run)).to_json()


def test_resume_recomputes_only_missing_and_corrupt_shards(local_run, scheduler, tmp_path, tiny_model_dirs,
                                                           data_file):
    out = tmp_path / "run"
    shutil.copytree(local_run, out)
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"]) == 0
    assert manifest(out)["runs"][-1]["computed"] == 0  # everything was finished or failed: nothing recomputed
    assert manifest(out)["counts"] == manifest(local_run)["counts"]

    deleted, truncated, *_ = sorted((out / "shards").glob("*.parquet"))
    lost = {*pq.read_table(deleted).column("id").to_pylist(), *pq.read_table(truncated).column("id").to_pylist()}
    deleted.unlink()
    truncated.write_bytes(truncated.read_bytes()[:200])
    before = set((out / "shards").iterdir())
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--scheduler", scheduler) == 0

    new_shards = set((out / "shards").iterdir()) - before
    assert {i for s in new_shards for i in pq.read_table(s).column("id").to_pylist()} == lost
    assert manifest(out)["runs"][-1]["computed"] == len(lost)
    assert [p.name for p in (out / "corrupt").iterdir()] == [truncated.name]
    assert set(rows_by_id(out)) == set(CHOSEN)

    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--scheduler", scheduler, "--retry-failed") == 0
    assert manifest(out)["runs"][-1] == {**manifest(out)["runs"][-1], "computed": 0, "failed": 1}


def test_rows_carry_their_examples_and_a_rerun_reads_the_kept_explanations(local_run, tmp_path, tiny_model_dirs,
                                                                          data_file):
    carried = {e.id: e for e in run_examples(local_run)}
    assert {i: (e.passage, e.question, e.answers, e.is_impossible) for i, e in carried.items()} == {
        e.id: (e.passage, e.question, e.answers, e.is_impossible) for e in map(gallery_example, CHOSEN)}
    out = tmp_path / "run"
    shutil.copytree(local_run, out)
    for shard in (out / "shards").glob("*.parquet"):
        shard.unlink()
    kept = {path.name: path.stat().st_mtime_ns for path in (out / store.RESULTS).glob("*.npz")}
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--workers", "1") == 0
    # each row was made from the kept explanation: its duration is the first run's, to the nanosecond, and the
    # kept files were neither written again nor joined by others
    assert {i: row["seconds"] for i, row in rows_by_id(out).items()} == {
        i: row["seconds"] for i, row in rows_by_id(local_run).items()}
    assert {path.name: path.stat().st_mtime_ns for path in (out / store.RESULTS).glob("*.npz")} == kept


def test_another_run_in_the_same_folder_is_refused(local_run, tmp_path, tiny_model_dirs, data_file, capsys):
    out = tmp_path / "run"
    shutil.copytree(local_run, out)
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--preset", "paper-code") == 2
    assert "another settings" in capsys.readouterr().err
    other = tmp_path / "other.json"
    other.write_text(json.dumps(squad_json([gallery_example(i) for i in list(CHOSEN)[:2]])))
    assert reproduce_cli(other, out, tiny_model_dirs["bert"]) == 2
    assert "another data file" in capsys.readouterr().err
    assert reproduce_cli(data_file, out, tiny_model_dirs["distilbert"]) == 2
    assert "another model fingerprint" in capsys.readouterr().err


def test_a_worker_refuses_a_model_that_is_not_the_runs(tiny_model_dirs):
    job = Job(tiny_model_dirs["bert"], FAST, "l2", 5, fingerprint="0" * 16)
    with pytest.raises(ModelLoadError, match="not 0000000000000000"):
        explain_chunk(job, [gallery_example("lighthouse-who")])


def test_question_types():
    assert question_type("How many pear trees?") == "how many"
    assert question_type("In which year, and how much?") == "which"
    assert question_type("The comet was named after whom?") == "who"
    assert question_type("Name the river.") == "other"


def _start(*argv: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-m", *argv], cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def listening_beyond_loopback(pid: int) -> list[tuple[str, str, int]]:
    """(process name, address, port) of every listening TCP socket of the process and its descendants that is not
    bound to 127.0.0.1 (or ::1)."""
    import psutil

    found = []
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        for connection in process.net_connections(kind="tcp"):
            if connection.status == psutil.CONN_LISTEN and connection.laddr.ip not in ("127.0.0.1", "::1"):
                found.append((process.name(), connection.laddr.ip, connection.laddr.port))
    return found


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory) -> str:
    """A real `dask scheduler` and `dask worker`, separate processes on 127.0.0.1; the scheduler's address."""
    scheduler_file = tmp_path_factory.mktemp("cluster") / "scheduler.json"
    # --no-dashboard keeps Dask's health/metrics HTTP server, on 0.0.0.0:8787 (a worker's on 0.0.0.0:random) unless
    # --dashboard-address says where: docs/datasets.md gives the same options
    loopback = ("--host", "127.0.0.1", "--no-dashboard", "--dashboard-address", "127.0.0.1:0")
    processes = [_start("distributed.cli.dask_scheduler", *loopback, "--port", "0",
                        "--scheduler-file", str(scheduler_file))]
    try:
        processes.append(_start("distributed.cli.dask_worker", *loopback, "--scheduler-file", str(scheduler_file),
                                "--nthreads", "1"))
        deadline = time.monotonic() + 60
        while not scheduler_file.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        yield json.loads(scheduler_file.read_text())["address"]
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            process.wait(timeout=30)


def test_a_real_scheduler_and_worker_give_the_local_rows(local_run, scheduler, tmp_path, tiny_model_dirs, data_file):
    assert scheduler.startswith("tcp://127.0.0.1:")
    assert listening_beyond_loopback(os.getpid()) == []  # the scheduler and worker (children of this process) too
    out = tmp_path / "distributed"
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--scheduler", scheduler) == 0
    assert manifest(out)["runs"][-1]["scheduler"] == scheduler
    assert manifest(out)["failed"] == manifest(local_run)["failed"]
    local, remote = rows_by_id(local_run), rows_by_id(out)
    assert set(remote) == set(local)
    for example_id, row in remote.items():
        expected = local[example_id]
        for column in row.keys() - VOLATILE - {"top_k"}:
            if isinstance(row[column], (float, list)) and column not in TEXT_LISTS:
                assert_close(row[column], expected[column])
            else:
                assert row[column] == expected[column], column
        assert without_weights(row["top_k"]) == without_weights(expected["top_k"])
        assert_close(weights(row["top_k"]), weights(expected["top_k"]))


@pytest.mark.slow  # every added analysis through the runner: about 28 s
def test_added_analyses_through_the_runner(tmp_path, tiny_model_dirs, data_file):
    from rcqa.dataset.faithfulness import record
    from rcqa.faithfulness.compare import Protocol
    from rcqa.faithfulness.report import example_faithfulness
    from rcqa.lens import answer_lens, lens_row
    from rcqa.lens.interventions import intervene, intervention_row

    out = tmp_path / "extras"
    assert reproduce_cli(data_file, out, tiny_model_dirs["bert"], "--workers", "1", "--limit", "2",
                         "--faithfulness", "--lens", "--interventions", "--draws", "2") == 0
    qa_model = load_model(tiny_model_dirs["bert"])
    rows = rows_by_id(out)
    assert set(rows) == {"lighthouse-who", "orchard-how-many"}
    for example_id, row in rows.items():
        example = gallery_example(example_id)
        direct = json.loads(record(example_faithfulness(qa_model, example, protocol=Protocol(draws=2),
                                                        settings=FAST)))
        stored = json.loads(row["faithfulness"])
        assert stored["k"] == direct["k"] and set(stored["methods"]) == set(direct["methods"]) >= {"random"}
        for name, values in direct["methods"].items():
            for measure, value in values.items():
                assert_close(stored["methods"][name][measure], value)
        lens = json.loads(row["lens"])
        for column, value in lens_row(answer_lens(qa_model, example)).items():
            if column.endswith("_span") or value is None:  # text, or a reader the tiny model lacks (probes)
                assert lens[column] == value
            else:
                assert_close(lens[column], value)
        knocked = intervention_row(intervene(qa_model, explain(qa_model, example, FAST), k=5, draws=2))
        for column, value in json.loads(row["interventions"]).items():
            if isinstance(value, str):
                assert value == knocked[column]
            else:
                assert_close(value, knocked[column])
    assert (manifest(out)["analysis"]["extras"], manifest(out)["analysis"]["draws"]) == (
        ["faithfulness", "lens", "interventions"], 2)


def _worker_environment() -> dict:
    return {name: os.environ.get(name) for name in ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


@pytest.mark.parametrize("workers", [1, 2])
def test_local_workers_get_their_share_of_the_cores_and_glibcs_own_malloc_tuning(workers):
    from rcqa.dataset.runner import _client

    with _client(workers, None) as client:
        environments = list(client.run(_worker_environment).values())
    share = str(max(1, len(os.sched_getaffinity(0)) // workers))
    assert environments == [{"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": share, "MKL_NUM_THREADS": share}] * workers


def _visible_gpus() -> dict:
    return {name: os.environ.get(name) for name in ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS")}


def test_with_gpus_each_local_worker_sees_one_gpu_of_its_own():
    from rcqa.dataset.runner import _client

    with _client(1, None, gpus=2) as client:  # no GPU here: the layout and environment are what is tested
        environments = sorted(client.run(_visible_gpus).values(), key=lambda e: e["CUDA_VISIBLE_DEVICES"])
        addresses = list(client.scheduler_info()["workers"]) + [client.scheduler.address]
    share = str(max(1, len(os.sched_getaffinity(0)) // 2))
    assert environments == [{"CUDA_VISIBLE_DEVICES": "0", "OMP_NUM_THREADS": share},
                            {"CUDA_VISIBLE_DEVICES": "1", "OMP_NUM_THREADS": share}]
    assert all(address.startswith("tcp://127.0.0.1:") for address in addresses)


def test_a_second_writer_into_a_run_folder_is_refused(tmp_path, tiny_model_dirs, data_file, capsys):
    out = tmp_path / "run"
    with store.writing(out):  # the first run, still writing
        assert reproduce_cli(data_file, out, tiny_model_dirs["bert"]) == 2
    assert "another run is writing into" in capsys.readouterr().err
    assert not (out / "shards").exists()  # refused before it touched anything
