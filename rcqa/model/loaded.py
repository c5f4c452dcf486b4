"""The models a process keeps loaded, by name and device, within $RCQA_MODELS_MB of weights: load_model loads one
once (and refuses one that is not the model another process asked for), as_model takes a name or a loaded model."""
from __future__ import annotations

import os
import threading
from collections import OrderedDict

from rcqa.catalog import DEFAULT_MODEL, canonical, may_load
from rcqa.model.checkpoint import load_checkpoint
from rcqa.model.device import pick_device
from rcqa.model.qa_model import ModelLoadError, QAModel


MODELS_MB_ENV = "RCQA_MODELS_MB"
# the weights a process keeps loaded (the server, and each worker process): 11 models of the default's 86 MB, or one
# of BERT-large's 1.3 GB alone. Past it the least recently used are dropped; the one just asked for always stays
MODELS_MB = 1024
_loaded: OrderedDict[tuple[str, str], QAModel] = OrderedDict()
_lock = threading.Lock()


def models_budget_bytes() -> float:
    """The bytes of weights a process keeps loaded: $RCQA_MODELS_MB (MB, a fraction allowed), else MODELS_MB."""
    text = os.environ.get(MODELS_MB_ENV, "").strip() or str(MODELS_MB)
    try:
        megabytes = float(text)
    except ValueError:
        raise ModelLoadError(f"${MODELS_MB_ENV} must be a number of MB, not {text[:20]!r}") from None
    return megabytes * 2**20


def _drop_least_recent(budget: float) -> None:
    """Drop the least recently used models until the rest hold at most `budget` bytes of weights, keeping the most
    recent one whatever it weighs. A count bound let four large models (5 GB for BERT-large) stay in each process."""
    while len(_loaded) > 1 and sum(qa_model.weight_bytes for qa_model in _loaded.values()) > budget:
        _loaded.popitem(last=False)


def load_model(name: str = DEFAULT_MODEL, device: str | None = None, fingerprint: str | None = None) -> QAModel:
    """Load (once per process) the default model, a local folder or a hub id, in eval mode. In public mode only the
    catalog's models load (rcqa.catalog), and the refusal names nothing the visitor did not already know.

    A process that computes for another one (the app's worker processes, Dask's workers) passes the fingerprint
    of the model the other one loaded by this name: a different model (changed on disk since, or another machine's
    copy) is refused with ModelLoadError, so that no result is computed with one model and shown as another's."""
    try:
        name = canonical(name)
    except ValueError as error:  # a name too long to be a model's
        raise ModelLoadError(str(error)) from None
    if not may_load(name):
        raise ModelLoadError("this server offers only the models on its Model page")
    target = pick_device(device)
    key = (name, str(target))
    with _lock:
        if key not in _loaded:
            _loaded[key] = load_checkpoint(name, target)
        _loaded.move_to_end(key)
        _drop_least_recent(models_budget_bytes())
        qa_model = _loaded[key]
    if fingerprint is not None and qa_model.fingerprint != fingerprint:
        raise ModelLoadError(f"{name!r} is not the model it was asked for: its fingerprint is {qa_model.fingerprint}, "
                             f"not {fingerprint} (it has changed on disk since it was loaded first); reload the app "
                             "or start the run again")
    return qa_model


def as_model(model_or_name: str | QAModel, device: str | None = None) -> QAModel:
    """A loaded model as it is, or the model of that name (load_model): what the Python API accepts."""
    if isinstance(model_or_name, QAModel):
        return model_or_name
    if isinstance(model_or_name, str):
        return load_model(model_or_name, device)
    raise TypeError(f"give a model name ('default', a folder or a hub id) or a loaded model (rcqa.load_model), "
                    f"not {type(model_or_name).__name__}")
