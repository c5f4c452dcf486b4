"""A four-word passage in one window, with its offsets and passage mask, for the span decoding tests."""
import torch

from rcqa.spans import Windows

PASSAGE = "alpha beta gamma delta"
# [CLS] q [SEP] alpha beta gamma delta [SEP]
OFFSETS = [(0, 0), (0, 1), (0, 0), (0, 5), (6, 10), (11, 16), (17, 22), (0, 0)]
PASSAGE_MASK = torch.tensor([[False, False, False, True, True, True, True, False]])


def windows(n: int = 1, offsets=None, mask=None) -> Windows:
    mask = PASSAGE_MASK.repeat(n, 1) if mask is None else mask
    return Windows(inputs={"input_ids": torch.zeros(mask.shape, dtype=torch.long)},
                   offsets=offsets or [OFFSETS] * n, passage_mask=mask)
