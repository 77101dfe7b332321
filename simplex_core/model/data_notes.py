"""What the data cannot settle, said before a fit is read: :func:`identification_note` (fewer than
three judges on a candidate's answers, none learnt on another candidate), :func:`scale_end_note` (a
candidate scored only at an end of a square scale), :func:`judge_prior_note` (the weight-propagation
prior's lean on a square scale with no labelled answer) and :func:`crowded_scale_note` (judgments
crowded into two end levels of a long scale); :func:`data_notes` collects them for result.json, ``fit``
and the app's banner."""

from __future__ import annotations

import numpy as np

from simplex_core.model.settings import BETA_MAX_UPPER, CountsLike, FitSettings, ModelSettings


#: Judges who must score a candidate's answers before the data can tell their errors from its quality:
#: three conditionally independent views identify a latent-class model (Kruskal 1977; Dawid & Skene
#: 1979), one or two do not (the paper's theorem 2 for the per-judge marginals).
IDENTIFYING_JUDGES = 3


def included_counts(counts: CountsLike) -> np.ndarray:
    """``N`` ``[J, K, M]`` with the pairs the fit leaves out (self-family dropped) zeroed."""
    return np.asarray(counts.N, dtype=float) * np.asarray(counts.included, dtype=bool)[:, :, None]


def has_labels(counts: CountsLike) -> bool:
    """Whether some answer of the counts is labelled (gold)."""
    patterns = getattr(counts, "patterns", None)
    return patterns is not None and bool((np.asarray(patterns.truth) >= 0).any())


def identification_note(counts: CountsLike) -> str | None:
    """One sentence when some candidate has fewer than :data:`IDENTIFYING_JUDGES` judges scoring its
    answers (pairs left out as self-family do not count), none of its answers labelled (gold), and no
    judge of its own that scores another candidate together with two more judges (such a judge's
    matrix is learnt there and reads this candidate too): its expected score then rests on the judge
    prior (β_max) rather than on the data. None otherwise.

    Why: on simulated data with one or two judges, fits that converged put E_k far from the truth
    (7 levels, a near-random and a fair judge: E 1.4 for a true 4.3) because the weight-propagation
    prior, not the data, chose how lenient the judges are."""
    scored = (np.asarray(counts.N).sum(axis=2) > 0) & np.asarray(counts.included, dtype=bool)  # [J, K]
    per_candidate = scored.sum(axis=0)
    # A judge's confusion matrix is one for every candidate: a judge that scores some candidate
    # together with two others is pinned there, and then reads any candidate it scores.
    anchored = scored[:, per_candidate >= IDENTIFYING_JUDGES].any(axis=1)  # [J]
    patterns = getattr(counts, "patterns", None)
    gold = set() if patterns is None else set(np.asarray(patterns.candidate)[np.asarray(patterns.truth) >= 0].tolist())
    weak = [k for k in range(len(counts.candidates))
            if per_candidate[k] < IDENTIFYING_JUDGES and k not in gold and not (scored[:, k] & anchored).any()]
    if not weak:
        return None
    if len(weak) == len(counts.candidates):
        who = "any candidate" if len(counts.candidates) > 1 else "the candidate"
    else:
        names = [str(counts.candidates[k]) for k in weak]
        who = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    # "every candidate" read as "some candidate has fewer than three" (the browser probe): say "any".
    return (f"Fewer than {IDENTIFYING_JUDGES} judges scored the answers of {who}, with no answer labelled: the "
            "data cannot tell a judge's errors from a candidate's quality, so these scores and intervals rest "
            "on the judge prior (β_max) as much as on the data. Three or more judges per candidate, or a few "
            "labelled answers, settle them.")


def scale_end_note(counts: CountsLike) -> str | None:
    """One sentence when every score that some candidate's answers received (from the judges whose
    pairs enter the fit) is the scale's top level, or every one its bottom level; square scales only
    (observed levels = true levels). None otherwise.

    Why: such a candidate's expected score is estimated short of that end, and its interval never
    reaches it. A continuous posterior puts no mass on the end itself, and the prior on the candidate's
    score distribution, Dirichlet(1), counts one pseudo-answer at each true level: with n answers and
    perfect judges E_k sits M/(n + M) of the way from the end towards the middle of the scale (the
    conjugate posterior mean), further when the judges may err. Measured on simulated data
    (``bench.unseen_scenarios``, seed 8103: 7 levels, about 28 answers): E 6.00 estimated 5.54."""
    scale = counts.scale
    if scale.n_levels != scale.n_true:
        return None
    N = included_counts(counts)
    totals = N.sum(axis=0)  # [K, M]
    answers = N.sum(axis=2).max(axis=0)  # per candidate: the most answers one judge scored
    M = scale.n_levels
    ends = []
    for end, index in (("top", M - 1), ("bottom", 0)):
        at_end = [k for k in range(len(counts.candidates)) if totals[k].sum() > 0 and totals[k, index] == totals[k].sum()]
        if at_end:
            names = [str(counts.candidates[k]) for k in at_end]
            who = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            n = int(answers[at_end[0]])
            ends.append(f"every score that the answers of {who} received is the {end} level (for {names[0]}, "
                        f"{n} answers on {M} levels: at least {M / (n + M):.1%} of the way to the middle)")
    if not ends:
        return None
    text = "; ".join(ends)
    return (text[0].upper() + text[1:] + ". Such expected scores are estimated short of that end of the scale and "
            "their intervals do not reach it: the prior on a candidate's score distribution counts one pseudo-answer "
            "at each level (the share above holds for perfect judges; judges who may err pull further). More answers "
            "shrink the pull.")


#: Square scales from this many true levels on get :func:`judge_prior_note`: the weight-propagation
#: prior's mean judge scores +0.88 levels high at 5 levels (+0.22 at 3; ``bench.judge_prior_bias``).
LEANING_PRIOR_LEVELS = 5


def judge_prior_note(counts: CountsLike, settings: "ModelSettings | None" = None) -> str | None:
    """One sentence when the scale is square with at least :data:`LEANING_PRIOR_LEVELS` true levels, no
    answer is labelled (gold) and the judge prior is weight propagation (``settings``; None = the
    default): how far above the truth its mean judge scores before any data, at the fit's β_max or,
    integrated, over β_max's range (:func:`simplex_core.model.priors.mean_judge_offset`). None otherwise.

    Why: from row to row of Θ the weight-propagation prior moves mass only to higher observed levels,
    and a node has more edges above the correct cell than below it, so on M levels its judges lean
    lenient (+0.88 at 5 levels, +1.80 at 7, +3.33 at 10, β_max = 5). Where the data leave the judges'
    leniency open it moves E_k down: on simulated 7-level data with three symmetric judges
    (``bench.unseen_scenarios`` seed 7003) all 8 estimates sat below the raw mean score and 2 of 8
    intervals missed above; under the centred diagonal prior 8 of 8 covered. Seed 7035 (a symmetric, a
    harsh and a near-random judge, 100 items; converged since tempering towards a reference): every E_k
    at about half its true value (6.00 → 3.2, 1.22 → 0.47), the order of all 7 exact."""
    from simplex_core.model.priors import mean_judge_offset

    settings = settings if settings is not None else FitSettings()
    scale = counts.scale
    if scale.n_levels != scale.n_true or scale.n_true < LEANING_PRIOR_LEVELS or settings.prior != "weight-propagation":
        return None
    if has_labels(counts):
        return None  # labelled answers pin the judges' leniency
    if settings.integrated:
        low, high = mean_judge_offset(scale, BETA_MAX_UPPER), mean_judge_offset(scale, 0.0)
        expects = (f"the judge prior (weight-propagation, β_max integrated over 0–{BETA_MAX_UPPER:g}) expects, "
                   f"before any data, that a judge scores answers {low:.2f} to {high:.2f} above their true score on "
                   "average")
        remedies = "A few labelled answers or fewer levels lean less."
    else:
        expects = (f"the judge prior (weight-propagation, β_max = {settings.beta_max:g}) expects, before any data, "
                   f"that a judge scores answers {mean_judge_offset(scale, float(settings.beta_max)):.2f} above "
                   "their true score on average")
        larger = " a larger β_max," if float(settings.beta_max) < BETA_MAX_UPPER else ""  # none above the top
        remedies = f"A few labelled answers, integrated mode (which learns β_max),{larger} or fewer levels lean less."
    return (f"On this {scale.n_true}-level scale {expects}: where the data do not settle how lenient the judges are "
            f"(few answers, judges who err alike), expected scores lean low, their order much less. {remedies}")


#: Levels a scale needs before :func:`crowded_scale_note` speaks, and the share of the judgments in its
#: two end levels that makes it speak (the skewed simulation of ``bench/latent_quality_robustness.py``
#: put 86% in the top two levels; its unskewed scenarios 35–49%).
CROWDED_SCALE_LEVELS = 5
CROWDED_SHARE = 0.8


def crowded_scale_note(counts: CountsLike, settings: "ModelSettings | None" = None) -> str | None:
    """One sentence when the scale has at least :data:`CROWDED_SCALE_LEVELS` levels, no answer is labelled
    (gold), the judge prior is the ordered or the weight-propagation one (``settings``; None = the default),
    and at least :data:`CROWDED_SHARE` of the judgments that enter the fit lie in its two top (or two
    bottom) levels. None otherwise.

    Why: on simulations of judges who see a continuous quality with scores crowded at one end, the
    ranking fell behind the judges' plain mean (Spearman 0.878 under the ordered prior, 0.874 under weight
    propagation, against 0.905 over four replicates), while it led the plain mean where the scores spread.
    The paper's per-judge likelihood did worse (0.853), an answer-level effect did not help, and the
    diagonal prior ranked ahead of the plain mean (0.916) at the price of multimodal fits of minutes
    (docs/DIAGNOSIS-real-data.md, parts 4–8). The PPC does not see it (the judges' means per candidate fit well)."""
    settings = settings if settings is not None else FitSettings()
    scale = counts.scale
    if scale.n_levels < CROWDED_SCALE_LEVELS or settings.prior not in ("ordered", "weight-propagation"):
        return None
    if has_labels(counts):
        return None  # labelled answers pin the true levels
    N = included_counts(counts)
    per_level = N.sum(axis=(0, 1))
    total = per_level.sum()
    if total <= 0:
        return None
    top, bottom = per_level[-2:].sum() / total, per_level[:2].sum() / total
    share, end = (top, "top") if top >= bottom else (bottom, "bottom")
    if share < CROWDED_SHARE:
        return None
    return (f"{share:.0%} of the judgments are in the {end} two levels of this {scale.n_levels}-level scale: where "
            "scores crowd at one end, on simulations like this the ranking fell behind the judges' plain mean, while "
            "the diagonal judge prior ranked ahead of it (its fits can take minutes). Read the simple average and "
            "ordinal rows beside it, try the diagonal prior "
            "(“Judge prior” under Advanced model settings; --prior diagonal), or label a few answers.")


def data_notes(counts: CountsLike, settings: "ModelSettings | None" = None) -> list[str]:
    """What a reader of the results must know about these data's power: :func:`identification_note`,
    :func:`scale_end_note`, :func:`judge_prior_note` (for the model ``settings``; None = the default) and
    :func:`crowded_scale_note`, those that have something to say."""
    return [note for note in (identification_note(counts), scale_end_note(counts), judge_prior_note(counts, settings),
                              crowded_scale_note(counts, settings))
            if note]

