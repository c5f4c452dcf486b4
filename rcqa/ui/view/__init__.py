"""What the pages show, as one View (state), kept in the session and mirrored to the URL (session, url), so a link
reproduces what its sender saw; how the pages name its choices (labels). Bad settings in a link fall back to
defaults, each with one sentence saying so. The pages reach it all as `view.NAME`."""
from rcqa.ui.view.labels import (KNOCKOUT_NAMES, METHOD_NAMES, RULE_NAMES, foil_label, span_label, target_label,
                                 versus_label)
from rcqa.ui.view.session import (apply_preset, bind, example_changed, fit_head, fit_layers, fit_target, fit_windows,
                                  foil_typed, publish, settings_under, show_url_problems, target_chosen, update, view,
                                  why_not, why_not_rank)
from rcqa.ui.view.state import (ABSTENTION_TARGET, MAX_TOP_K, MODEL_ENV, NAMED_FOILS, NBEST_SPANS, PICKABLE_TARGETS,
                                SOURCES, SPANS, TOLERANCES, VERSUS_KINDS, VersusSpec, View, default_model,
                                method_windows, opening_settings, view_fields)
from rcqa.ui.view.url import PAIR_UNITS, UNIT_GRANULARITIES, URL_PASSAGE_LIMIT, from_query, parse_versus, passage_hash, shown_versus, to_query

__all__ = ["ABSTENTION_TARGET", "KNOCKOUT_NAMES", "MAX_TOP_K", "METHOD_NAMES", "MODEL_ENV", "NAMED_FOILS", "NBEST_SPANS",
           "PAIR_UNITS", "PICKABLE_TARGETS", "RULE_NAMES", "SOURCES", "SPANS", "TOLERANCES", "UNIT_GRANULARITIES", "URL_PASSAGE_LIMIT",
           "VERSUS_KINDS", "VersusSpec", "View", "apply_preset", "bind", "default_model", "example_changed", "fit_head", "fit_layers",
           "fit_target", "fit_windows", "foil_label", "foil_typed", "from_query", "method_windows", "opening_settings", "parse_versus", "passage_hash",
           "publish", "settings_under", "shown_versus", "span_label", "target_chosen", "target_label", "to_query", "update", "versus_label",
           "view", "view_fields", "why_not", "why_not_rank"]
