"""How much heavy work one server takes on, as its operator sets it: the workers and their lanes, torch's threads
and the jobs' priority, each job's budget and time limit, and what the server refuses at a job's price (its memory,
its expected seconds, its worst case) or prices here (a long paste's reading) (docs/serving.md: The queue, Cost of a
job)."""
from __future__ import annotations

import functools
import math
import os
import threading

import torch

from rcqa.attribution.cost import Price, in_words, reading_seconds
from rcqa.attribution.memory import budget_mb
from rcqa.attribution.settings import ExplainSettings
from rcqa.model import QAModel, pick_device
from rcqa.qa import MAX_WINDOWS, truncate_question

WORKERS_ENV, THREADS_ENV, NICE_ENV = "RCQA_EXPLAIN_WORKERS", "RCQA_TORCH_THREADS", "RCQA_JOB_NICE"
BUDGET_ENV, TIME_LIMIT_ENV = "RCQA_JOB_BUDGET_S", "RCQA_JOB_TIME_LIMIT_S"
SHORT_JOB_ENV, SHORT_WORKERS_ENV = "RCQA_SHORT_JOB_S", "RCQA_SHORT_WORKERS"
SESSION_JOBS_ENV, ADDRESS_JOBS_ENV = "RCQA_JOBS_PER_SESSION", "RCQA_JOBS_PER_ADDRESS"
JOB_NICENESS = 10  # heavy work yields the cores to page scripts: a new visitor's page is drawn first
JOB_BUDGET_SECONDS = 300  # a job estimated to take longer is refused before it is queued (docs/serving.md)
JOB_TIME_LIMIT_SECONDS = 600  # a running job is stopped after this: twice the budget, for estimates that run long
# a job whose worst case is under this is short: the short lane runs it at once, beside (or inside) a long one. With
# the default model and settings the gallery's one-window examples are expected to take 5-7 s, 51-77 s at worst (the
# adaptive rule refined to max_steps at every layer); one window of 384 tokens 26 s, 274 s at worst, so it is long
SHORT_JOB_SECONDS = 90
SHORT_WORKERS = 1  # the short lane's workers: each runs one short job at a time
# jobs running or waiting for one session, and for one address (its sessions together): with the default lanes (one
# main worker, one short) one visitor may fill both, or run one and queue the next, but never hold both and queue more
SESSION_JOBS = ADDRESS_JOBS = 2


def _seconds_setting(name: str, default: float) -> float:
    """A number of seconds the operator sets in $name; "0", "off" or "inf" for no limit."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    return math.inf if value in ("0", "off", "inf", "none") else float(value)


def job_budget() -> float:
    """The estimated seconds above which a job is refused before it is queued: $RCQA_JOB_BUDGET_S, else
    JOB_BUDGET_SECONDS (rcqa.attribution.cost estimates a job)."""
    return _seconds_setting(BUDGET_ENV, JOB_BUDGET_SECONDS)


def job_time_limit() -> float:
    """The seconds a job may run before it is stopped: $RCQA_JOB_TIME_LIMIT_S, else JOB_TIME_LIMIT_SECONDS."""
    return _seconds_setting(TIME_LIMIT_ENV, JOB_TIME_LIMIT_SECONDS)


def short_job_seconds() -> float:
    """The worst-case seconds below which a job is short: $RCQA_SHORT_JOB_S, else SHORT_JOB_SECONDS (0: none is)."""
    return float(os.environ.get(SHORT_JOB_ENV) or SHORT_JOB_SECONDS)


def short_workers() -> int:
    """The short lane's workers: $RCQA_SHORT_WORKERS, else SHORT_WORKERS (0: no short lane)."""
    return max(0, int(os.environ.get(SHORT_WORKERS_ENV) or SHORT_WORKERS))


def session_jobs() -> int:
    """The jobs one session may have running or waiting: $RCQA_JOBS_PER_SESSION, else SESSION_JOBS."""
    return max(1, int(os.environ.get(SESSION_JOBS_ENV) or SESSION_JOBS))


def client_jobs() -> int:
    """The jobs one client address may have running or waiting, whatever its number of sessions:
    $RCQA_JOBS_PER_ADDRESS, else ADDRESS_JOBS (raise it where many visitors share an address: docs/serving.md)."""
    return max(1, int(os.environ.get(ADDRESS_JOBS_ENV) or ADDRESS_JOBS))


def minutes(seconds: float) -> str:
    """A limit in words: "90 seconds", "10 minutes"."""
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


def over_budget(job: str, seconds: float, budget: float, change: str) -> str:
    """The one sentence refusing a job (an "explanation", a "comparison", …) expected to take `seconds`, over the
    server's `budget`, naming what to change."""
    return (f"This {job} would take {in_words(seconds)} on this server, more than the {minutes(budget)} it allows "
            f"one job: {change}.")


# what makes one path point smaller: fewer tokens in a window, or a narrower, shallower model
MEMORY_CHANGE = "choose a smaller model, or a shorter question and passage (fewer tokens in a window)"


def memory_budget() -> float:
    """The MB one batch of a job's path points may hold, as the workers size them (rcqa.attribution.memory.budget_mb:
    $RCQA_MEMORY_BUDGET_MB, else the settings' budget, on a GPU within most of its free memory)."""
    return budget_mb(pick_device(), ExplainSettings().memory_budget_mb)


def over_memory(job: str, point_mb: float, budget: float) -> str:
    """The one sentence refusing a job (an "explanation", …) whose single path point holds `point_mb` MB, over the
    `budget` MB a batch may hold: no chunk can be smaller, so it would run past the budget or out of memory."""
    return (f"One path point of this {job} holds about {megabytes(point_mb)} MB, more than the {megabytes(budget)} "
            f"MB this server allows one batch of work: {MEMORY_CHANGE}.")


def megabytes(value: float) -> str:
    """MB as a person reads them: "1,900", "12", "1.3"."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def over_time_limit(job: str, worst: float, limit: float, change: str) -> str:
    """The one sentence refusing a job whose worst case (`worst` seconds) is past the `limit` a job may run: it
    would be stopped there, its work lost, however short it is expected to be."""
    return (f"This {job} could take up to {in_words(worst).removeprefix('about ')} on this server, past the "
            f"{minutes(limit)} it lets one job run before stopping it: {change}.")


def refusal(job: str, price: Price, change: str) -> str | None:
    """Why the server refuses the job at this price, in one sentence naming what to change: one path point over the
    memory budget (over_memory), expected seconds over the time budget (over_budget, with `change`), or a worst
    case past the time limit (over_time_limit: a link's steps=1&tol=0.001&maxsteps=512 was taken on its expected
    26 s though it could run 1,096 s, to be stopped at 600); None where it takes it."""
    if price.point_mb is not None and price.point_mb > (memory := memory_budget()):
        return over_memory(job, price.point_mb, memory)
    if price.seconds > (budget := job_budget()):
        return over_budget(job, price.seconds, budget, change)
    if price.most > (limit := job_time_limit()):
        return over_time_limit(job, price.most, limit, change)
    return None


def reading_price(qa_model: QAModel, passage: str, question: str) -> Price:
    """Answering a passage through the queue (a paste too long to answer in the page): a forward of every window the
    model reads it in (passage_windows), at most MAX_WINDOWS, past which reading refuses it before any forward."""
    return Price(reading_seconds(qa_model, min(MAX_WINDOWS, passage_windows(qa_model, passage, question)),
                                 qa_model.max_len))


def passage_windows(qa_model: QAModel, passage: str, question: str) -> int:
    """The windows rcqa.qa.encode cuts the passage into with the question, counted from the model's own tokenizer:
    every script then counts as the model reads it. Four characters a token priced 30,000 CJK characters at 30
    windows of the default model, which reads them as 120 (a character a token). Tokenising 100,000 characters takes
    0.06-0.26 s of a core here, outside the interpreter lock, once per model and text (kept)."""
    return _windows(qa_model.tokenizer, passage, question, qa_model.max_len, qa_model.doc_stride,
                    qa_model.max_query_len)


@functools.lru_cache(maxsize=8)
def _windows(tokenizer, passage: str, question: str, max_len: int, doc_stride: int, max_query_len: int) -> int:
    asked = len(tokenizer.tokenize(truncate_question(tokenizer, question.strip(), max_query_len)))
    held = max_len - asked - tokenizer.num_special_tokens_to_add(pair=True)  # a window's passage tokens
    stride = min(doc_stride, (max_len - asked - 4) // 2)  # as rcqa.qa.encode sets it
    tokens = len(tokenizer(passage, add_special_tokens=False, return_attention_mask=False, verbose=False)["input_ids"])
    return 1 + math.ceil(max(0, tokens - held) / (held - stride))  # each window overlaps the one before by the stride


def job_gpus() -> list[str]:
    """The GPUs the app's jobs run on, each as a child process's CUDA_VISIBLE_DEVICES names it: those this process
    sees (its own CUDA_VISIBLE_DEVICES entries, else 0 … count − 1) where the default device (rcqa.model.pick_device)
    is CUDA, only the one $RCQA_DEVICE names where it names one (cuda:1), none where the jobs run on the CPU."""
    device = pick_device()
    if device.type != "cuda":
        return []
    count = torch.cuda.device_count()
    named = [entry.strip() for entry in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if entry.strip()]
    visible = named[:count] if named else [str(index) for index in range(count)]
    return visible if device.index is None else visible[device.index:device.index + 1]


def default_workers(gpus: int = 0) -> int:
    """$RCQA_EXPLAIN_WORKERS, else one per GPU where the jobs run on `gpus` of them (one explanation already keeps a
    GPU busy with its batched path points), else one per four cores: on a CPU a second job would halve the speed of
    both, so more only where there are cores to spare."""
    if os.environ.get(WORKERS_ENV):
        return max(1, int(os.environ[WORKERS_ENV]))
    return gpus or max(1, (os.cpu_count() or 1) // 4)


def torch_threads(workers: int) -> int:
    """Torch threads for each of `workers` running jobs and for the server: the cores shared between the jobs and
    one core's worth for the server and answers ($RCQA_TORCH_THREADS overrides). More intra-op threads than free
    cores make every forward wait on descheduled threads: on 2 busy cores, tiny forwards ran 50 times slower with
    2 threads than with 1."""
    return int(os.environ.get(THREADS_ENV) or max(1, (os.cpu_count() or 1) // (workers + 1)))


def limit_torch_threads(workers: int) -> int:
    """Set this process's torch threads to torch_threads(workers), and return them."""
    threads = torch_threads(workers)
    torch.set_num_threads(threads)
    return threads


def lower_priority(niceness: int | None = None) -> None:
    """Raise the calling thread's niceness ($RCQA_JOB_NICE, default JOB_NICENESS; Linux schedules each thread on
    its own). With one torch thread (a 2-core machine) an explanation computes in the thread that runs it, so page
    scripts come first; torch's intra-op pool, where it has more threads, keeps its own priority."""
    wanted = int(os.environ.get(NICE_ENV, JOB_NICENESS)) if niceness is None else niceness
    try:
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), max(current, wanted))
    except (OSError, AttributeError):  # not Linux-like: leave the priority as it is
        pass
