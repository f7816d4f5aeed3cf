"""Which sentences are a figure's or table's caption title (evtui/ingest/sections.py `caption_title`)."""

from __future__ import annotations

from evtui.ingest.sections import caption_title, in_caption


def test_a_pdf_caption_label_line_is_a_title() -> None:
    assert caption_title("Table 1: Prediction of in vivo occupancy by HNF1 and HNF4.", "caption", "Table 1")
    assert caption_title("Figure 3. Kaplan-Meier curves of overall survival.", "caption", "Figure 3")


def test_a_legend_sentence_after_the_label_is_not() -> None:
    # a legend may report a result: left to the ranker
    text = "Although there is slightly higher GC content in the HNF4-bound groups, no GC bias was observed."
    assert not caption_title(text, "caption", "Figure 1", 2)


def test_a_body_sentence_citing_a_figure_is_not() -> None:
    # EvidenceBench's gold evidence holds sentences like this one: a finding, not a caption
    assert not caption_title("Table 3 shows the comparison of rates between the two areas.", "results", "Results")
    assert not caption_title("Figure 2. Kaplan-Meier curves of overall survival.", "results", "Results")


def test_a_bioc_caption_passage_opens_with_its_title() -> None:
    assert in_caption("other", "fig_caption") and in_caption("other", "TABLE_CAPTION")
    assert caption_title("Kaplan-Meier curves of overall survival by arm.", "other", "fig_caption", 0)
    assert not caption_title("Survival was longer with the drug.", "other", "fig_caption", 1)
    assert not in_caption("other", "Results")
