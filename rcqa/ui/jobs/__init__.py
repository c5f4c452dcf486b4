"""One bounded queue per process for heavy work (explanations), shared by every session of the app.

Every job comes with its price: the seconds it is expected to take and, at most, its worst case (an adaptive
explanation refined up to its max_steps); a job without one (missing, zero, negative, not a number) is refused with
Unpriced. Jobs wait in order of when they are due: when they arrived plus their expected seconds (Job). Two lanes
take them: the main lane's `workers` take any job (what the device holds), the short lane's `short_workers` only
jobs whose worst case is under `short_below` seconds, so that a short job never waits behind a long one (the short
lane runs it beside the long one, or, in one worker process, inside it between its chunks: rcqa.ui.worker). A long
job never runs in the short lane, even an idle one: that lane would then be the long job's, and the next short job
would wait for it.

Identical requests (the same key: the result cache's) are one job, computed once and handed to everyone who asked.
A session has at most one job waiting: asking for another withdraws it from the first. A job nobody waits for any
more (every asker cancelled or left) is dropped before it starts, and stopped while it runs; so is a job past
`time_limit` seconds of its own running (Job.running_seconds: its wait for a worker, or inside another's task, and
its pauses left out; a job whose work begins again keeps the seconds it ran). Stopping sets the job's stop event,
which its work watches (rcqa.ui.worker asks its task to stop at the next checkpoint, and answers the job at
once). Past `limit` waiting jobs, new ones are refused with Busy; so are those of a session that already has
`per_session` jobs running or waiting (SessionBusy), and of a client (an address, which may hold many sessions)
that has `per_client` (ClientBusy): a new job is a new claim on the workers, whatever its price, so running jobs
count as much as waiting ones.

Standard library only: the dashboard (rcqa.ui.queue) adapts it to Streamlit sessions, and rcqa.ui.capacity holds
what the operator sets. job.py: one job, its clock and the queue's refusals · lanes.py: the queue and its lanes.
"""
from __future__ import annotations

from rcqa.ui.jobs.job import (Busy, Cancelled, ClientBusy, Job, Report, Running, SessionBusy, Stopped, Unpriced, Work,
                              check_price)
from rcqa.ui.jobs.lanes import QUEUE_LIMIT, WATCH_SECONDS, JobQueue, Ticket

__all__ = ["QUEUE_LIMIT", "WATCH_SECONDS", "Busy", "Cancelled", "ClientBusy", "Job", "JobQueue", "Report", "Running",
           "SessionBusy", "Stopped", "Ticket", "Unpriced", "Work", "check_price"]
