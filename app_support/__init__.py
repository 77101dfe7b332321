"""The thin app layer between the Streamlit pages and :mod:`simplex_core`.

- :mod:`app_support.state`: session-state keys and defaults (one place) and the URL sync;
- :mod:`app_support.frame`: the frame every page runs in (page config, session set-up, sidebar);
- :mod:`app_support.sidebar`: the shared controls and the analysis context pages read;
- :mod:`app_support.data_access`: cached wrappers around the catalogue, loading, collapsing,
  distributions and baselines;
- :mod:`app_support.fits`: the process-wide fit manager, cached fit results (the fits shipped in
  ``assets/precomputed/`` are the fit cache's read-only layer), progress panels and the background grid;
- :mod:`app_support.results`: cached posterior tables (through :mod:`simplex_core.summaries.posterior_tables`);
- :mod:`app_support.page_parts`: headers and "nothing yet" states several pages share;
- :mod:`app_support.downloads`: download buttons (CSV, HTML, PNG/SVG, NetCDF, JSON);
- :mod:`app_support.errors`: exceptions turned into plain messages (never a traceback);
- :mod:`app_support.guide_links`: links from every page to the Guide.
- :mod:`app_support.fit_push` and :mod:`app_support.live_progress`: a landed fit reaches its waiting page at
  once, and a fit's progress bar moves without rerunning the page.

Pages collect inputs, call these, and render. Nothing here fits or samples in the server process:
fits run in the fit manager's worker process.
"""
