"""Fitting: `fitting.fit_model` and its engines (`fast_engine`, `mode_mass`, `tempering`), moving a
posterior to other priors (`reweighting`), a fit's identity and its on-disk cache (`fit_identity`,
`fit_cache`), and where a study's independent fits run (`distributed`). Imports `data` and `model`."""
