"""Fit the default dataset at the default settings and write the result the app shows on opening.

Writes ``assets/precomputed/default_posterior.nc`` (the posterior of ``pi``, ``expected_score``,
``rank``, ``theta`` and ``rho``, thinned to at most ``--keep-draws`` draws so the file stays small)
and ``assets/precomputed/default_fit.json`` (what was fitted: dataset, criterion, data hash and
key, settings; the diagnostics and timing of the fit; the candidate summary of the *full*
posterior, which ``tests/test_app.py`` compares with a fresh fit): a read-only entry of the fit
cache (:func:`simplex_core.inference.fit_cache.write_read_only`), which the app's cache finds by its model
key whatever the app's sampler sizes.

Run from the repository root whenever the default dataset, the model or the default settings change::

    .venv/bin/python scripts/precompute_default.py            # 4 chains x 1000 draws, seed 0
    .venv/bin/python scripts/precompute_default.py --omega 1 --stem omega1   # the reweighting source

The second writes ``omega1_posterior.nc`` / ``omega1_fit.json``: a fit at ω = 1, marked
``reweighting_only``, that the app never shows as a fit but reweights (:mod:`app_support.approximate`) to any ω > 0 at once, since the
default fit at ω = 0 has no random effects and cannot stand in for ω > 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEEP_VARS = ("pi", "expected_score", "rank", "expected_rank", "rater_deviation", "theta", "rho", "Z", "R", "W",
             "boost_log")  # boost_log: for reweighting; rater_deviation: the truth's rank (E + δ)
SOURCE_VARS = ("expected_score", "rater_deviation", "rho", "R", "W", "boost_log")  # all that reweighting reads (simplex_core.inference.reweighting)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep-draws", type=int, default=2000, help="posterior draws kept in the asset (thinned)")
    parser.add_argument("--out", type=Path, default=None, help="folder (default: simplex_core.inference.fit_cache.SHIPPED_DIR)")
    parser.add_argument("--omega", type=float, default=0.0)
    parser.add_argument("--beta-max", type=float, default=5.0)
    parser.add_argument("--stem", default="default", help="file names: <stem>_posterior.nc, <stem>_fit.json")
    parser.add_argument("--rekey", action="store_true",
                        help="only rewrite the keys in the existing <stem>_fit.json (after fit_identity changed), no fit")
    args = parser.parse_args(argv)

    from simplex_core.data import datasets
    from simplex_core.summaries import posterior_tables as summaries
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_cache import READ_ONLY_META, SHIPPED_DIR, write_read_only
    from simplex_core.inference.fitting import fit_model
    from simplex_core.model.definition import FitSettings

    out = args.out or SHIPPED_DIR

    name = datasets.DEFAULT_DATASET
    info = datasets.get_dataset(name)
    table = datasets.load_dataset(name)
    settings = FitSettings(omega=args.omega, beta_max=args.beta_max, chains=args.chains, draws=args.draws, tune=args.tune, seed=args.seed)
    counts = count_tensor(table, self_exclusion=settings.self_exclusion)
    if args.rekey:
        return rekey(out / READ_ONLY_META.format(stem=args.stem))
    print(f"fitting {name} ({info.default_criterion}): {len(table.candidates)} candidates x {len(table.judges)} judges, "
          f"{settings.chains} chains x {settings.draws} draws (+{settings.tune} warm-up)", flush=True)
    started = time.time()
    last = [0.0]

    def progress(message: str, fraction: float) -> None:
        if time.time() - last[0] > 5 or fraction >= 1.0:
            last[0] = time.time()
            print(f"  {100 * fraction:3.0f}% {message}", flush=True)

    result = fit_model(counts, settings, progress_callback=progress)
    print(f"done in {time.time() - started:.0f} s; {result.diagnostics.message}", flush=True)

    default = args.stem == "default"
    about = {
        "what": ("The default dataset fitted at the default settings; the app shows it on opening." if default
                 else f"The default dataset fitted at omega = {args.omega:g}, beta_max = {args.beta_max:g}: a reweighting source."),
        "dataset": name,
        "criterion": info.default_criterion,
        # the candidate summary of the *full* posterior, which tests/test_app.py compares with a fresh fit
        "candidates": json.loads(summaries.candidate_summary(result.idata).to_json(orient="records")),
        "command": "python scripts/precompute_default.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    meta_path = write_read_only(result, out, args.stem, keep_draws=args.keep_draws,
                                variables=KEEP_VARS if default else SOURCE_VARS, reweighting_only=not default, about=about)
    print(f"wrote {meta_path} and its posterior ({json.loads(meta_path.read_text())['thinning']})")
    return 0


def rekey(meta_path: Path) -> int:
    """Rewrite ``data_key`` and ``model_key`` of a shipped fit for its own dataset and settings."""
    from simplex_core.data import datasets
    from simplex_core.data.views import count_tensor
    from simplex_core.inference.fit_identity import data_key, model_key
    from simplex_core.model.definition import FitSettings

    meta = json.loads(meta_path.read_text())
    table = datasets.load_dataset(meta["dataset"])
    if table.data_hash() != meta["data_hash"]:
        print(f"{meta_path}: the dataset {meta['dataset']} changed since this fit was made; fit again", file=sys.stderr)
        return 2
    settings = FitSettings.from_dict(meta["settings"])
    counts = count_tensor(table, self_exclusion=settings.self_exclusion)
    keys = {"data_key": data_key(counts), "model_key": model_key(counts, settings)}
    out = {}
    for k, v in meta.items():  # keep the order of the fields
        out[k] = v
        if k == "data_hash":
            out.update(keys)
    out.update(keys)
    meta_path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"rewrote the keys of {meta_path}: {keys}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
