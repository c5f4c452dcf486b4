"""Explain every example of a dataset on a Dask cluster, writing rows as they arrive.

The client keeps a bounded number of chunks in flight (so memory stays flat however many examples there are),
writes each finished chunk as one shard, and rewrites the manifest after it: a killed run loses at most the
chunks in flight. Workers load the model once per process (rcqa.model.load_model keeps it, and refuses a model whose
fingerprint is not the manifest's) and split the machine's cores between them."""
from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

import dask
from distributed import Client, Future, LocalCluster, Nanny, Scheduler, SpecCluster, WorkerPlugin, as_completed
from distributed.comm import get_address_host
from tqdm import tqdm

from rcqa.attribution.settings import ExplainSettings
from rcqa.dataset import store
from rcqa.dataset.kept_summary import keep_summary
from rcqa.dataset.manifest import RunAnalysis, RunCounts, RunData, RunManifest, RunModel, Session, Unexplained
from rcqa.resources import file_sha256
from rcqa.types import Aggregation, Attribution, Example
from rcqa.version import version

MAX_CHUNK = 8  # examples per task and shard: enough to keep shards few, few enough to balance the workers
IN_FLIGHT_PER_WORKER = 2  # a queued chunk per worker, so none idles while the client writes


@dataclass(frozen=True)
class Job:
    """What each example gets: the model and the settings of its explanation and analyses."""

    model: str
    settings: ExplainSettings
    aggregation: Aggregation
    top_k: int
    device: str | None = None
    extras: tuple[str, ...] = ()  # analyses added to every example (rcqa.dataset.extras)
    draws: int = 5  # random draws of the faithfulness and intervention analyses
    fingerprint: str | None = None  # the model the run's manifest names: a worker loading another one refuses it
    spare_answer: bool = True  # they never delete or knock out the explained span's own words
    naopc_beam: int = 0  # the faithfulness analysis's search for AOPC's bounds (0: none)
    operator: str = "pad"  # how the faithfulness analysis deletes a word (rcqa.faithfulness.deletion.OPERATORS)
    folder: str | None = None  # the run's: an example whose explanation it kept is read from there, not recomputed
    # examples explained from shared passes where the method can (rcqa.attribution.explanation.explain_each): for a
    # GPU; on CPUs a padded batch is no faster than its examples one by one (docs/speed.md)
    batch: int = 1

    def protocol(self) -> dict[str, Any]:
        """What the manifest records of the analyses' protocol: only what the chosen analyses use, so that a run
        without them resumes under any protocol."""
        uses = {"spare_answer": {"faithfulness", "interventions"}, "naopc_beam": {"faithfulness"},
                "operator": {"faithfulness"}}
        # a run made before the operator was recorded used pad: pad is left out, so that it resumes
        return {name: getattr(self, name) for name, analyses in uses.items() if analyses & set(self.extras)
                and not (name == "operator" and self.operator == "pad")}


class TorchThreads(WorkerPlugin):
    """Give each worker process an equal share of its machine's cores for torch (Dask's nanny starts workers
    with OMP_NUM_THREADS=1, which would leave cores idle when there are fewer workers than cores)."""

    def __init__(self, workers_per_host: dict[str, int]):
        self.workers_per_host = workers_per_host

    def setup(self, worker) -> None:
        import torch

        sharing = self.workers_per_host.get(get_address_host(worker.address), 1)
        torch.set_num_threads(max(1, len(os.sched_getaffinity(0)) // sharing))


def new_manifest(job: Job, preset: str, data: Path, limit: int | None, source: str | None = None,
                 questions: str = "all") -> RunManifest:
    """The description of a run that decides whether a folder's rows can be resumed (see store.open_run)."""
    from rcqa.model import load_model

    qa_model = load_model(job.model, job.device)
    window = {"max_len": qa_model.max_len, "doc_stride": qa_model.doc_stride}
    return RunManifest(RunModel(job.model, qa_model.fingerprint),
                       RunAnalysis(preset, {**job.settings.to_dict(), **window}, job.aggregation, job.top_k,
                                   job.extras, job.draws, **job.protocol()),
                       RunData(str(data), file_sha256(data), limit, source or str(data),
                               questions if questions != "all" else None),
                       rcqa_version=version())


def explain_chunk(job: Job, examples: list[Example]) -> tuple[list[dict], list[dict], list[tuple[str, Attribution]]]:
    """On a worker: the rows of the examples that could be explained, {id, reason} for those that could not ({id,
    reason, skipped: True} for those the contrast's foil does not exist in), and
    each explanation under its result-cache key (without the layer outputs, which only the t-SNE map reads and
    which would be most of its size), so Explore can open it from the run instead of computing it again."""
    from rcqa.attribution.cache import ResultCache
    from rcqa.attribution.contrast import NoFoil
    from rcqa.dataset.extras import extra_cells
    from rcqa.dataset.rows import example_row
    from rcqa.model import load_model

    qa_model = load_model(job.model, job.device, fingerprint=job.fingerprint)
    kept = store.results(Path(job.folder), read_only=True) if job.folder else None
    keys = [ResultCache.key(qa_model.fingerprint, example, job.settings) for example in examples]
    found = [kept.result_for(example, key) if kept else None for example, key in zip(examples, keys)]
    fresh = _explained(qa_model, [example for example, one in zip(examples, found) if one is None], job)
    rows, failures, results = [], [], []
    for example, key, kept_one in zip(examples, keys, found):
        result = kept_one or next(fresh)
        try:
            if isinstance(result, Exception):
                raise result
            rows.append(example_row(result, job.aggregation, job.top_k, extra_cells(qa_model, example, result, job)))
        except NoFoil as missing:  # a question the contrast does not apply to (no distractor number): no failure
            failures.append({"id": example.id, "reason": str(missing), "skipped": True})
            continue
        except Exception as error:  # any example the engine cannot read is recorded and skipped, never fatal
            failures.append({"id": example.id, "reason": _reason(error)})
            continue
        if kept_one is None:  # a kept one is on disk already
            results.append((key, replace(result, hidden_states=None)))
    return rows, failures, results


def _explained(qa_model, examples: list[Example], job: Job) -> Iterator[Attribution | Exception]:
    """Each example's explanation, or the exception it raised, `job.batch` at a time from passes they share where
    the method can (rcqa.attribution.explanation.explain_each); one by one, as each is needed, at a batch of 1."""
    from rcqa.attribution.explanation import explain_each

    for start in range(0, len(examples), job.batch):
        yield from explain_each(qa_model, examples[start:start + job.batch], job.settings)

def _reason(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".strip()


def reproduce(job: Job, examples: list[Example], manifest: RunManifest, folder: Path, workers: int = 1,
              scheduler: str | None = None, retry_failed: bool = False, progress: bool = True,
              gpus: int = 0) -> RunManifest:
    """Explain the examples that are neither in the folder's shards nor recorded as failed (unless retry_failed),
    then merge the rows into one shard (store.compact) and keep their summary (kept_summary); returns the final manifest. `manifest` describes the run
    (model, analysis settings, data); a folder holding another run is refused (store.RunMismatch), and so is a
    second writer while one runs (store.RunLocked). With gpus, the local cluster is one worker per GPU instead of
    `workers` (see gpu_workers)."""
    address = scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS")
    job = replace(job, fingerprint=manifest.model.fingerprint, folder=str(folder))
    with store.writing(folder):
        run = _Run.open(folder, manifest, examples, address)
        passed = run.done | run.skipped.keys() | (set() if retry_failed else run.failed.keys())
        todo = [e for e in examples if e.id not in passed]
        with tqdm(total=len(examples), initial=len(examples) - len(todo), unit="example", desc="reproduce",
                  disable=not progress, smoothing=0.1) as bar:
            if todo:
                with _client(workers, address, gpus) as client:
                    for rows, failures, results in _results(client, job, todo):
                        run.record(rows, failures, results)
                        bar.update(len(rows) + len(failures))
        store.compact(folder)  # each sitting leaves one shard of rows, not one per chunk
        run.this_run = replace(run.this_run, finished=_now())
        finished = run.save()
    keep_summary(folder)  # what the Dataset page opens the run on, computed once
    return finished


@dataclass
class _Run:
    """A run's bookkeeping: which selected examples are done and which failed, saved after every chunk into the
    manifest the run continues (its earlier sessions, then this one)."""

    folder: Path
    manifest: RunManifest
    selected: set[str]
    done: set[str]
    failed: dict[str, str]
    this_run: Session
    skipped: dict[str, str]  # examples the contrast does not apply to, with why: neither failed nor done again

    @classmethod
    def open(cls, folder: Path, manifest: RunManifest, examples: list[Example], address: str | None) -> _Run:
        selected = {e.id for e in examples}
        if len(selected) != len(examples):
            raise ValueError("the data's question ids are not unique, so finished examples could not be told apart")
        manifest = store.open_run(folder, manifest)
        run = cls(folder, manifest, selected, store.finished_ids(folder),
                  {f.id: f.reason for f in manifest.failed}, Session(_now(), scheduler=address or "local"),
                  {f.id: f.reason for f in manifest.skipped or ()})
        run.save()
        return run

    def record(self, rows: list[dict], failures: list[dict], results: list[tuple[str, Attribution]]) -> None:
        """Write a finished chunk's explanations and its rows as one shard, then the manifest."""
        kept = store.results(self.folder)
        for key, result in results:
            kept.put(key, result)
        if rows:
            store.write_shard(self.folder, rows)
        for row in rows:
            self.done.add(row["id"])
            self.failed.pop(row["id"], None)
        for failure in failures:
            (self.skipped if failure.get("skipped") else self.failed)[failure["id"]] = failure["reason"]
            if failure.get("skipped"):
                self.failed.pop(failure["id"], None)
        self.this_run = replace(self.this_run, computed=self.this_run.computed + len(rows),
                                failed=self.this_run.failed + sum(1 for f in failures if not f.get("skipped")))
        self.save()

    def save(self) -> RunManifest:
        """Write the manifest as the run stands now; returns it."""
        counts = RunCounts(len(self.selected), len(self.selected & self.done), len(self.failed),
                           len(self.skipped) if self.skipped else None)
        # a contrast run's questions without its foil (runs without any keep their old manifest)
        skipped = (tuple(Unexplained(i, reason) for i, reason in self.skipped.items()) if self.skipped else
                   self.manifest.skipped)
        saved = replace(self.manifest, counts=counts, failed=tuple(Unexplained(i, r) for i, r in self.failed.items()),
                        runs=(*self.manifest.runs, self.this_run), skipped=skipped)
        store.write_manifest(self.folder, saved)
        return saved


@contextmanager
def _client(workers: int, address: str | None, gpus: int = 0) -> Iterator[Client]:
    """A client of the scheduler at `address`, else of a local cluster of `workers` processes (or one per GPU) with
    no dashboard, bound to 127.0.0.1 (scheduler, nanny and worker ports and their small health/metrics HTTP
    endpoints alike), so nothing listens beyond this machine."""
    if address:
        with Client(address) as client:
            yield _share_cores(client)
        return
    environment = worker_environment(str(max(1, len(os.sched_getaffinity(0)) // (gpus or workers))))
    # the nanny's `env` wins over the variables Dask itself leaves in this process's environment
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environment}), \
            (SpecCluster(workers=gpu_workers(gpus, environment), scheduler=_LOCAL_SCHEDULER) if gpus else
             LocalCluster(host="127.0.0.1", n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, env=environment)) as cluster, Client(cluster) as client:
        yield _share_cores(client)


_LOCAL_SCHEDULER = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}


def gpu_workers(gpus: int, environment: dict[str, str]) -> dict[str, dict]:
    """Dask worker specs of one single-threaded worker process per GPU, each seeing only its own GPU
    (CUDA_VISIBLE_DEVICES, so that its "cuda" is that GPU) and its share of the cores, bound to 127.0.0.1 — the
    layout of dask-cuda's LocalCUDACluster without the dependency."""
    return {f"gpu-{gpu}": {"cls": Nanny, "options": {"host": "127.0.0.1", "nthreads": 1, "dashboard_address": None,
                                                    "env": {**environment, "CUDA_VISIBLE_DEVICES": str(gpu)}}}
            for gpu in range(gpus)}


def worker_environment(threads: str) -> dict[str, str]:
    """What a local worker process starts with, instead of Dask's defaults: its share of the cores for the math
    libraries, and no MALLOC_TRIM_THRESHOLD_. Setting that (Dask sets 65536) switches off glibc's adaptive mmap
    threshold, so every tensor over 128 kB is mapped fresh and page-faulted in: a 2048 × 384 × 1536 matrix product
    ran at 58–87 GFLOP/s in a worker against 121 outside, and an explanation took 6.0–6.7 s instead of 4.3 s."""
    return {name: threads for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


def _share_cores(client: Client) -> Client:
    """Register TorchThreads with how many of the cluster's workers share each host."""
    hosts = [get_address_host(address) for address in client.nthreads()]
    client.register_plugin(TorchThreads({host: hosts.count(host) for host in set(hosts)}), name="rcqa-torch-threads")
    return client


def _results(client: Client, job: Job, examples: list[Example]) -> Iterator[tuple[list[dict], list[dict], list]]:
    """(rows, failures, results) of every chunk as it finishes, keeping at most IN_FLIGHT_PER_WORKER chunks per worker
    thread submitted. A chunk whose worker died is reported as failed, example by example."""
    slots = max(1, sum(client.nthreads().values()))
    chunks = _chunks(examples, max(job.batch, chunk_size(len(examples), slots)))  # a chunk holds a batch at least
    chunk_of: dict[Future, list[Example]] = {}

    def submit(chunk: list[Example]) -> Future:
        future = client.submit(explain_chunk, job, chunk, pure=False)
        chunk_of[future] = chunk
        return future

    pending = as_completed([submit(chunk) for chunk in islice(chunks, IN_FLIGHT_PER_WORKER * slots)])
    for future in pending:
        chunk = chunk_of.pop(future)
        if future.status == "finished":
            yield future.result()
        else:
            reason = _reason(future.exception())
            yield [], [{"id": e.id, "reason": reason} for e in chunk], []
        future.release()
        following = next(chunks, None)
        if following:
            pending.add(submit(following))


def chunk_size(n_examples: int, slots: int) -> int:
    """About four chunks per worker thread, at most MAX_CHUNK examples each, so the last chunks balance out."""
    return max(1, min(MAX_CHUNK, n_examples // (4 * slots)))


def _chunks(examples: list[Example], size: int) -> Iterator[list[Example]]:
    for start in range(0, len(examples), size):
        yield examples[start:start + size]


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
