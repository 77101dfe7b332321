"""Studies of many fits: the paper's comparison and stress experiments (`experiments`), the
sensitivity protocol (`sensitivity`), simulation-based calibration (`calibration`). The top of the
core: only the front ends (`cli`, the app) and `jobs` sit above."""
