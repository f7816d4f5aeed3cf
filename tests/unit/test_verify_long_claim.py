"""A pasted paragraph as the claim: the verifier reads its first half-length of tokens instead of failing, and every
claim short enough (all training claims but four) is encoded exactly as before."""

from __future__ import annotations

import numpy as np

from evtui.verify.model import Verifier, encode_pairs, fit_claim

SENTENCE = "Aspirin use was associated with a lower risk of colorectal cancer (HR 0.76, 95% CI 0.63-0.94)."


def test_a_paragraph_long_claim_is_verified_not_refused() -> None:
    v = Verifier()
    claim = "Low-dose aspirin taken daily for several years reduces the incidence of colorectal cancer. " * 12
    (p,) = v.verify(claim, [SENTENCE])
    assert abs(p.p_support + p.p_refute + p.p_neutral - 1) < 1e-4
    ids, am, _ = v._encode([claim], [SENTENCE])
    assert ids.shape[1] <= 128 and am.all()
    # the sentence keeps at least half of the model's length
    sentence_ids = v._tok.encode(SENTENCE).ids
    assert ids.shape[1] >= len(sentence_ids)


def test_short_claims_are_untouched_and_long_ones_cut_to_a_prefix() -> None:
    v = Verifier()
    tok = v._tok
    short = "Aspirin reduces the risk of colorectal cancer."
    assert fit_claim(tok, short) == short
    before = tok.encode_batch([(short, SENTENCE)])[0].ids
    ids, _, _ = encode_pairs(tok, [short], [SENTENCE])
    assert np.array_equal(ids[0], before)
    long = " ".join(f"word{i}" for i in range(200))
    cut = fit_claim(tok, long)
    assert long.startswith(cut) and len(cut) < len(long)
    assert tok.truncation["strategy"] == "only_second"  # the shared settings are restored
