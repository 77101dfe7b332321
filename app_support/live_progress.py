"""A fit's progress bar that moves on its own: the browser reads the fit's status, not the page.

A page waiting for a fit used to rerun its status fragment every 2 s to move the bar. Each rerun
costs the tab about 0.1 s of main-thread work (Streamlit's frontend re-rendering; measured with
Chromium's tracer: 72 ms per s on a waiting Rankings page) and the server a script run, and eight
waiting tabs on one machine fill a core with it. Here the bar is a small Streamlit component
(``st.components.v2``, in the page, no iframe) whose script fetches ``/_simplex/progress/<job id>``
every second and redraws only itself; the server answers from the fit manager's book
(:func:`progress_route`, mounted by ``serve.py``). The landed fit still reaches the page at once
(:mod:`.fit_push`); the component also asks its fragment to rerun when it sees the fit ended and no
rerun came within a few seconds, and the fragment's own poll remains the last fallback.

Served by ``streamlit run app.py`` (no launcher, so no route): :func:`feed_served` is false and the
fragment polls at its old pace.
"""

from __future__ import annotations

import re
from typing import Any

FEED_PATH = "/_simplex/progress"
_JOB_ID = re.compile(r"[0-9a-f]{6,32}")
_MANAGER: list[Any] = []  # the server's FitManager, once the app has made it (fits.fit_manager)
_SERVED = [False]


def register_manager(manager: Any) -> None:
    """Called by :func:`app_support.fits.fit_manager`: the feed answers from this manager (it never
    starts one itself: a request must not start a cluster)."""
    _MANAGER[:] = [manager]


def feed_served() -> bool:
    """Whether this server mounts the feed (``serve.py`` does, ``streamlit run app.py`` does not)."""
    return _SERVED[0]


def progress_route() -> Any:
    """The Starlette route of the feed: ``GET /_simplex/progress/<job id>`` → ``{"state", "fraction",
    "text"}`` (404 for an id this server does not know). The id is the job's random id, which only
    the page that waits for it has; the answer is what that page's bar shows."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def progress(request: Any) -> Any:
        job_id = request.path_params.get("job_id", "")
        try:
            if not _JOB_ID.fullmatch(job_id) or not _MANAGER:
                raise KeyError(job_id)
            body, code = _payload(_MANAGER[0].status(job_id)), 200
        except KeyError:
            body, code = {"error": "unknown fit"}, 404
        return JSONResponse(body, status_code=code, headers={"Cache-Control": "no-store"})

    _SERVED[0] = True
    return Route(FEED_PATH + "/{job_id}", progress, methods=["GET"])


def _payload(status: Any) -> dict:
    running = status.state == "running"
    return {"state": status.state, "final": bool(status.is_final),
            "fraction": float(status.fraction) if running else 0.0, "text": status.describe()}


_HTML = '<div class="sj-progress"><div class="sj-bar"><div class="sj-fill"></div></div><p class="sj-text"></p></div>'
_CSS = """
.sj-bar { height: 0.5rem; border-radius: 0.25rem; background: var(--st-secondary-background-color, #f0f2f6); overflow: hidden; }
.sj-fill { height: 100%; width: 0; background: var(--st-primary-color, #ff4b4b); }
.sj-text { margin: 0.35rem 0 0 0; font-size: 0.875rem; color: var(--st-text-color, inherit); opacity: 0.8; }
"""
# Text goes in with textContent (a fit's label holds user names): never as markup.
_JS = """
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector('.sj-progress');
  const fill = root.querySelector('.sj-fill'), text = root.querySelector('.sj-text');
  const show = (s) => {
    fill.style.width = Math.round(100 * Math.max(0, Math.min(1, s.fraction || 0))) + '%';
    text.textContent = s.text || '';
  };
  show(data);
  if (root.__sjTimer) clearInterval(root.__sjTimer);
  let endedSince = null, asked = false, busy = false;
  root.__sjTimer = setInterval(async () => {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const r = await fetch(data.url, { cache: 'no-store', credentials: 'same-origin' });
      if (r.ok) {
        const s = await r.json();
        show(s);
        if (s.final) {
          endedSince = endedSince ?? Date.now();
          // the server reruns the page when a fit ends; ask for it only if that has not come
          if (!asked && Date.now() - endedSince > data.grace_ms) { asked = true; setTriggerValue('ended', data.job); }
        }
      }
    } catch (e) { /* the next tick tries again; the fragment's poll is the fallback */ }
    busy = false;
  }, data.every_ms);
  return () => clearInterval(root.__sjTimer);
}
"""

_component: list[Any] = []


def show_progress(status: Any, *, every_seconds: float = 1.0, grace_seconds: float = 4.0) -> None:
    """Draw the live bar of the job ``status`` (call inside the fit's status fragment)."""
    import streamlit as st

    if not _component:
        _component.append(st.components.v2.component("simplex_judge.fit_progress", html=_HTML, css=_CSS, js=_JS))
    data = _payload(status) | {"url": f"{FEED_PATH}/{status.job_id}", "job": status.job_id,
                               "every_ms": int(1000 * every_seconds), "grace_ms": int(1000 * grace_seconds)}
    _component[0](data=data, key=f"live-progress-{status.job_id}", on_ended_change=lambda: None)
