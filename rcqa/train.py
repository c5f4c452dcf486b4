"""Fine-tune a pretrained encoder for extractive QA on SQuAD v1.1: the recipe behind the default model.

Standard recipe (question + passage windows of max_len tokens with doc_stride overlap, AdamW, linear
warm-up and decay), tuned for small CPUs: windows that do not hold the answer are dropped (SQuAD v1.1
questions always have one), batches are grouped by length and padded only to their longest window,
and a checkpoint every few minutes lets an interrupted run resume exactly where it stopped.

With negatives (rcqa.negatives, SQuAD 2.0-style unanswerable questions built from the training questions), every
window of an unanswerable question is labelled [CLS] for start and end, as BERT's run_squad does for SQuAD 2.0;
held-out articles give a v2-style file to choose the checkpoint on, without dev.
"""
from __future__ import annotations

import functools
import json
import math
import random
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from rcqa.model import pick_device
from rcqa.negatives import squad_v2_document, split_by_article, with_negatives
from rcqa.qa import truncate_question
from rcqa.spans import NULL_TOKEN, token_span
from rcqa.types import Example

HELD_OUT_FILE = "held_out-v2.json"


@dataclass
class TrainConfig:
    output_dir: str = "runs/default"
    max_len: int = 256
    doc_stride: int = 128
    max_query_len: int = 64
    batch_size: int = 32
    learning_rate: float = 1e-4
    weight_decay: float = 0.01
    warmup_fraction: float = 0.1
    epochs: float = 1.0
    seed: int = 0
    checkpoint_every: int = 50  # optimizer steps
    # A warm start (base_model = an already fine-tuned model) names the step its weights reached: the
    # batches before it were trained on and are skipped, and warm-up and decay span only the steps left.
    first_step: int = 0
    limit: int | None = None  # train on the first N questions only (smoke runs)
    negatives: float = 0.0  # share of SQuAD 2.0-style unanswerable questions added (rcqa.negatives); 0: none
    in_context: float = 0.5  # share of those negatives that are in-context ones
    perturbed: float = 0.0  # share of those negatives that are question perturbations (the rest: other-paragraph)
    held_out_articles: int = 0  # whole articles kept out of training, written as a v2-style file to choose on
    keep_every: int | None = None  # also keep the model every N steps (step-N/), to choose a checkpoint later
    recipe: str | None = None  # the named recipe followed (RECIPES), for the card's command


# What decides a run's features (its windows and labels): a run that agrees on these reads the features another
# recorded (a resume, or a run prepared where spaCy builds the negatives and trained where a GPU is), whatever its
# learning rate, length or checkpoints.
FEATURE_FIELDS = ("max_len", "doc_stride", "max_query_len", "seed", "limit", "negatives", "in_context", "perturbed",
                  "held_out_articles")


RECIPES = {
    # the abstaining model: warm-started from the default model, v1.1 train plus a third of unanswerable
    # questions (a third each in-context, other-paragraph and question perturbations: SQuAD 2.0's hard kinds), a
    # quarter epoch of the mixed set (hours on 2 cores); checkpoints kept to choose on held-out train articles
    "squad2": {"output_dir": "runs/squad2", "negatives": 1 / 3, "in_context": 1 / 3, "perturbed": 1 / 3,
               "epochs": 0.25, "learning_rate": 5e-5, "warmup_fraction": 0.1, "held_out_articles": 20,
               "keep_every": 250},
    # its second stage: the squad2 model (--base-model) trained a fifth of an epoch more on the same mix, whose
    # entity swaps now fall back to noun swaps; checkpoints kept to choose on the same held-out articles
    "squad2-hard": {"output_dir": "runs/squad2-hard", "negatives": 1 / 3, "in_context": 1 / 3, "perturbed": 1 / 3,
                    "epochs": 0.2, "learning_rate": 5e-5, "warmup_fraction": 0.1, "held_out_articles": 20,
                    "keep_every": 300},
    # the third stage, for the kinds still missed: the embedded default-squad2 trained a fifth of an epoch more at
    # a lower rate on a mix whose negatives are half question perturbations (WordNet's antonyms, name-word swaps);
    # the same seed and held-out articles as the first two stages, so no held-out question was ever trained on
    "squad2-lexicon": {"output_dir": "runs/squad2-lexicon", "negatives": 1 / 3, "in_context": 1 / 4,
                       "perturbed": 1 / 2, "epochs": 0.2, "learning_rate": 3e-5, "warmup_fraction": 0.1,
                       "held_out_articles": 20, "keep_every": 200},
    # the third stage's mix trained two whole epochs more from its model, a model kept every half epoch, to see
    # whether the kinds still missed hold with more training (days on 2 CPU cores, minutes on a GPU: --device cuda)
    "squad2-lexicon-long": {"output_dir": "runs/squad2-lexicon-long", "negatives": 1 / 3, "in_context": 1 / 4,
                            "perturbed": 1 / 2, "epochs": 2.0, "learning_rate": 3e-5, "warmup_fraction": 0.1,
                            "held_out_articles": 20, "keep_every": 2090},
}
NEEDS_BASE = {"squad2-hard": "the squad2 recipe's model (runs/squad2/final)"}  # recipes with no default base
# the embedded model a recipe starts from
RECIPE_BASES = {"squad2": "default", "squad2-lexicon": "default-squad2", "squad2-lexicon-long": "default-squad2"}


def training_examples(config: TrainConfig, examples: list[Example]) -> tuple[list[Example], list[Example]]:
    """(training, held out) as the config asks: the first `limit` questions, whole articles held out, and then
    the negatives built from each part apart (so no held-out paragraph is seen in training)."""
    examples = examples[: config.limit] if config.limit else examples
    training, held_out = split_by_article(examples, config.held_out_articles, config.seed)
    if config.negatives:
        mix = functools.partial(with_negatives, share=config.negatives, in_context=config.in_context,
                                perturbed=config.perturbed, seed=config.seed)
        training, held_out = mix(training), mix(held_out)
    return training, held_out


def featurize(examples: list[Example], tokenizer, config: TrainConfig) -> list[dict]:
    """Tokenize into windows and label each with the answer's token span; drop answerless windows."""
    questions = [truncate_question(tokenizer, e.question, config.max_query_len) for e in examples]
    encoded = tokenizer(
        questions, [e.passage for e in examples], truncation="only_second", max_length=config.max_len,
        stride=config.doc_stride, return_overflowing_tokens=True, return_offsets_mapping=True,
        padding=False,
    )
    features = []
    for i, offsets in enumerate(encoded["offset_mapping"]):
        example = examples[encoded["overflow_to_sample_mapping"][i]]
        if example.is_impossible:  # "no answer" is read at [CLS]: every window of the question says so
            features.append(_feature(encoded, i, NULL_TOKEN, NULL_TOKEN))
            continue
        if not example.answers:
            continue
        answer = example.answers[0]
        passage_tokens = [t for t, s in enumerate(encoded.sequence_ids(i)) if s == 1]
        span = token_span(offsets, passage_tokens, answer.start_char, answer.start_char + len(answer.text))
        if span is None:
            continue
        features.append(_feature(encoded, i, *span))
    return features


def _feature(encoded, window: int, start: int, end: int) -> dict:
    return {"input_ids": encoded["input_ids"][window], "token_type_ids": encoded["token_type_ids"][window],
            "start_positions": start, "end_positions": end}


def length_grouped_batches(lengths: list[int], batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    """Shuffle, sort within mega-batches of 50 batches by length, then shuffle the batches."""
    rng = random.Random(seed * 1000 + epoch)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    mega = batch_size * 50
    batches = []
    for begin in range(0, len(order), mega):
        chunk = sorted(order[begin:begin + mega], key=lambda i: lengths[i], reverse=True)
        batches += [chunk[b:b + batch_size] for b in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def collate(features: list[dict], pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(f["input_ids"]) for f in features)
    def padded(key: str, value: int) -> torch.Tensor:
        return torch.tensor([f[key] + [value] * (width - len(f[key])) for f in features])
    return {
        "input_ids": padded("input_ids", pad_id),
        "token_type_ids": padded("token_type_ids", 0),
        "attention_mask": torch.tensor([[1] * len(f["input_ids"]) + [0] * (width - len(f["input_ids"])) for f in features]),
        "start_positions": torch.tensor([f["start_positions"] for f in features]),
        "end_positions": torch.tensor([f["end_positions"] for f in features]),
    }


def train(config: TrainConfig, examples: list[Example], base_model: str | Path, device: str | None = None,
          prepare_only: bool = False) -> Path:
    """Train (or resume) into config.output_dir on device (rcqa.model.pick_device: CUDA where present); returns the
    folder of the final model. prepare_only builds and records the features and the held-out file, and stops before
    the first step: the folder then trains elsewhere (a GPU machine without spaCy) without building them again."""
    from transformers import (
        AutoModelForQuestionAnswering,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    base_card = Path(base_model) / "rcqa_card.json"
    if base_card.is_file() and not (output / "base_card.json").exists():  # a warm start: its card goes on record
        shutil.copyfile(base_card, output / "base_card.json")
    _set_seed(config.seed)
    target = pick_device(device)
    tokenizer = AutoTokenizer.from_pretrained(str(base_model))
    model = AutoModelForQuestionAnswering.from_pretrained(str(base_model), dtype=torch.float32).to(target)
    source_questions = len(examples)
    features, features_file = _features_of_this_run(output, config, source_questions)
    if features is None:
        examples, held_out = training_examples(config, examples)
        if held_out:
            (output / HELD_OUT_FILE).write_text(json.dumps(squad_v2_document(held_out)))
        features, features_file = _cached_features(output, examples, tokenizer, config)
    lengths = [len(f["input_ids"]) for f in features]
    steps_per_epoch = math.ceil(len(features) / config.batch_size)
    total_steps = max(1, int(steps_per_epoch * config.epochs))
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": config.weight_decay},
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=config.learning_rate)
    planned = max(1, total_steps - config.first_step)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_fraction * planned), planned)
    step = _resume(output, model, optimizer, scheduler, target) or config.first_step
    (output / "train_config.json").write_text(json.dumps({**asdict(config), "features": len(features),
                                                           "features_file": features_file,
                                                           "source_questions": source_questions,
                                                           "total_steps": total_steps,
                                                           "device": device_name(target)}, indent=2))
    if prepare_only:
        return output
    model.train()
    progress = tqdm(total=total_steps, initial=step, desc="training", unit="step", mininterval=10)
    log = (output / "train_log.jsonl").open("a")
    batches: dict[int, list[list[int]]] = {}
    while step < total_steps:
        epoch, index = divmod(step, steps_per_epoch)
        if epoch not in batches:
            batches = {epoch: length_grouped_batches(lengths, config.batch_size, config.seed, epoch)}
        batch_ids = batches[epoch][index]
        started = time.perf_counter()
        batch = collate([features[i] for i in batch_ids], tokenizer.pad_token_id)
        loss = model(**{key: value.to(target) for key, value in batch.items()}).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        progress.update(1)
        progress.set_postfix(loss=f"{loss.item():.3f}")
        log.write(json.dumps({"step": step, "loss": round(loss.item(), 4), "lr": scheduler.get_last_lr()[0],
                              "seconds": round(time.perf_counter() - started, 3)}) + "\n")
        log.flush()
        if step % config.checkpoint_every == 0 or step == total_steps:
            _checkpoint(output, model, optimizer, scheduler, step)
        if config.keep_every and step % config.keep_every == 0:
            model.save_pretrained(output / f"step-{step}")
            tokenizer.save_pretrained(output / f"step-{step}")
    progress.close()
    final = output / "final"
    model.eval()
    model.save_pretrained(final)
    tokenizer.save_pretrained(final)
    return final


def device_name(device: torch.device) -> str:
    """What a run trained on, for its card: "cuda (NVIDIA H200)", "cpu (2 cores)"."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"cpu ({torch.get_num_threads()} cores)"


def _set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def _features_of_this_run(output: Path, config: TrainConfig,
                          source_questions: int) -> tuple[list[dict] | None, str | None]:
    """A resumed or prepared run's features, read back without building its negatives again (spaCy's perturbations
    take tens of minutes over SQuAD train): only when the run recorded them under the same FEATURE_FIELDS and data
    size."""
    recorded = output / "train_config.json"
    if not recorded.is_file():
        return None, None
    started = json.loads(recorded.read_text())
    name = started.get("features_file")
    same = started.get("source_questions") == source_questions and all(
        started.get(key) == getattr(config, key) for key in FEATURE_FIELDS)
    if not (same and name and (output / name).is_file()):
        return None, None
    return json.loads((output / name).read_text()), name


def _cached_features(output: Path, examples: list[Example], tokenizer,
                     config: TrainConfig) -> tuple[list[dict], str]:
    negatives = f"-neg{config.negatives:.3f}-held{config.held_out_articles}" if config.negatives else ""
    if config.negatives and (config.in_context, config.perturbed) != (0.5, 0.0):  # the old runs' keys stay
        negatives += f"-ctx{config.in_context:.3f}-pert{config.perturbed:.3f}"
    path = output / f"features-{config.max_len}-{config.doc_stride}-{len(examples)}{negatives}.json"
    if path.is_file():
        return json.loads(path.read_text()), path.name
    features = featurize(examples, tokenizer, config)
    path.write_text(json.dumps(features))
    return features, path.name


def _checkpoint(output: Path, model, optimizer, scheduler, step: int) -> None:
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "scheduler": scheduler.state_dict(), "step": step, "torch_rng": torch.get_rng_state()}
    partial = output / "checkpoint.pt.part"
    torch.save(state, partial)
    partial.replace(output / "checkpoint.pt")  # atomic: an interrupted save never corrupts the last one


def _resume(output: Path, model, optimizer, scheduler, device: torch.device) -> int:
    path = output / "checkpoint.pt"
    if not path.is_file():
        return 0
    # tensors and plain containers only: a checkpoint runs no code; a run stopped on a GPU resumes on a CPU and back
    state = torch.load(path, weights_only=True, map_location=device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"].cpu())
    return state["step"]
