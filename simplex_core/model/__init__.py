"""The model: a fit's settings and the PyMC graph (`definition`), judge priors (`priors`), the
log density and gradient in numba (`fast_density`), data simulated from the model (`simulate`), the
simplex's geometry (`geometry`) and the one rule that turns scores into ranks (`ranks`). Imports only
`simplex_core.data`."""
