"""Convergence and coverage on random simulated configurations that no development used (trust on
data we do not have). Prints figures; asserts nothing.

Each seed draws one configuration: a square scale of 2, 3, 5 or 7 levels; 1–6 judges, each
symmetric (accuracy 0.55–0.97, the rest split between the neighbouring levels), harsh (0.5–0.85,
the rest one level down), lenient (the rest one level up), near random (1/M + 0.05 on the diagonal,
the rest spread evenly) or perfect; 3–12 candidates with ordinal prevalences (qualities N(0, 0.6);
30 %: two candidates tied; 20 %: one candidate always at the top level); 40, 100, 200 or 400 items;
0, 10 or 30 % of the scores missing. Every judge's Θ satisfies the weight-propagation prior's
ordering (each row dominates the one above), so the data are inside the model's support; answers
share one true level (shared truth, ω = 0). Each configuration is fitted at the default settings
(4 chains × 1000 + 1000; ``--integrated``: the paper's integrated mode) on Dask
(:mod:`simplex_core.inference.distributed`). Printed per fit: converged (R-hat ≤ 1.01, bulk ESS ≥ 400, no
divergences), how many of the K population expected scores E_k its 95% interval covers, how many
true ranks (of the population E_k) its 95% rank interval covers and the point ranking's Spearman
with them (the ranking is the product's main output), also counted
apart for E_k: those not at an end of the scale, since a candidate always at the top level has E_k on the
scale's end, where a continuous posterior puts no mass and no equal-tailed interval reaches), the fewest
judges scoring a candidate and the sampler; then the totals, split by whether every candidate had
at least three judges (below three the data cannot tell judge error from quality:
:func:`simplex_core.model.data_notes.identification_note`) and by scale.

Usage (repo root, project venv)::

    .venv/bin/python -m bench.unseen_scenarios --seeds 7000-7039
    .venv/bin/python -m bench.unseen_scenarios --seeds 7000-7009 --workers 0   # in this process
    .venv/bin/python -m bench.unseen_scenarios --integrated                    # hyperpriors on ω, β_max
    .venv/bin/python -m bench.unseen_scenarios --settings '{"prior": "diagonal"}'  # any FitSettings fields
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.speed import uptime

def _panel_covered(res, true_rank: np.ndarray) -> int:
    """True ranks covered by the rank intervals of E_k alone (``expected_rank``: no rater deviation)."""
    from simplex_core.model.ranks import rank_interval

    post = res.idata.posterior
    ranks = np.asarray(post["expected_rank" if "expected_rank" in post else "rank"].values)
    lo, hi = rank_interval(ranks.reshape(-1, ranks.shape[-1]))
    return int(((lo <= true_rank) & (true_rank <= hi)).sum())


KINDS = ("symmetric", "lenient", "harsh", "near random", "perfect")
KIND_P = (0.55, 0.15, 0.15, 0.10, 0.05)


def judge_matrix(kind: str, accuracy: float, M: int) -> np.ndarray:
    theta = np.zeros((M, M))
    for t in range(M):
        if kind == "near random":
            theta[t] = (1.0 - accuracy) / (M - 1)
        theta[t, t] = accuracy
        if kind == "lenient" and t < M - 1:
            theta[t, t + 1] += 1.0 - accuracy
        elif kind == "harsh" and t > 0:
            theta[t, t - 1] += 1.0 - accuracy
        elif kind in ("symmetric", "lenient", "harsh"):  # the ends split their rest with the one neighbour
            near = [m for m in (t - 1, t + 1) if 0 <= m < M]
            theta[t, near] += (1.0 - accuracy) / len(near)
    return theta


def configuration(seed: int):
    """``(table frame without true_score, scale, population E_k in the frame's candidate names, text)``."""
    from simplex_core.data.scale import Scale
    from simplex_core.model.simulate import ordinal_prevalences, simulate

    rng = np.random.default_rng([seed, 4242])
    M = int(rng.choice([2, 3, 5, 7]))
    scale = Scale((0.0, 1.0), ("incorrect", "correct")) if M == 2 else Scale(tuple(float(v) for v in range(M)))
    J, K, n = int(rng.integers(1, 7)), int(rng.integers(3, 13)), int(rng.choice([40, 100, 200, 400]))
    quality = rng.normal(0.0, 0.6, K)
    if rng.random() < 0.3:
        quality[1] = quality[0]
    pi = ordinal_prevalences(quality, M)
    if rng.random() < 0.2:
        pi[0] = 0.0
        pi[0, -1] = 1.0
    kinds = [str(k) for k in rng.choice(KINDS, size=J, p=KIND_P)]
    accuracy = {"symmetric": (0.55, 0.97), "lenient": (0.5, 0.85), "harsh": (0.5, 0.85)}
    theta = np.stack([judge_matrix(k, 1.0 if k == "perfect" else 1.0 / M + 0.05 if k == "near random"
                                   else rng.uniform(*accuracy[k]), M) for k in kinds])
    sim = simulate(scale=scale, n_items=n, candidates=K, judges=J, pi=pi, theta=theta, omega=0.0,
                   latent_coupling="shared", rng=rng)
    frame = sim.frame.drop(columns=["true_score"])
    missing = float(rng.choice([0.0, 0.0, 0.1, 0.3]))
    if missing:
        frame = frame[rng.random(len(frame)) >= missing].reset_index(drop=True)
    truth = dict(zip(sim.candidates, sim.expected_scores))
    text = f"M={M} J={J} K={K} n={n} missing={missing:.0%} judges: {', '.join(kinds)}"
    return frame, scale, truth, text


def fit_seed(task: int | tuple) -> dict:
    """Fit one seed's configuration: ``task`` is the seed, ``(seed, integrated)`` or ``(seed, integrated,
    options)`` with ``options`` more FitSettings fields (``--settings``)."""
    from simplex_core.model.ranks import rank_scores
    from simplex_core.data.views import count_tensor
    from simplex_core.data.table import load_table
    from simplex_core.summaries.evaluation import rank_correlation
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.settings import FitSettings
    from simplex_core.summaries.posterior_tables import candidate_summary

    seed, integrated, options = (task, False, {}) if isinstance(task, int) else (tuple(task) + ({},))[:3]
    frame, scale, truth, text = configuration(seed)
    counts = count_tensor(load_table(frame, scale=scale))
    t0 = time.perf_counter()
    res = fit_model(counts, FitSettings(seed=seed, integrated=integrated, **options))
    draws = np.asarray(res.idata.posterior["expected_score"].values).reshape(-1, len(counts.candidates))
    lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
    true = np.array([truth[c] for c in counts.candidates])
    # E_k at an end of the scale (π on one level: a candidate always at the top): a continuous
    # posterior puts no mass there, so no equal-tailed interval covers it, whatever the model
    ends = np.isclose(true, scale.true_values[0]) | np.isclose(true, scale.true_values[-1])
    inside = (lo <= true) & (true <= hi)
    judges = int(((np.asarray(counts.N).sum(axis=2) > 0) & counts.included).sum(axis=0).min())
    # the ranking, the product's main output: population true ranks (ties share the average rank) against
    # the fit's own 95% rank intervals and point ranking, those of result.json and the app
    true_rank = rank_scores(true)
    ranking = candidate_summary(res, sort=False)
    r_lo, r_hi = ranking["rank_lo"].to_numpy(), ranking["rank_hi"].to_numpy()
    d = res.diagnostics
    return {"seed": seed, "text": text, "levels": len(scale.true_values), "converged": bool(d.converged),
            "ranks_covered": int(((r_lo <= true_rank) & (true_rank <= r_hi)).sum()),
            "rank_width": float(np.sum(r_hi - r_lo + 1)),
            "panel_ranks_covered": _panel_covered(res, true_rank),
            "spearman": rank_correlation(ranking["point_rank"].to_numpy(), true_rank),
            "rhat": d.max_rhat, "ess": d.min_ess_bulk, "div": d.divergences, "covered": int(inside.sum()), "K": len(true),
            "at_ends": int(ends.sum()), "covered_inner": int((inside & ~ends).sum()),
            "judges": judges, "seconds": time.perf_counter() - t0,
            "sampler": res.timing.get("sampler", "nuts")}


def _seeds(text: str) -> list[int]:
    """``FIRST-LAST`` (inclusive) or one seed; ValueError for anything else."""
    first, _, last = text.partition("-")
    seeds = list(range(int(first), int(last or first) + 1))
    if not seeds:
        raise ValueError(text)
    return seeds


def main(argv: list[str] | None = None) -> None:
    from simplex_core.inference.distributed import describe, map_tasks, open_client

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="7000-7039", help="FIRST-LAST, inclusive")
    p.add_argument("--scheduler", default=None)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--integrated", action="store_true",
                   help="fit in integrated mode (hyperpriors on ω and β_max) instead of ω = 0, β_max = 5")
    p.add_argument("--settings", default="{}", help="more FitSettings fields as JSON, e.g. '{\"prior\": \"diagonal\"}'")
    args = p.parse_args(argv)
    import json

    options = json.loads(args.settings)
    try:
        seeds = _seeds(args.seeds)
    except ValueError:
        p.error(f"--seeds must be FIRST-LAST with FIRST ≤ LAST, or one seed (e.g. 7000-7039); got {args.seeds!r}.")
    print(f"# bench.unseen_scenarios  {time.strftime('%Y-%m-%d %H:%M:%S')}  seeds {seeds[0]}-{seeds[-1]}  "
          f"{'integrated mode' if args.integrated else 'default settings (ω = 0, β_max = 5)'} {options or ''}")
    print(f"# load before: {uptime()}", flush=True)

    def show(_i: int, r: dict) -> None:
        print(f"# done: seed {r['seed']} ({r['text']}): {'converged' if r['converged'] else 'NOT converged'} "
              f"(R-hat {r['rhat']:.3f}, ESS {r['ess']:.0f}, {r['div']} div), covered {r['covered']}/{r['K']}, "
              f"ranks covered {r['ranks_covered']}/{r['K']}, Spearman {r['spearman']:.2f}, "
              f"{r['seconds']:.0f} s, {r['sampler']}", flush=True)

    labels = [f"seed {s}" for s in seeds]
    tasks = [(s, bool(args.integrated), options) for s in seeds]
    if args.workers == 0:
        rows, where = map_tasks(fit_seed, tasks, labels=labels, on_result=show), "in this process"
    else:
        with open_client(args.scheduler, args.workers) as client:
            where = describe(client)
            rows = map_tasks(fit_seed, tasks, client=client, labels=labels, on_result=show)
    print(f"# fits ran {where}")
    print("| seed | configuration | fewest judges per candidate | converged | max R-hat | min bulk ESS | divergences "
          "| E_k covered | true rank covered | Spearman | seconds | sampler |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['seed']} | {r['text']} | {r['judges']} | {'yes' if r['converged'] else 'NO'} | {r['rhat']:.3f} | "
              f"{r['ess']:.0f} | {r['div']} | {r['covered']}/{r['K']} | {r['ranks_covered']}/{r['K']} | "
              f"{r['spearman']:.2f} | {r['seconds']:.1f} | {r['sampler']} |")
    for name, group in (("every candidate with ≥ 3 judges", [r for r in rows if r["judges"] >= 3]),
                        ("some candidate with < 3 judges", [r for r in rows if r["judges"] < 3])):
        if group:
            covered, total = sum(r["covered"] for r in group), sum(r["K"] for r in group)
            inner, inner_total = sum(r["covered_inner"] for r in group), sum(r["K"] - r["at_ends"] for r in group)
            print(f"{name}: {sum(r['converged'] for r in group)}/{len(group)} fits converged; "
                  f"E_k covered {covered}/{total} = {covered / total:.3f} (nominal 0.95); away from the scale's "
                  f"ends {inner}/{inner_total} = {inner / inner_total:.3f} ({total - inner_total} E_k at an end, "
                  "which no interval of a continuous posterior covers)")
            ranked = sum(r["ranks_covered"] for r in group)
            rho = [r["spearman"] for r in group if np.isfinite(r["spearman"])]
            width = sum(r["rank_width"] for r in group) / total
            panel = sum(r["panel_ranks_covered"] for r in group)
            print(f"  true ranks covered by the 95% rank intervals: {ranked}/{total} = {ranked / total:.3f} (mean width "
                  f"{width:.2f} ranks; by E_k alone, without the rater deviation δ: {panel}/{total} = {panel / total:.3f}); "
                  f"Spearman of the point ranking: median {np.median(rho):.2f}, min {min(rho):.2f}")
            by_levels = []
            for M in sorted({r["levels"] for r in group}):
                part = [r for r in group if r["levels"] == M]
                c, t = sum(r["covered"] for r in part), sum(r["K"] for r in part)
                c_rank = sum(r["ranks_covered"] for r in part)
                by_levels.append(f"{M} levels {c}/{t} = {c / t:.2f} (ranks {c_rank}/{t} = {c_rank / t:.2f})")
            print(f"  by scale: {'; '.join(by_levels)}")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
