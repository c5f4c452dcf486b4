"""A long paste's answer priced from the model's tokenizer (issue 56): the windows counted are the ones rcqa.qa.encode
reads, in every script and family, where four characters a token priced 30,000 CJK characters at 30 windows of the
default model, which reads 120; and the page queues the reading at that price."""
import random

import pytest

from rcqa.attribution.cost import reading_seconds
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from rcqa.qa import MAX_WINDOWS, encode
from rcqa.ui.capacity import passage_windows, reading_price
from tests.helpers.app_harness import open_app, recorded_prices

QUESTION = "Who designed the lighthouse?"


def scripts(characters: int = 2_000) -> dict[str, str]:
    """Passages in scripts a tokenizer reads at very different rates, each about `characters` long (2,000: within
    the tiny models' 128 windows of 128 tokens even for a byte-level BPE, 3 tokens a CJK character)."""
    rng = random.Random(56)
    canal = gallery_example("canal-long").passage
    words = characters // 3
    return {"english": (canal * (1 + characters // len(canal)))[:characters],
            "cjk": "".join(chr(0x4E00 + rng.randrange(20_000)) for _ in range(characters)),
            "hangul words": " ".join("".join(chr(0xAC00 + rng.randrange(11_000)) for _ in range(rng.randrange(1, 5)))
                                     for _ in range(words)),
            "punctuation": ", ; " * (characters // 4),
            "digits and letters": " ".join(f"a{n}b" for n in range(characters // 6)),
            "emoji": "😀 " * (characters // 2)}


def windows_read(qa_model, passage: str) -> int:
    return len(encode(qa_model, QUESTION, passage).inputs["input_ids"])


@pytest.mark.parametrize("family", ["bert", "roberta", "albert", "distilbert", "electra"])
def test_the_windows_priced_are_the_windows_read_in_every_script(tiny_model_dirs, family):
    qa_model = load_model(tiny_model_dirs[family])
    for script, passage in scripts().items():
        assert passage_windows(qa_model, passage, QUESTION) == windows_read(qa_model, passage), script


def test_thirty_thousand_cjk_characters_are_priced_as_the_default_model_reads_them():
    qa_model = load_model("default")
    passage = "".join(chr(0x4E00 + n % 20_000) for n in range(30_000))
    read = windows_read(qa_model, passage)
    # read at a token a character or more: four characters a token, the estimate this replaced, gave 30 windows
    assert read >= 120 and len(qa_model.tokenizer.tokenize(passage)) >= len(passage)
    assert passage_windows(qa_model, passage, QUESTION) == read
    assert reading_price(qa_model, passage, QUESTION).seconds == reading_seconds(qa_model, read, qa_model.max_len)


def test_a_paste_past_the_window_limit_is_priced_at_the_limit_reading_stops_at():
    qa_model = load_model("default")
    passage = "".join(chr(0x4E00 + n % 20_000) for n in range(60_000))  # 240 windows: refused after tokenising
    assert passage_windows(qa_model, passage, QUESTION) > MAX_WINDOWS
    assert reading_price(qa_model, passage, QUESTION).seconds == reading_seconds(qa_model, MAX_WINDOWS,
                                                                                 qa_model.max_len)


def test_the_page_queues_a_long_pastes_answer_at_the_windows_it_reads(app_env, monkeypatch):
    qa_model = load_model(app_env["bert"])
    passage = scripts(6_000)["cjk"]  # past the 4,000 characters a page answers itself
    prices = recorded_prices(monkeypatch)
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    app.text_input(key="rcqa.widget.question").input(QUESTION).run()
    app.text_area(key="rcqa.widget.passage").input(passage).run()
    assert not app.exception, [e.value for e in app.exception]
    [(expected, _)] = [price for key, price in prices.items() if key.startswith("answer")]
    read = windows_read(qa_model, passage)
    # more than 3 tokens for every 4 characters: where four characters a token, the estimate this replaced, fell short
    assert len(qa_model.tokenizer.tokenize(passage)) > 3 * len(passage) / 4
    assert expected == pytest.approx(reading_seconds(qa_model, read, qa_model.max_len))
