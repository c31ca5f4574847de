"""McNemar and Holm against statsmodels and against cases worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from harness.stats import discordant_pairs, holm, holm_rejects, mcnemar


@pytest.mark.parametrize(("b", "c"), [(0, 5), (3, 9), (12, 4), (25, 40), (1, 0), (60, 45)])
@pytest.mark.parametrize("exact", [True, False])
def test_mcnemar_matches_statsmodels(b: int, c: int, exact: bool) -> None:
    # statsmodels takes the 2x2 table; only its off-diagonal (discordant) cells matter.
    table = [[7, b], [c, 11]]
    reference = sm_mcnemar(table, exact=exact, correction=True).pvalue
    assert mcnemar(b, c, exact=exact) == pytest.approx(reference, rel=1e-12)
    plain = sm_mcnemar(table, exact=False, correction=False).pvalue
    assert mcnemar(b, c, exact=False, correction=False) == pytest.approx(plain, rel=1e-12)


def test_mcnemar_by_hand() -> None:
    # b=1, c=4: P(X <= 1 | n=5, 1/2) = 6/32, two-sided 12/32.
    assert mcnemar(1, 4) == pytest.approx(12 / 32)
    # No difference between the arms on the pairs they disagree on: no evidence at all.
    assert mcnemar(6, 6) == 1.0
    assert mcnemar(6, 6, exact=False) == 1.0
    assert mcnemar(0, 0) == mcnemar(0, 0, exact=False) == 1.0


def test_discordant_pairs_count_only_disagreements() -> None:
    a = [True, True, False, False, True, True]
    b = [True, False, True, False, False, True]
    assert discordant_pairs(a, b) == (2, 1)
    with pytest.raises(ValueError, match="one per unit"):
        discordant_pairs(a, b[:-1])


def test_mcnemar_refuses_what_is_not_a_count() -> None:
    with pytest.raises(ValueError, match="counts"):
        mcnemar(-1, 3)
    with pytest.raises(ValueError, match="counts"):
        mcnemar(1.5, 3)  # type: ignore[arg-type]


def test_holm_by_hand() -> None:
    # m = 4: sorted 0.01, 0.02, 0.03, 0.5 -> 0.04, max(0.04, 0.06), max(.., 0.06), min(1, 0.5).
    adjusted = holm({"a": 0.03, "b": 0.01, "c": 0.5, "d": 0.02})
    assert adjusted == pytest.approx({"a": 0.06, "b": 0.04, "c": 0.5, "d": 0.06})
    assert list(adjusted) == ["a", "b", "c", "d"]  # the caller's order is kept
    assert holm_rejects({"a": 0.03, "b": 0.01, "c": 0.5, "d": 0.02}) == {
        "a": False,
        "b": True,
        "c": False,
        "d": False,
    }
    assert holm({}) == {}


def test_holm_matches_statsmodels() -> None:
    rng = np.random.default_rng(4)
    for size in (1, 2, 5, 13):
        pvalues = {f"h{i}": float(p) for i, p in enumerate(rng.random(size) ** 3)}
        reject, corrected, _, _ = multipletests(list(pvalues.values()), 0.05, method="holm")
        assert list(holm(pvalues).values()) == pytest.approx(list(corrected), rel=1e-12)
        assert list(holm_rejects(pvalues).values()) == list(reject)


@pytest.mark.parametrize("bad", [1.5, -0.1, float("nan")])
def test_holm_refuses_what_is_not_a_p_value(bad: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        holm({"x": 0.2, "y": bad})
    with pytest.raises(ValueError, match="alpha"):
        holm({"x": 0.2}, alpha=5)
