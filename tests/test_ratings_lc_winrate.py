"""AlpacaEval 2 win rate and length-controlled win rate.

Fidelity against the official leaderboard (``shared/data/alpaca-eval``):

* Win rate is exact: every one of the 20 models with annotations reproduces the CSV ``win_rate``.
* LC cannot be reproduced exactly offline. The official LC uses two Hugging Face files that are not in the
  shared data: the instruction difficulties gamma (fitted once by the maintainers over many models) and
  ``df_gamed.csv`` (annotations of the two length-gamed baselines that regularise the GLM). With gamma
  estimated jointly from the 19 non-baseline models available here and no gamed rows, LC lands at MAE ~4.1
  points (max ~14.6, gpt4_0613_concise; rank correlation 0.97). Models whose outputs are about as long as the
  baseline's (the FuseChat models, NullModel, gemma-2b-it, oasst) stay within ~1 point; short "concise"
  outputs are over-credited because, without the gamed rows, nothing ties down the length slope. Adding
  synthetic gamed rows (real gamed-baseline lengths, preferences predicted from their *official* GLM
  weights) brings it to MAE ~2.7 (max ~6.5). The published analysis got MAE 0.94 with gamma re-estimated
  from 57 models; most of the remaining gap is gamma quality. The thresholds below are those measured values
  plus a small margin. The GLM machinery itself is checked exactly against scikit-learn where installed.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import spearmanr

from jurist.ratings.lc_winrate import (
    GamedRows,
    alpaca_preference_to_probability,
    cv_l1_c,
    estimate_instruction_difficulty,
    fit_soft_logistic,
    gamed_rows,
    grouped_folds,
    length_controlled_win_rate,
    length_controlled_win_rates,
    standardized_length_gap,
    win_rate,
)

ALPACA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "alpaca-eval"
BASELINE = "gpt4_1106_preview"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
needs_data = pytest.mark.skipif(
    not (ALPACA / "results").is_dir(), reason="shared AlpacaEval data not present"
)


class AlpacaData(NamedTuple):
    """Preferences (models x 805 instructions, NaN if missing), raw preference lists, lengths, officials."""

    names: list[str]
    prob: np.ndarray
    raw: list[np.ndarray]
    lens: np.ndarray
    baseline_len: np.ndarray
    instruction_index: dict[str, int]
    leaderboard: dict[str, dict[str, str]]
    weights: dict[str, tuple[float, float, float]]


def _read_json_gz(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def alpaca() -> AlpacaData:
    reference = _read_json_gz(ALPACA / "results" / BASELINE / "model_outputs.json.gz")
    index = {str(r["instruction"]): i for i, r in enumerate(reference)}
    baseline_len = np.array([len(str(r["output"])) for r in reference], dtype=float)
    names = sorted(p.name for p in (ALPACA / "results").iterdir() if (p / ANNOTATOR).is_dir())
    prob = np.full((len(names), len(reference)), np.nan)
    lens = np.full_like(prob, np.nan)
    raw = []
    for m, name in enumerate(names):
        rows = _read_json_gz(ALPACA / "results" / name / ANNOTATOR / "annotations.json.gz")
        prefs = np.array([np.nan if r["preference"] is None else float(r["preference"]) for r in rows])  # type: ignore[arg-type]
        raw.append(prefs)
        for r, pref in zip(rows, prefs, strict=True):
            i = index[str(r["instruction"])]
            prob[m, i] = alpaca_preference_to_probability(pref)
            lens[m, i] = len(str(r["output_2"]))
    with (ALPACA / "leaderboards" / f"{ANNOTATOR}_leaderboard.csv").open(encoding="utf-8") as handle:
        board = {row[""]: row for row in csv.DictReader(handle)}
    with (ALPACA / "lc_weights" / f"baseline_{BASELINE}.csv").open(encoding="utf-8") as handle:
        weights = {
            row[""]: (
                float(row["np.tanh(std_delta_len)"]),
                float(row["instruction_difficulty"]),
                float(row["not_gamed_baseline.astype(float)"]),
            )
            for row in csv.DictReader(handle)
        }
    return AlpacaData(names, prob, raw, lens, baseline_len, index, board, weights)


@needs_data
def test_win_rate_equals_leaderboard_for_every_model(alpaca: AlpacaData) -> None:
    assert len(alpaca.names) == 20
    for name, prefs in zip(alpaca.names, alpaca.raw, strict=True):
        wr, se = win_rate(alpaca_preference_to_probability(prefs))
        assert wr == pytest.approx(float(alpaca.leaderboard[name]["win_rate"]), abs=0.01), name
        assert se == pytest.approx(float(alpaca.leaderboard[name]["standard_error"]), abs=0.01), name


def _lc_errors(alpaca: AlpacaData, gamed: list[GamedRows] | None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    models = [m for m, name in enumerate(alpaca.names) if name != BASELINE]
    gamma = estimate_instruction_difficulty(alpaca.prob[models], alpaca.lens[models], alpaca.baseline_len)
    names = [alpaca.names[m] for m in models]
    results = [
        length_controlled_win_rate(
            alpaca.prob[m],
            alpaca.lens[m],
            alpaca.baseline_len,
            instruction_difficulty=gamma,
            gamed=gamed or (),
            difficulty_source="estimated",
        )
        for m in models
    ]
    assert all(r.difficulty_source == "estimated" for r in results)
    lc = np.array([r.length_controlled_win_rate for r in results])
    official = np.array([float(alpaca.leaderboard[n]["length_controlled_winrate"]) for n in names])
    return lc, official, names


@needs_data
def test_lc_with_jointly_estimated_difficulty(alpaca: AlpacaData) -> None:
    lc, official, names = _lc_errors(alpaca, gamed=None)
    err = np.abs(lc - official)
    assert err.mean() < 4.6
    assert err.max() < 15.5
    assert spearmanr(lc, official)[0] > 0.95
    near_baseline_length = [
        "FuseChat-Gemma-2-9B-Instruct",
        "FuseChat-Llama-3.1-8B-Instruct",
        "NullModel",
        "FuseChat-Qwen-2.5-7B-Instruct",
        "gemma-2b-it",
        "oasst-sft-pythia-12b",
    ]
    for name in near_baseline_length:
        assert err[names.index(name)] < 1.5, name


@needs_data
def test_lc_with_synthetic_gamed_rows(alpaca: AlpacaData) -> None:
    models = [m for m, name in enumerate(alpaca.names) if name != BASELINE]
    gamma = estimate_instruction_difficulty(alpaca.prob[models], alpaca.lens[models], alpaca.baseline_len)
    gamed = []
    for which in ("verbose", "concise"):
        outputs = _read_json_gz(ALPACA / "gamed_baselines" / f"{BASELINE}_{which}_model_outputs.json.gz")
        glen = np.full(alpaca.baseline_len.size, np.nan)
        for row in outputs:
            glen[alpaca.instruction_index[str(row["instruction"])]] = len(str(row["output"]))
        phi, psi, theta = alpaca.weights[f"{BASELINE}_{which}"]
        std_gap = standardized_length_gap(alpaca.baseline_len, glen)
        pref = expit(phi * np.tanh(std_gap) + psi * gamma + theta)
        gamed.append(gamed_rows(pref, glen, alpaca.baseline_len, np.arange(glen.size)))
    lc, official, _ = _lc_errors(alpaca, gamed)
    err = np.abs(lc - official)
    assert err.mean() < 3.0
    assert err.max() < 7.0
    assert spearmanr(lc, official)[0] > 0.97


@needs_data
def test_multi_model_entry_point_flags_estimated_difficulty(alpaca: AlpacaData) -> None:
    results = length_controlled_win_rates(alpaca.prob, alpaca.lens, alpaca.baseline_len, penalty="none")
    assert all(r.difficulty_source == "estimated" for r in results)
    base = results[alpaca.names.index(BASELINE)]
    assert base.length_controlled_win_rate == pytest.approx(50.0, abs=1e-6)
    assert base.win_rate == pytest.approx(50.0)


def _synthetic(seed: int = 0, n: int = 805) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0.0, 1.0, n)
    base_len = rng.lognormal(7.5, 0.5, n)
    model_len = base_len * rng.lognormal(-0.3, 0.4, n)
    std_gap = standardized_length_gap(base_len, model_len)
    phi, psi, theta = -1.5, 0.8, -0.7
    pref = expit(phi * np.tanh(std_gap) + psi * gamma + theta + rng.normal(0.0, 0.3, n))
    return pref, model_len, base_len, gamma, np.array([phi, psi, theta])


def test_glm_recovers_known_coefficients() -> None:
    pref, model_len, base_len, gamma, truth = _synthetic()
    res = length_controlled_win_rate(pref, model_len, base_len, instruction_difficulty=gamma, penalty="none")
    np.testing.assert_allclose(np.array(res.weights), truth, atol=0.12)
    expected_lc = 100.0 * expit(res.weights.quality + res.weights.difficulty * gamma).mean()
    assert res.length_controlled_win_rate == pytest.approx(expected_lc)
    assert res.difficulty_source == "given" and res.l1_c == np.inf
    # Without the difficulty term the GLM degrades gracefully to the "minimal" form.
    minimal = length_controlled_win_rate(pref, model_len, base_len, penalty="none")
    assert minimal.difficulty_source == "none" and minimal.weights.difficulty == 0.0


def test_gamed_rows_pull_the_length_slope() -> None:
    pref, model_len, base_len, gamma, _ = _synthetic(seed=1)
    # A gamed baseline that is merely longer, with no quality change, and a flat length response.
    gamed_len = base_len * 1.8
    flat = gamed_rows(np.full(base_len.size, 0.5), gamed_len, base_len, np.arange(base_len.size))
    free = length_controlled_win_rate(pref, model_len, base_len, instruction_difficulty=gamma, penalty="none")
    tied = length_controlled_win_rate(
        pref,
        model_len,
        base_len,
        instruction_difficulty=gamma,
        gamed=[flat],
        regularize_lambda=5.0,
        penalty="none",
    )
    assert abs(tied.weights.length) < abs(free.weights.length)


def test_joint_difficulty_estimate_tracks_the_truth() -> None:
    rng = np.random.default_rng(4)
    n_models, n = 15, 300
    gamma = rng.normal(0.0, 1.2, n)
    theta = rng.normal(-1.0, 1.0, n_models)
    base_len = rng.lognormal(7.5, 0.5, n)
    lens = base_len[None, :] * rng.lognormal(0.0, 0.4, (n_models, n))
    prefs = np.empty((n_models, n))
    for m in range(n_models):
        tgap = np.tanh(standardized_length_gap(base_len, lens[m]))
        prefs[m] = expit(-1.2 * tgap + theta[m] + gamma + rng.normal(0.0, 0.2, n))
    prefs[0, :5] = np.nan
    estimate = estimate_instruction_difficulty(prefs, lens, base_len)
    assert np.median(estimate) == pytest.approx(0.0)
    assert np.corrcoef(estimate, gamma)[0, 1] > 0.97


@pytest.mark.filterwarnings(
    "ignore::FutureWarning", "ignore::UserWarning"
)  # sklearn >= 1.8 deprecates penalty=
def test_l1_fit_matches_liblinear() -> None:
    sklearn_lm = pytest.importorskip("sklearn.linear_model")
    pref, model_len, base_len, gamma, _ = _synthetic(seed=2)
    x = np.column_stack([np.tanh(standardized_length_gap(base_len, model_len)), gamma, np.ones_like(gamma)])
    for c in (0.01, 1.0, 100.0):
        ours = fit_soft_logistic(x, pref, np.ones_like(pref), l1_c=c)
        model = sklearn_lm.LogisticRegression(
            C=c, penalty="l1", solver="liblinear", fit_intercept=False, tol=1e-8, max_iter=10_000
        )
        model.fit(
            np.vstack([x, x]),
            np.r_[np.ones_like(pref), np.zeros_like(pref)],
            sample_weight=np.r_[pref, 1 - pref],
        )
        np.testing.assert_allclose(ours, model.coef_[0], atol=2e-3)


def test_folds_match_group_kfold_for_equal_groups() -> None:
    model_selection = pytest.importorskip("sklearn.model_selection")
    n = 803
    groups = np.r_[np.arange(n), np.arange(n)]
    folds = grouped_folds(n, 5)
    for k, (_, test) in enumerate(model_selection.GroupKFold(5).split(np.zeros(2 * n), groups=groups)):
        assert set(np.unique(groups[test])) == set(np.flatnonzero(folds == k))


def test_cv_prefers_weak_penalty_with_plenty_of_data() -> None:
    pref, model_len, base_len, gamma, _ = _synthetic(seed=3)
    x = np.column_stack([np.tanh(standardized_length_gap(base_len, model_len)), gamma, np.ones_like(gamma)])
    assert cv_l1_c(x, pref, np.ones_like(pref)) >= 1.0


def test_win_rate_ignores_missing_and_maps_legacy_ties() -> None:
    prob = alpaca_preference_to_probability([2.0, 1.0, 0.0, 1.5, np.nan])
    assert list(prob[:4]) == [1.0, 0.0, 0.5, 0.5]
    wr, se = win_rate(prob)
    assert wr == pytest.approx(50.0) and se == pytest.approx(100.0 * np.std([1, 0, 0.5, 0.5], ddof=1) / 2.0)
