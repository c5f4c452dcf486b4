"""Heavy work in processes of their own, scheduled as idle, so that a server's pages never wait behind it.

An explanation runs for seconds as many short torch calls, holding the interpreter lock between them. In the
server's process it shares that lock with every page script and with the websocket loop, and a thread lowered in
priority is descheduled while it holds the lock, which stalls them all. A child process has an interpreter of its
own, and as SCHED_IDLE it runs only on cores nothing else wants: a new visitor's page takes them at once.

Children are forked from multiprocessing's fork server, which imported torch and the library once (forking the
threaded server itself is unsafe, and CUDA cannot be forked: that server is neither), load each model
they are asked for by name once and check its fingerprint against the server's, and report progress over their
pipe (rcqa.ui.child runs in them). On a machine with GPUs each child is bound to one, and sees only that one.

A short job (the queue's short lane) that finds every child busy is sent to the busy child with the fewest tasks,
which runs it at the long task's next checkpoint (between chunks of path points, a few seconds apart) and then
goes on with the long one: the long job is held meanwhile, and its time limit does not count that. Nor does a
job's wait for a worker, or inside another task for its checkpoint: its clock runs only while it computes.

Stops are cooperative (process.py): a stopped job's visitor is answered at once, and its task ends at its next
checkpoint or runs on to its end with its result dropped; a process is killed only when every task computing in it
was stopped and none ended within the grace, so no visitor's task is lost to another's Cancel. A child that dies
(out of memory, a crash) fails the jobs that had begun in it with WorkerDied, and those still waiting in it go
again on its replacement.

process.py: one child as the server sees it · pool.py: the children a queue lends its jobs to · tasks.py: what the
app sends them.
"""
from __future__ import annotations

import os

from rcqa.ui.child import Task
from rcqa.ui.worker.pool import WorkerProcesses
from rcqa.ui.worker.process import POLL_SECONDS, STOP_GRACE_SECONDS, Displaced, Timing, WorkerDied, WorkerProcess
from rcqa.ui.worker.tasks import (ExplanationRequest, analysis, comparison, contrast_margins, explanation, heads,
                                  image, knockouts, lens, projection, reading, sanity, sentence_evidence)

PROCESS_ENV = "RCQA_JOB_PROCESSES"  # "0": run heavy jobs in the server's own threads instead

__all__ = ["POLL_SECONDS", "PROCESS_ENV", "STOP_GRACE_SECONDS", "Displaced", "ExplanationRequest", "Task", "Timing",
           "WorkerDied", "WorkerProcess", "WorkerProcesses", "analysis", "comparison", "contrast_margins",
           "explanation", "heads", "image", "knockouts", "lens", "processes_enabled", "projection", "reading",
           "sanity", "sentence_evidence"]


def processes_enabled() -> bool:
    return os.environ.get(PROCESS_ENV, "1") != "0"
