"""Load any extractive-QA checkpoint (the embedded default, a local folder, or a hub id) once per process.

qa_model: QAModel, the loaded model and what rcqa reads of it, and ModelLoadError; loaded: load_model and as_model,
the models a process keeps within $RCQA_MODELS_MB; checkpoint: reading a folder or a hub id, with its card; device:
pick_device; random_model: random_bert, for timing. What most of rcqa imports is named here.
"""
from rcqa.catalog import DEFAULT_MODEL
from rcqa.model.device import pick_device
from rcqa.model.loaded import as_model, load_model
from rcqa.model.qa_model import ModelLoadError, QAModel

__all__ = ["DEFAULT_MODEL", "ModelLoadError", "QAModel", "as_model", "load_model", "pick_device"]
