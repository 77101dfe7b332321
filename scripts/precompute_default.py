"""Fit the default dataset at the default settings and write the result the app shows on opening.

Writes ``assets/precomputed/default_posterior.nc`` (the posterior of ``pi``, ``expected_score``,
``rank``, ``theta`` and ``rho``, thinned to at most ``--keep-draws`` draws so the file stays small)
and ``assets/precomputed/default_fit.json`` (what was fitted: dataset, criterion, data hash and
key, settings; the diagnostics and timing of the fit; the candidate summary of the *full*
posterior, which ``tests/test_app.py`` compares with a fresh fit).

Run from the repository root whenever the default dataset, the model or the default settings change::

    .venv/bin/python scripts/precompute_default.py            # 4 chains x 1000 draws, seed 0
    .venv/bin/python scripts/precompute_default.py --omega 1 --stem omega1   # the reweighting source

The second writes ``omega1_posterior.nc`` / ``omega1_fit.json``: a fit at ω = 1 that the app never
shows as a fit but reweights (:mod:`app_support.approximate`) to any ω > 0 at once, since the
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

OUT = ROOT / "assets" / "precomputed"
KEEP_VARS = ("pi", "expected_score", "rank", "theta", "rho", "Z", "R", "W", "boost_log")  # boost_log: for reweighting
SOURCE_VARS = ("expected_score", "rho", "R", "W", "boost_log")  # all that reweighting reads (simplex_core.reweighting)


def thin_posterior(idata, keep_draws: int, keep_vars: tuple[str, ...] = KEEP_VARS):
    """Only the variables the app draws, every k-th draw so that chains × draws ≤ keep_draws."""
    import arviz as az

    post = idata.posterior[[v for v in keep_vars if v in idata.posterior]]
    total = post.sizes["chain"] * post.sizes["draw"]
    step = max(1, -(-total // keep_draws))
    post = post.isel(draw=slice(None, None, step))
    return az.InferenceData(posterior=post), step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep-draws", type=int, default=2000, help="posterior draws kept in the asset (thinned)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--omega", type=float, default=0.0)
    parser.add_argument("--beta-max", type=float, default=5.0)
    parser.add_argument("--stem", default="default", help="file names: <stem>_posterior.nc, <stem>_fit.json")
    parser.add_argument("--rekey", action="store_true",
                        help="only rewrite the keys in the existing <stem>_fit.json (after fit_identity changed), no fit")
    args = parser.parse_args(argv)

    from simplex_core import datasets, summaries
    from simplex_core.data import count_tensor
    from simplex_core.fit_identity import data_key, model_key
    from simplex_core.inference import fit_model
    from simplex_core.model import FitSettings

    name = datasets.DEFAULT_DATASET
    info = datasets.get_dataset(name)
    table = datasets.load_dataset(name)
    settings = FitSettings(omega=args.omega, beta_max=args.beta_max, chains=args.chains, draws=args.draws, tune=args.tune, seed=args.seed)
    counts = count_tensor(table, self_exclusion=settings.self_exclusion)
    if args.rekey:
        return rekey(args.out / f"{args.stem}_fit.json")
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

    summary = summaries.candidate_summary(result.idata)
    thinned, step = thin_posterior(result.idata, args.keep_draws, KEEP_VARS if args.stem == "default" else SOURCE_VARS)
    args.out.mkdir(parents=True, exist_ok=True)
    nc = args.out / f"{args.stem}_posterior.nc"
    thinned.to_netcdf(str(nc))
    meta = {
        "what": ("The default dataset fitted at the default settings; the app shows it on opening." if args.stem == "default"
                 else f"The default dataset fitted at omega = {args.omega:g}, beta_max = {args.beta_max:g}: a reweighting source."),
        "dataset": name,
        "criterion": info.default_criterion,
        "data_hash": counts.data_hash,
        "data_key": data_key(counts),
        "model_key": model_key(counts, settings),  # how the app finds this fit (simplex_core.fit_identity)
        "settings": settings.to_dict(),
        "diagnostics": result.diagnostics.to_dict() if hasattr(result.diagnostics, "to_dict") else dict(result.diagnostics),
        "timing": {k: (v if isinstance(v, str) else float(v)) for k, v in dict(getattr(result, "timing", {}) or {}).items()},
        "thinning": {"every": step, "kept_draws": int(thinned.posterior.sizes["chain"] * thinned.posterior.sizes["draw"])},
        "candidates": json.loads(summary.to_json(orient="records")),
        "command": "python scripts/precompute_default.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    (args.out / f"{args.stem}_fit.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {nc} ({nc.stat().st_size / 1e6:.2f} MB) and {args.out / f'{args.stem}_fit.json'}")
    return 0


def rekey(meta_path: Path) -> int:
    """Rewrite ``data_key`` and ``model_key`` of a shipped fit for its own dataset and settings."""
    from simplex_core import datasets
    from simplex_core.data import count_tensor
    from simplex_core.fit_identity import data_key, model_key
    from simplex_core.model import FitSettings

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
