"""Tiny random checkpoints of every `*ForQuestionAnswering` family of transformers that rcqa is asked to explain,
built offline and saved as real ones are (issue 30): 2 layers, hidden 32; random gain and bias on every norm, so
that a norm the layer stack skipped shows in completeness; the embedded model's BERT vocabulary for the WordPiece
families, a small BPE tokenizer trained here with `tokenizers` or the Unigram one trained once and kept
(UNIGRAM) for the rest."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer, PreTrainedTokenizerFast

from rcqa.gallery import GALLERY
from rcqa.resources import EMBEDDED_MODEL_DIRS

HIDDEN, LAYERS, HEADS, FFN = 32, 2, 2, 64
_BERT_LIKE = dict(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=FFN,
                  max_position_embeddings=512)
_DECODER = dict(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=1,
                intermediate_size=FFN, max_position_embeddings=512, head_dim=HIDDEN // HEADS)
_SEQ2SEQ = dict(d_model=HIDDEN, encoder_layers=LAYERS, decoder_layers=LAYERS, encoder_attention_heads=HEADS,
                decoder_attention_heads=HEADS, encoder_ffn_dim=FFN, decoder_ffn_dim=FFN, max_position_embeddings=512,
                init_std=0.2)  # BART's 0.02 leaves a random decoder all but deaf to the encoder


@dataclass(frozen=True)
class Family:
    """One family: its transformers model type, its config's shape, its tokenizer, and the blocks it has."""

    name: str
    model_type: str
    config: dict
    tokenizer: str = "wordpiece"  # "wordpiece" (the embedded vocabulary), "bpe", "unigram"
    layout: str = "bert"  # where the specials sit: "bert", "roberta", "t5" (none first), "decoder", "xlnet"
    layers: int = LAYERS  # blocks the explanation has (encoder and decoder blocks of an encoder-decoder)
    decoder: int = 0  # of those, the decoder's (an encoder-decoder's; Funnel's, after its upsampling)
    default: bool = False  # one of the representative set that runs in the default test run
    extra: dict = field(default_factory=dict)  # tokenizer settings (padding side)


FAMILIES = (
    Family("BERT", "bert", _BERT_LIKE, default=True),
    Family("RoBERTa", "roberta", {**_BERT_LIKE, "type_vocab_size": 1}, "bpe", "roberta"),
    Family("XLM-R", "xlm-roberta", {**_BERT_LIKE, "type_vocab_size": 1}, "unigram", "roberta"),
    Family("CamemBERT", "camembert", {**_BERT_LIKE, "type_vocab_size": 1}, "unigram", "roberta"),
    Family("DistilBERT", "distilbert", dict(dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS, hidden_dim=FFN)),
    Family("ALBERT", "albert", {**_BERT_LIKE, "embedding_size": 16}, "unigram"),
    Family("ELECTRA", "electra", {**_BERT_LIKE, "embedding_size": 16}),
    Family("DeBERTa", "deberta", {**_BERT_LIKE, "relative_attention": True, "pos_att_type": ["c2p", "p2c"]}, "bpe",
           "roberta"),
    Family("DeBERTa-v2", "deberta-v2", {**_BERT_LIKE, "relative_attention": True, "position_buckets": 32,
                                        "pos_att_type": ["c2p", "p2c"], "norm_rel_ebd": "layer_norm"}, "unigram"),
    Family("MPNet", "mpnet", _BERT_LIKE, layout="roberta"),
    Family("MobileBERT", "mobilebert", {**_BERT_LIKE, "embedding_size": 16, "intra_bottleneck_size": 16,
                                        "true_hidden_size": 16, "num_feedforward_networks": 2,
                                        "initializer_range": 0.2}),  # at 0.02 its logits hardly read the input
    Family("ConvBERT", "convbert", {**_BERT_LIKE, "embedding_size": 16}),
    Family("Data2Vec-text", "data2vec-text", {**_BERT_LIKE, "type_vocab_size": 1}, "bpe", "roberta"),
    Family("ERNIE", "ernie", _BERT_LIKE),
    Family("I-BERT", "ibert", {**_BERT_LIKE, "type_vocab_size": 1}, "bpe", "roberta"),
    Family("RemBERT", "rembert", {**_BERT_LIKE, "input_embedding_size": 16, "output_embedding_size": 16}, "unigram"),
    Family("RoFormer", "roformer", {**_BERT_LIKE, "embedding_size": HIDDEN}),
    Family("Megatron-BERT", "megatron-bert", _BERT_LIKE, default=True),
    Family("XLM-R-XL", "xlm-roberta-xl", {**_BERT_LIKE, "type_vocab_size": 1}, "unigram", "roberta"),
    Family("RoBERTa-PreLayerNorm", "roberta-prelayernorm", {**_BERT_LIKE, "type_vocab_size": 1}, "bpe", "roberta"),
    Family("Longformer", "longformer", {**_BERT_LIKE, "type_vocab_size": 1, "attention_window": [16] * LAYERS},
           "bpe", "roberta"),
    Family("ModernBERT", "modernbert", {**_BERT_LIKE, "global_attn_every_n_layers": 2, "local_attention": 16,
                                        }, default=True),
    Family("Funnel", "funnel", dict(block_sizes=[1, 1], block_repeats=[1, 1], num_decoder_layers=1, d_model=HIDDEN,
                                    n_head=HEADS, d_head=HIDDEN // HEADS, d_inner=FFN), layers=3, decoder=1),
    Family("SqueezeBERT", "squeezebert", {**_BERT_LIKE, "embedding_size": HIDDEN, "q_groups": 1, "k_groups": 1,
                                          "v_groups": 1, "post_attention_groups": 1, "intermediate_groups": 1,
                                          "output_groups": 1}),
    Family("Llama", "llama", _DECODER, "bpe", "decoder", default=True),
    Family("Mistral", "mistral", _DECODER, "bpe", "decoder"),
    Family("Qwen2", "qwen2", _DECODER, "bpe", "decoder"),
    Family("BART", "bart", _SEQ2SEQ, "bpe", "roberta", layers=2 * LAYERS, decoder=LAYERS, default=True),
    Family("mBART", "mbart", _SEQ2SEQ, "unigram", "roberta", layers=2 * LAYERS, decoder=LAYERS),
    Family("T5", "t5", dict(d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=FFN, num_layers=LAYERS,
                            num_decoder_layers=LAYERS, num_heads=HEADS, decoder_start_token_id=0,
                            feed_forward_proj="gated-gelu"), "unigram", "t5",  # T5 v1.1, flan-t5
           layers=2 * LAYERS, decoder=LAYERS),
    Family("BigBird", "big_bird", {**_BERT_LIKE, "attention_type": "original_full"}, "unigram"),
    Family("Splinter", "splinter", _BERT_LIKE),
    Family("FNet", "fnet", {k: v for k, v in _BERT_LIKE.items() if k != "num_attention_heads"}, "unigram"),
    Family("XLNet", "xlnet", dict(d_model=HIDDEN, n_layer=LAYERS, n_head=HEADS, d_inner=FFN), "unigram", "xlnet",
           extra={"padding_side": "left"}),
    Family("X-MOD", "xmod", {**_BERT_LIKE, "type_vocab_size": 1, "languages": ["en_XX"],
                             "default_language": "en_XX"}, "unigram", "roberta"),
    Family("MRA", "mra", {**_BERT_LIKE, "type_vocab_size": 1, "block_per_row": 2}, "bpe", "roberta"),
    Family("Nystromformer", "nystromformer", {**_BERT_LIKE, "num_landmarks": 64, "segment_means_seq_len": 64},
           "unigram"),
    Family("YOSO", "yoso", {**_BERT_LIKE, "type_vocab_size": 1}, "bpe", "roberta"),
    Family("LUKE", "luke", {**_BERT_LIKE, "entity_vocab_size": 4, "entity_emb_size": 16, "type_vocab_size": 1},
           "bpe", "roberta"),
)
BY_NAME = {family.name: family for family in FAMILIES}
_SPECIALS = {"bert": ("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"),
             "other": ("<s>", "</s>", "<pad>", "<unk>", "<mask>", "<sep>", "<cls>")}


def _corpus() -> list[str]:
    return [text for example in GALLERY for text in (example.passage, example.question)]


UNIGRAM = Path(__file__).with_name("unigram-tokenizer.json")


@cache
def _trained(kind: str):
    """A small BPE (byte-level) tokenizer trained on the gallery's passages, or the Unigram (Metaspace) one trained
    on them once and kept in UNIGRAM (tokenizers' UnigramTrainer, vocab_size 600, NFKC): the trainer ranks the
    pieces of equal score, and the characters it adds last, in a hash map's order, so that every run gave the same
    pieces other ids, and so other embeddings (mBART's worst completeness read 0.10 % in one run of the table and
    0.39 % in the next)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if kind == "unigram":
        return Tokenizer.from_file(str(UNIGRAM))
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=list(_SPECIALS["other"]),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(_corpus(), trainer)
    return tokenizer


def _layout(tokenizer, layout: str):
    """The family's pair template: where its [CLS]-like and separator tokens sit."""
    from tokenizers import processors

    templates = {"bert": ("<s> $A </s>", "<s> $A </s> $B </s>"), "roberta": ("<s> $A </s>", "<s> $A </s> </s> $B </s>"),
                 "t5": ("$A </s>", "$A </s> $B </s>"),
                 "decoder": ("<s> $A", "<s> $A </s> $B </s>"),
                 "xlnet": ("$A <sep> <cls>", "$A <sep> $B <sep> <cls>")}
    single, pair = templates[layout]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=[(t, tokenizer.token_to_id(t)) for t in _SPECIALS["other"]])
    return tokenizer


def tokenizer_for(family: Family):
    if family.tokenizer == "wordpiece":
        return AutoTokenizer.from_pretrained(EMBEDDED_MODEL_DIRS["default"])
    backend = _layout(_trained(family.tokenizer), family.layout)
    cls_token = "<cls>" if family.layout == "xlnet" else "<s>"
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<unk>", mask_token="<mask>", sep_token="</s>", cls_token=cls_token,
                                   model_max_length=512, **family.extra)


def _special_ids(tokenizer) -> dict:
    ids = {"pad_token_id": tokenizer.pad_token_id, "bos_token_id": tokenizer.bos_token_id or tokenizer.cls_token_id,
           "eos_token_id": tokenizer.eos_token_id or tokenizer.sep_token_id, "sep_token_id": tokenizer.sep_token_id,
           "cls_token_id": tokenizer.cls_token_id}
    return {k: v for k, v in ids.items() if v is not None}


def randomise_norms(model: torch.nn.Module, generator: torch.Generator) -> None:
    """Every norm's gain to 1 ± 0.5 and its bias to ± 0.5 at random: a norm the stack skipped then changes the
    logits by far more than the completeness tolerance."""
    for module in model.modules():
        if "norm" in type(module).__name__.lower():
            for name, parameter in module.named_parameters(recurse=False):
                noise = torch.rand(parameter.shape, generator=generator) - 0.5
                parameter.data = (1.0 + noise) if name in ("weight", "gamma", "scale") else noise


def build_family(family: Family, folder: Path, seed: int = 0) -> Path:
    """Save a random QA checkpoint of this family, with its tokenizer, into folder."""
    torch.manual_seed(seed)
    tokenizer = tokenizer_for(family)
    config = AutoConfig.for_model(family.model_type, vocab_size=len(tokenizer), **_special_ids(tokenizer),
                                  **family.config)
    model = AutoModelForQuestionAnswering.from_config(config)
    randomise_norms(model, torch.Generator().manual_seed(seed))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


CANNOT = {  # what a family cannot do, beside its row in docs/models.md
    "decoder": 'no "no answer": its first token reads only itself (causal attention)',
    "t5": 'no "no answer": no [CLS]-like first token',
    "xlnet": 'no "no answer": its [CLS] is last, which rcqa does not read',
}


def markdown_table(rows: list[dict]) -> str:
    """docs/models.md's table from the rows test_every_family_explains writes (RCQA_FAMILY_TABLE)."""
    lines = ["| family | path | layers | worst completeness | seconds | cannot |", "|---|---|---|---|---|---|"]
    for row in sorted(rows, key=lambda r: [f.name for f in FAMILIES].index(r["family"])):
        family = BY_NAME[row["family"]]
        cannot = CANNOT.get(family.layout if family.layout in CANNOT else family.model_type, "")
        if not cannot and not row["null"]:
            cannot = 'no "no answer": its first token does not read the passage'
        lines.append(f"| {row['family']} | {row['path']} | {row['layers']} | {row['worst']:.3%} | {row['seconds']} "
                     f"| {cannot} |")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m tests.helpers.families ROWS.jsonl: the table, as docs/models.md has it
    import json
    import sys

    print(markdown_table([json.loads(line) for line in open(sys.argv[1])]))
