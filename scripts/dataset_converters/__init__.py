"""Converters of the raw benchmark files into the built-in datasets, one module per dataset (see ../convert_datasets.py)."""
