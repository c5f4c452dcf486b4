"""Features JSON <-> a compact npz for the trip to the GPU machine (the JSON is ~250 MB): token ids as uint16, the
windows' lengths, where the passage's token types begin, and the labels. `unpack` writes the same JSON text back."""
import json
import sys

import numpy as np


def pack(src: str, dst: str) -> None:
    features = json.load(open(src))
    ids = np.concatenate([np.asarray(f["input_ids"], dtype=np.uint16) for f in features])
    lengths = np.asarray([len(f["input_ids"]) for f in features], dtype=np.int32)
    second = np.asarray([f["token_type_ids"].index(1) if 1 in f["token_type_ids"] else len(f["token_type_ids"])
                         for f in features], dtype=np.int32)
    for f, s in zip(features, second):  # token types are 0 then 1 to the end: nothing else to keep
        assert f["token_type_ids"] == [0] * s + [1] * (len(f["token_type_ids"]) - s)
    labels = np.asarray([[f["start_positions"], f["end_positions"]] for f in features], dtype=np.int32)
    np.savez(dst, ids=ids, lengths=lengths, second=second, labels=labels)


def unpack(src: str, dst: str) -> None:
    data = np.load(src)  # an NpzFile reads an array from the zip at every access: each is read once here
    ids, lengths, second, labels = (data[key] for key in ("ids", "lengths", "second", "labels"))
    ends = np.cumsum(lengths).tolist()
    ids = ids.tolist()
    features = [{"input_ids": ids[end - n:end], "token_type_ids": [0] * s + [1] * (n - s),
                 "start_positions": a, "end_positions": b}
                for end, n, s, (a, b) in zip(ends, lengths.tolist(), second.tolist(), labels.tolist())]
    with open(dst, "w") as out:
        out.write(json.dumps(features))


if __name__ == "__main__":
    {"pack": pack, "unpack": unpack}[sys.argv[1]](*sys.argv[2:4])
