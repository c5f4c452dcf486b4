"""Tiny random QA models whose heads matter: at their init (std 0.02) attention is near uniform and a head moves
the span's log-likelihood by 1e-6, too little to tell a wrong head, fill or score from the right one."""
import shutil
from pathlib import Path

import torch

from rcqa.model import QAModel, load_model

SCALE = 15  # every weight matrix outside the embeddings, multiplied


def scaled_copy(tiny_dir: str, folder: Path) -> QAModel:
    """A private copy (its own folder, so its own loaded model) of the tiny model with its weight matrices scaled."""
    shutil.copytree(tiny_dir, folder)
    qa_model = load_model(str(folder))
    with torch.no_grad():
        for name, parameter in qa_model.model.named_parameters():
            if parameter.dim() == 2 and "embeddings" not in name:
                parameter.mul_(SCALE)
    return qa_model
