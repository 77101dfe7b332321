"""Ranking methods other than the simplex model's posterior: the paper's baselines
(`baselines`) and what to label next (`labelling`). Imports the layers below (`data`, `model`,
`inference`)."""
