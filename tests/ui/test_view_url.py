"""The dashboard's link codec: a link's span and foil are parsed once, into the specs the View holds and hands on
to the settings, and their string forms come back out of the link unchanged."""
import pytest

from rcqa.attribution.settings import FoilSpec, ExplainSettings, SpanSpec
from rcqa.ui.view import View, from_query, to_query, view_fields

LINKS = [{"span": "nbest:3", "contrast": "text:a: b"}, {"span": "gold", "contrast": "text:Zürich"},
         {"span": "predicted", "contrast": "nbest:12"}, {"span": "nbest:19", "contrast": "distractor-number"},
         {"span": "gold", "contrast": "off"}, {"contrast": "runner-up"}, {"contrast": "null"}]


@pytest.mark.parametrize("link", LINKS)
def test_a_links_span_and_foil_come_back_out_of_it_as_written(link):
    view, problems = from_query(link)
    assert not problems
    query = to_query(view)
    assert {name: query[name] for name in link} == link
    assert to_query(from_query(query)[0]) == query  # and again: the codec is a fixed point


@pytest.mark.parametrize("link", [link for link in LINKS if link.get("contrast") != "off"])
def test_a_links_span_and_foil_are_parsed_exactly_once(link, monkeypatch):
    parsed = []
    for spec in (SpanSpec, FoilSpec):
        original = spec.parse.__func__

        def counting(cls, value, original=original):
            if isinstance(value, str):  # a spec handed on is not parsed
                parsed.append(value)
            return original(cls, value)
        monkeypatch.setattr(spec, "parse", classmethod(counting))
    view, _ = from_query(link)
    settings = view.settings()
    assert sorted(parsed) == sorted(link.values())  # each of the link's strings once: read, then handed on
    assert (str(settings.span), str(settings.contrast)) == (link.get("span", "predicted"), link["contrast"])


def test_settings_made_from_specs_are_the_settings_made_from_their_strings():
    from_specs = ExplainSettings(span=SpanSpec("nbest", 4), contrast=FoilSpec("text", text="3,750"))
    from_strings = ExplainSettings(span="nbest:4", contrast="text:3,750")
    assert from_specs == from_strings and hash(from_specs) == hash(from_strings)
    assert from_specs.to_dict() == from_strings.to_dict() and from_specs.to_dict()["span"] == "nbest:4"
    assert (from_specs.span, from_specs.contrast) == (SpanSpec("nbest", 4), FoilSpec("text", text="3,750"))


def test_a_view_holds_the_specs_and_its_settings_read_back_into_the_same_view():
    view = from_query({"span": "nbest:2", "contrast": "gold"})[0]
    assert (view.span, view.contrast) == (SpanSpec("nbest", 2), FoilSpec("gold"))
    assert isinstance(View().span, SpanSpec) and View().contrast is None
    assert View(**view_fields(view.settings())) == view


@pytest.mark.parametrize("question_words, special_tokens", [(False, None), (True, None), (False, True),
                                                             (True, True), (False, False)])
def test_the_heatmaps_toggles_come_back_out_of_a_link_and_only_those_off_their_default_are_in_it(question_words,
                                                                                                  special_tokens):
    # [CLS] and [SEP] are unset by default (shown for a null target), so turned off they are in the link too
    query = to_query(View(question_words=question_words, special_tokens=special_tokens))
    written = {name: "on" if on else "off" for name, on in (("qwords", question_words), ("special", special_tokens))
               if on or (name == "special" and on is False)}
    assert {name: query[name] for name in ("qwords", "special") if name in query} == written
    view, problems = from_query(query)
    assert (view.question_words, view.special_tokens, problems) == (question_words, special_tokens, [])


def test_the_heatmap_shows_cls_by_default_for_a_null_target_and_a_toggle_overrides_it():
    assert View().shows_special_tokens(explains_null=True) and not View().shows_special_tokens(explains_null=False)
    assert not View(special_tokens=False).shows_special_tokens(explains_null=True)
    assert View(special_tokens=True).shows_special_tokens(explains_null=False)


def test_a_links_question_is_bounded_as_the_box_is_and_never_written_back_whole():
    from rcqa.gallery import gallery_example
    from rcqa.qa import MAX_QUESTION_CHARS

    asked = "why " * 750  # 3,000 characters, over the box's 2,000
    view, problems = from_query({"src": "gallery", "ex": "orchard-how-many", "q": asked})
    assert problems == ["Ignored the link's question of 3,000 characters: a question holds at most 2,000."]
    assert view.question == gallery_example("orchard-how-many").question and "why why" not in str(to_query(view))
    fits = "w" * MAX_QUESTION_CHARS
    view, problems = from_query({"src": "gallery", "ex": "orchard-how-many", "q": fits})
    assert problems == [] and view.question == fits  # at the bound: kept, nothing said
