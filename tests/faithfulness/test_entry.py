"""A compared entry (rcqa.faithfulness.entry): a method under one of its rankings, named as the saved comparisons,
sanity checks and dataset runs name it, and read back from that name alone, old names included."""
import pytest

from rcqa.faithfulness.entry import Entry, entry_label


def test_an_entry_is_named_and_labelled_as_the_saved_results_name_it():
    assert Entry("attnlrp", "signed").name == "attnlrp:signed"
    assert Entry("integrated_gradients", "magnitude").name == "integrated_gradients:magnitude"
    assert Entry("random", "random").name == "random"  # random is one entry, by its method's name alone
    assert Entry("attnlrp", "magnitude").label == "AttnLRP, magnitude"
    assert Entry("gradient_x_input", "signed").label == "Gradient × input, signed"
    assert Entry("random", "random").label == "Random"


def test_a_name_reads_back_as_its_entry_and_an_old_name_as_the_one_ranking_it_had():
    assert Entry.parse("attnlrp:signed") == Entry("attnlrp", "signed")
    assert Entry.parse("gradient:magnitude") == Entry("gradient", "magnitude")
    assert Entry.parse("random") == Entry("random", "random")
    # saved before each method was ranked both ways: AttnLRP was read signed, the gradients by magnitude
    assert Entry.parse("attnlrp") == Entry("attnlrp", "signed")
    assert Entry.parse("integrated_gradients") == Entry("integrated_gradients", "magnitude")
    assert entry_label("attnlrp") == "AttnLRP, signed" and entry_label("attention_rollout:magnitude") == (
        "Attention rollout, magnitude")
    for name in ("attnlrp:magnitude", "gradient_x_input:signed", "attention_tracing:magnitude", "random"):
        assert Entry.parse(name).name == name


@pytest.mark.parametrize("name", ["attnlrp:", "attnlrp:random", "random:random", "no_method:signed", "gradient:signed",
                                  "attnlrp:signed:magnitude", ""])
def test_a_name_no_registered_method_has_is_refused_in_one_sentence(name):
    # looked up among the registered entries, never taken apart: the gradient has no sign, random no other ranking
    with pytest.raises(ValueError, match="^unknown method or ranking .*; choose from gradient:magnitude, ") as refused:
        Entry.parse(name)
    assert "\n" not in str(refused.value)
