"""Labels that pay: the model-as-predictor PPI ranking against PPI, the Bayesian gold fit and the
label-free default, on every built-in dataset-criterion with truth, with 5% and 10% labelled items.

The pairs are the 15 of :data:`bench.diagnose_real.PAIRS`. Self-family exclusion is on, except where
every judge of some candidate shares its family (FaithBench ``consistency``): there it is off and the
row says so, as in ``bench/real_data_table.py``.

Per pair and labelled share F, ``--draws R`` label draws; in draw r every labelled method gets the
generator ``method_generator(seed, "ppi_<pct>", r)``, so all label the same items (the evaluate
machinery's rule). Methods:

- ``ppi_<pct>``: PPI with the judges' mean as predictor (λ = 1, the baseline);
- ``ppi_<pct> expanded``: the same with the expanded-percentile intervals, to show what the expansion
  alone buys;
- ``bayesian_ppi_<pct>`` (the product's): the label-free shared-truth fit's posterior mean true score
  as predictor, the candidates' rectifiers pooled (hierarchical normal posterior with the fit's own
  sd of E_k + δ_k as each one's prior spread, :func:`simplex_core.methods.ppi.pooled_rectifier_draws`,
  λ = 1; :mod:`simplex_core.studies.model_ppi`);
- ``bayesian_ppi_<pct> unpooled``: each candidate's own rectifier, PPI++ (power-tuned λ), moderated
  variance and expanded-percentile intervals (the product's before pooling);
- ``bayesian_ppi_<pct> unmoderated``: unpooled without the moderated rectifier variance (what a
  candidate with a few labels, all alike, got before: a point for its bootstrap);
- ``bayesian_ppi_<pct> plain``: unpooled without the expansion (moderated);
- ``bayesian_ppi_<pct> λ=1``: unpooled with λ = 1 (plain PPI), expanded;
- ``bayesian_ppi_<pct> blend``: unpooled, predictor = half the model's, half the judges' mean;
- ``bayesian_gold_<pct>``: the shared-truth fit with the labelled answers' true levels observed;
- ``bayesian``: the label-free default (ω = 0, β_max = 5, shared-truth; no labels, one fit, no draws).

Every fit: 4 chains × 500 + 500. The label-free fit is one per pair (cached in a temporary fit cache,
shared by the predictor and the default). No item resamples of the evaluation: each figure is the
point figure of one run, averaged over the R label draws. Coverage = share of candidates whose true
rank (mean ``true_score`` over all items) lies in the 95% rank interval; width = mean number of ranks
inside the interval. Prints the table and, per share, how often ``bayesian_ppi`` meets the issue's
targets (coverage ≥ 0.90, coverage ≥ PPI's, Spearman ≥ PPI's − 0.02). Asserts nothing.

Usage (repo root, project venv)::

    nice -n 10 .venv/bin/python -m bench.labels_vs_ppi [--draws 5] [--pairs hanna:coherence,...] [--no-gold]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from bench.diagnose_real import PAIRS
from bench.speed import uptime

FIT = dict(chains=4, draws=500, tune=500)


def _figures(res, truth) -> tuple[float, float, float, float]:
    from simplex_core.summaries.evaluation import evaluate_results

    ev = evaluate_results({"m": res}, truth).iloc[0]
    width = float(np.mean(np.asarray(res.rank_hi) - np.asarray(res.rank_lo) + 1))
    return float(ev["coverage"]), float(ev["spearman"]), width, float(res.details.get("converged", -1.0))


def _exclusion_possible(table) -> bool:
    """Whether self-family exclusion leaves every candidate a judge (else the fit refuses the data)."""
    from simplex_core.data.problems import ValidationError
    from simplex_core.data.views import count_tensor

    try:
        count_tensor(table, self_exclusion=True)
    except ValidationError:
        return False
    return True


def main(argv: list[str] | None = None) -> None:
    from simplex_core.methods.baselines import baseline_methods, method_generator
    from simplex_core.methods.ppi import ppi_mean_ranks
    from simplex_core.data.views import item_view
    from simplex_core.data.datasets import load_dataset
    from simplex_core.summaries.evaluation import true_ranks
    from simplex_core.studies.experiments import bayesian_methods, gold_method_name
    from simplex_core.inference.fit_cache import FitCache
    from simplex_core.studies.model_ppi import model_ppi_methods, model_ppi_name

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", default=",".join(PAIRS))
    p.add_argument("--fractions", default="0.05,0.10")
    p.add_argument("--draws", type=int, default=5, help="label draws per pair and share (default 5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-gold", action="store_true", help="leave out bayesian_gold_<pct> (one fit per draw)")
    p.add_argument("--no-self-exclusion", action="store_true",
                   help="keep self-family judgments everywhere (by default only where every judge of some "
                        "candidate shares its family)")
    args = p.parse_args(argv)
    fractions = [float(f) for f in args.fractions.split(",")]
    print(f"# bench.labels_vs_ppi  {time.strftime('%Y-%m-%d %H:%M:%S')}  draws={args.draws}  fits={FIT}")
    print(f"# load before: {uptime()}")
    print("| data | share | method | coverage | Spearman | mean width | converged |")
    print("|---|---|---|---|---|---|---|")
    tally = {f: {"n": 0, "cov90": 0, "cov_ge_ppi": 0, "rho_ok": 0, "narrower": 0, "rows": []} for f in fractions}
    with tempfile.TemporaryDirectory() as tmp:
        cache = FitCache(tmp)
        for pair in args.pairs.split(","):
            name, criterion = pair.split(":")
            table = load_dataset(name, criterion=criterion)
            excl = not args.no_self_exclusion and _exclusion_possible(table)
            excluded = frozenset(table.self_family_pairs) if excl else frozenset()
            view = item_view(table)
            truth = true_ranks(view)
            default = bayesian_methods(table, ["bayesian"], cache=cache, self_exclusion=excl, **FIT)["bayesian"](view)
            d_cov, d_rho, d_w, d_conv = _figures(default, truth)
            names = [model_ppi_name(f) for f in fractions]
            opts = dict(cache=cache, self_exclusion=excl, **FIT)
            tuned = model_ppi_methods(table, names, **opts)
            lam1 = model_ppi_methods(table, names, power_tuning=False, pooled=False, **opts)
            plain = model_ppi_methods(table, names, expanded=False, pooled=False, **opts)
            unmoderated = model_ppi_methods(table, names, moderated=False, pooled=False, **opts)
            blend = model_ppi_methods(table, names, blend=True, pooled=False, **opts)
            unpooled = model_ppi_methods(table, names, pooled=False, **opts)
            row_name = pair if excl or args.no_self_exclusion else f"{pair} (exclusion off)"
            for f in fractions:
                pct = int(round(f * 100))
                ppi_name, gold_name, mppi_name = f"ppi_{pct}", gold_method_name(f), model_ppi_name(f)
                methods = {
                    ppi_name: baseline_methods(view, table.scale, excluded=excluded, single_judges=False,
                                               ppi_fractions=(f,))[ppi_name],
                    f"{ppi_name} expanded": lambda v, rng, _f=f: ppi_mean_ranks(v, table.scale, _f, 300, rng,
                                                                                excluded=excluded, expanded=True),
                    mppi_name: tuned[mppi_name],
                    f"{mppi_name} unmoderated": unmoderated[mppi_name],
                    f"{mppi_name} plain": plain[mppi_name],
                    f"{mppi_name} λ=1": lam1[mppi_name],
                    f"{mppi_name} blend": blend[mppi_name],
                    f"{mppi_name} unpooled": unpooled[mppi_name],
                }
                if not args.no_gold:
                    methods[gold_name] = bayesian_methods(table, [gold_name], **opts)[gold_name]
                figs: dict[str, list] = {m: [] for m in methods}
                for r in range(args.draws):
                    for m_name, method in methods.items():
                        figs[m_name].append(_figures(method(view, method_generator(args.seed, ppi_name, r)), truth))
                means = {m: np.nanmean(np.array(v), axis=0) for m, v in figs.items()}
                for m, (cov, rho, width, conv) in means.items():
                    c = "" if conv < 0 else f"{conv:.2f}"
                    print(f"| {row_name} | {f:g} | {m} | {cov:.2f} | {rho:.3f} | {width:.2f} | {c} |", flush=True)
                print(f"| {row_name} | {f:g} | bayesian (no labels) | {d_cov:.2f} | {d_rho:.3f} | {d_w:.2f} | {d_conv:.2f} |",
                      flush=True)
                t = tally[f]
                mc, mr, mw = means[mppi_name][:3]
                pc, pr, pw = means[ppi_name][:3]
                t["n"] += 1
                t["cov90"] += int(mc >= 0.90 - 1e-9)
                t["cov_ge_ppi"] += int(mc >= pc - 1e-9)
                t["rho_ok"] += int(mr >= pr - 0.02)
                t["narrower"] += int(mw < pw)
                t["rows"].append((mc, pc, mr, pr))
    print()
    for f, t in tally.items():
        rows = np.array(t["rows"])
        print(f"share {f:g}: bayesian_ppi coverage ≥ 0.90 on {t['cov90']}/{t['n']}, ≥ PPI's on {t['cov_ge_ppi']}/{t['n']}; "
              f"Spearman ≥ PPI's − 0.02 on {t['rho_ok']}/{t['n']}; narrower than PPI's on {t['narrower']}/{t['n']}; "
              f"mean coverage {rows[:, 0].mean():.3f} (PPI {rows[:, 1].mean():.3f}), "
              f"mean Spearman {rows[:, 2].mean():.3f} (PPI {rows[:, 3].mean():.3f})")
    print(f"# load after: {uptime()}")


if __name__ == "__main__":
    main()
