"""Guide: how to read each view, with the numbers that matter."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app_support.frame import page_frame
from app_support.state import OMEGA_GRID

page_frame()

st.title("Guide")
st.caption("How to read each page in a few sentences. The model is the one of “LLMs Judging LLMs: A Simplex Perspective” "
           "(section 5 and appendix B).")

st.header("The idea in one paragraph")
st.markdown(
    "A judge that scores answers on *M* levels is a set of *M* points on the probability simplex: point *m* is the "
    "distribution of scores it gives when the true score is *m*. A candidate, seen through that judge, is a point "
    "inside the judge's triangle (for 3 levels), and its **barycentric coordinates** in that triangle are its true-score "
    "distribution π. Its **expected score** E = Σ v·π is what we rank on (rank 1 = best). We never see the judges' "
    "points, only the candidates' points, so every ranking rests on assumptions about where the judges sit. The app "
    "makes those assumptions explicit (ω and β_max), averages over what they leave open, and shows how much the "
    "ranking moves when you change them.")

st.header("Several judges, one answer: the likelihood", anchor="likelihood")
st.markdown(
    "Every judge scores the **same** answers. An answer has one true score *t*; each judge looks at it through its "
    "own confusion matrix and reports a score. The judges' scores of one answer are therefore **one** observation "
    "of *t*, seen several times, not several independent observations.")
st.graphviz_chart(
    """
    digraph {
      rankdir=LR; node [shape=box, style="rounded", fontname="DejaVu Sans", fontsize=11];
      pi [label="candidate k\\nπ_k: how often its answers\\nhave each true score"];
      t [label="answer (item i, candidate k)\\none true score t_ik ~ π_k", style="rounded,bold"];
      j1 [label="judge 1 scores\\ns_1 ~ Θ_1[t, ·]"]; j2 [label="judge 2 scores\\ns_2 ~ Θ_2[t, ·]"];
      j3 [label="judge J scores\\ns_J ~ Θ_J[t, ·]"];
      pi -> t; t -> j1; t -> j2; t -> j3;
    }
    """
)
st.markdown(
    "- **Shared truth** (the default) is this picture: the probability of an answer's scores is "
    "Σ_t π_k[t] Π_j Θ_j[t, s_j]. Judges that agree on an answer confirm its true score once; judges that disagree "
    "say it is hard to tell. Adding accurate judges sharpens what we know about each answer, never counts the answers "
    "twice. With three or more judges the joint patterns also tell the judges' matrices apart (Dawid–Skene).\n"
    "- **Per judge** is the paper's likelihood: each judge's score counts are an independent sample. It treats the "
    "same answers as J fresh samples, so with many accurate judges its intervals are too narrow (simulated, 9 judges: "
    "95% rank intervals covered 73% of true ranks). It stays available, to reproduce the paper.\n"
    "- Each judge's share of each score is the same under both (the paper's γ_jk); only how the judges' scores of one "
    "answer go together differs. Answers marked **gold** (a `gold` column) enter with their true score known "
    "(the command line's `fit`; the app's fits leave them out, see Rankings).")

st.header("Data", anchor="data")
st.markdown(
    "- One row per (item, candidate, judge) with the score. `true_score` (optional) is used to evaluate methods "
    "and by PPI; beyond that only answers marked gold (`gold` = true) use it: the app's ranking with labels, and the "
    "command line's `fit`, which observes their true level.\n"
    "- **Families** say which models come from the same maker. Judges tend to favour their own family, so with the "
    "sidebar's *Keep self-family judgments apart* on (the default) a judge's scores of its own family become a rater of "
    "their own ('<judge> · own family', with vertices of its own: the paper's Moderate Constancy), so a self-preference "
    "cannot tilt the judge's other scores and no judgment is thrown away; the baselines leave them out. The per-judge "
    "likelihood leaves them out too (it has no shared truth to calibrate such a rater against).\n"
    "- **Columns** (upload, *How to read the file*; `--columns item=question_id,candidate=model,judge=grader,score=rating`) "
    "say which of a file's columns are the contract's; filled with a guess when the header lacks them.\n"
    "- **Files of evaluation tools** are read as they are, told by their content, each import saying what it mapped "
    "and left out: FastChat MT-Bench single-answer judgments (`gpt-4_single.jsonl`; item = question and turn, score -1 "
    "= missing; pairwise files are refused); Inspect AI eval logs (`.eval` / `.json`, a file or a folder, one judge per "
    "scorer and per `multi_scorer` member; needs `requirements-import.txt`); Hugging Face datasets saved with "
    "`save_to_disk` (a folder, with *Columns*); their Parquet / JSON Lines exports read as tables.\n"
    "- **Observed levels** (upload, *How to read the file*) start as the distinct scores; add a level no judge gave "
    "(the 1 of a 1–5 rubric) so that a truth below the lowest score fits (`--levels=1,2,3,4,5`).\n"
    "- **Candidates and judges left out** (Data page; `--drop-candidates` / `--drop-judges`, or keep some with "
    "`--candidates` / `--judges`) leave a row that is no competitor, or a judge you do not want, out of every page, "
    "figure, export and link, which say so.\n"
    "- **Collapsing levels** (e.g. 1–5 → 3) trades detail for a clearer picture; the Simplex page always draws 3 levels.\n"
    "- The distribution bars are the raw material: if two candidates' bars look the same to every judge, no method can "
    "separate them.")

st.header("Simplex", anchor="simplex")
st.markdown(
    "- Dots are candidates as one judge scored them (the observed share of each level). Hover for counts and *n*.\n"
    "- Faint outlined triangles are posterior draws of the judge's three vertices; the bold triangle is their mean. "
    "A tight bundle means the data pin the judge down; a spread bundle means they do not, and rankings inherit that doubt.\n"
    "- Faint points are the candidates' posterior positions.\n"
    "- Two levels: everything lies on a segment, and the ranking is the order along it wherever the judge's two "
    "vertices sit, as long as the judge is not label-flipping (theorem 1). Binary truth with an abstain level: the "
    "judge has two vertices in the 3-level simplex and is drawn as a segment.")

st.header("Rankings: what a rank interval means", anchor="rankings")
st.markdown(
    "- A **95% rank interval** [lo, hi] holds the middle 95% of the candidate's posterior rank draws (2.5% and 97.5% "
    "quantiles, inclusive integers). Under the model, its prior and the data, the candidate's rank lies in it with 95% "
    "probability. A candidate with interval [1, 3] could be first, second or third; [1, 1] means first in essentially "
    "every draw.\n"
    "- **Whose ranking?** The Bayesian ranks are the truth's: each candidate's expected score E_k plus a "
    "candidate-specific deviation δ_k. Real judges favour some candidates (style, length, their own family) in a way "
    "one confusion matrix per judge cannot absorb, and the human truth is one more rater with leanings of its own. How "
    "much the judges disagree per candidate, beyond sampling noise, sets the size of δ_k (and a candidate scored by "
    "fewer judges gets more); with one judge it comes from a prior, and the page says so. On the 15 real "
    "dataset-criteria this took coverage of the 95% rank intervals from 9 to 15 at ≥ 0.90, for intervals about 1.3 "
    "ranks wider. `fit --no-rater-deviation` ranks E_k alone (the paper's estimand).\n"
    "- Intervals that overlap do not mean “tied”: read the **pairwise** heatmap, P(row beats column) = the share of "
    "draws where the row's score (E + δ) is higher. 0.5 is a coin flip; above 0.95 is a clear order.\n"
    "- **P(best)** is the share of draws in which the candidate ranks first.\n"
    "- The baselines answer a narrower question. Bootstrap and Bradley–Terry intervals cover sampling noise only "
    "(resampling items), not doubt about the judges; simple average and single judge are points. PPI uses some gold "
    "labels and is marked so: it is not a label-free competitor.\n"
    "- A file with **gold answers** (a `gold` column) opens on the ranking its labels give: the label-free model "
    "predicts every answer's true score and the labelled answers correct the predictions' bias (prediction-powered "
    "inference; it needs at least 2 labelled answers per candidate, chosen at random). The corrections are pooled "
    "over candidates: a candidate moves as far as its labels stand out from what the model already doubted about it "
    "and from the other candidates' noise, so a handful of labels cannot scramble a ranking they cannot tell apart. The "
    "page says how many labels it used and how each candidate moved against the label-free ranking; a switch shows "
    "the label-free one. Every page's Bayesian fit (Simplex, Rankings, Sensitivity, Export) is that label-free one, "
    "the file's labels left out: they enter only the ranking with labels (and its row of the evaluation), because "
    "correcting the label-free predictions kept coverage where observing the labels in the posterior did not.\n"
    "- The **ordinal** method is the model a psychometrician would fit first: a cumulative-logit many-facet model "
    "(candidate quality, item effects, each judge's severity and cutpoints), label-free, with its own posterior rank "
    "intervals; the Rankings page fits it in the background on request. On a binary scale it has one cutpoint per "
    "judge: a Rasch-type (one-parameter logistic) model with a severity per judge, Rasch/2PL-like, though without a "
    "2PL's per-judge discrimination.\n"
    "- With ground truth, **Spearman** measures how well a point ranking matches the truth and **coverage** the share of "
    "candidates whose true rank falls inside the method's interval (a 95% interval should cover about 95%).\n"
    "- Coverage has a price: an interval spanning every rank always covers and says nothing. Read coverage beside the "
    "**interval width** (mean number of ranks an interval admits; a point rank has width 1) and the **interval "
    "score** (width plus 40 per rank by which the interval misses the truth; lower is better), which rewards the "
    "narrowest intervals that still cover.\n"
    "- A method that ranks only part of the candidates (a single judge whose own family's candidates are excluded) "
    "is scored over those it ranks, against their true order among themselves, and the count is shown (\"over 3 "
    "of 9\").")

st.header("Sensitivity: ω and β_max", anchor="sensitivity")
st.markdown(
    "**ω (constancy violation).** With ω = 0 every judge treats every (non-self-family) candidate the same way "
    "(strong constancy). With ω > 0 each candidate's true-score distribution, as a judge sees it, is pulled towards a "
    "random direction Z by the weight W_k·R_j, where R_j ~ Beta(ωJ, J) and W_k ~ Beta(ωK, K). Each of these has mean "
    "ω/(1 + ω), whatever J and K are:")
rows = []
for w in OMEGA_GRID:
    m = w / (1 + w)
    rows.append({"ω": f"{w:g}", "E[R_j] = E[W_k] = ω/(1+ω)": round(m, 3), "E[W_k·R_j] = (ω/(1+ω))²": round(m * m, 3)})
st.dataframe(pd.DataFrame(rows), hide_index=True, width="content")
st.markdown(
    "So “ω = 1 puts about half the weight on random effects, ω = 8 about 90%” (the paper's wording) is true of each "
    "magnitude, R_j and W_k, taken alone: their means are 0.5 and 0.89. The weight actually applied to a (judge, "
    "candidate) pair is the product W_k·R_j, whose mean is smaller: 0.25 at ω = 1 and 0.79 at ω = 8.\n\n"
    "**β_max (judge quality).** β_max = 0 says nothing about judge quality beyond “not label-flipping”; larger values "
    "say that judges mostly give the true score (each judge's own strength ρ_j ~ Beta(1, 1) scales it). Under the "
    "default judge prior (*ordered thresholds*: each judge reads a latent level through its own leniency and "
    "cut-points, centred on the true level before any data) β_max sets the typical judge's sharpness: 0, judges near "
    "noise; 5, an inner level of five scored right about 6 times in 10. The paper's own *weight propagation* prior is "
    "under Advanced model settings (on two-level scales it is the default's form). The paper's "
    "protocol: start at ω = 0, β_max = 5; sweep ω from 0 to 8 at β_max = 5; sweep β_max from 0 to 20 at ω = 0. "
    "If the ranking barely moves (Spearman with the base ranking near 1), the conclusion does not hinge on these "
    "assumptions. If it moves, narrow the plausible values with what you know about the judges, or get some gold labels.\n\n"
    "**δ** sets the direction random effects push in: *inflation* (default, judges score too high, as self-preference "
    "does), *deflation*, *central tendency*, *uniform*. **Integrated** mode puts flat hyperpriors on ω (0–8) and β_max "
    "(0–20) and averages over them in one fit.")

st.header("When to distrust a fit", anchor="distrust")
st.markdown(
    "- **Not converged.** The app checks the expected scores: R-hat ≤ 1.01, bulk effective sample size ≥ 400 and no "
    "divergent transitions. Otherwise a warning says which check failed; the intervals may be wrong. The default "
    "engine already samples up to three more rounds of longer chains before it gives up; refit with more draws if it "
    "still fails.\n"
    "- **Separate modes.** Sometimes the data support two explanations of the judges (with two judges, often \"judge A "
    "is the noisy one\" against \"judge B is\"): the posterior has separate modes that ordinary chains cannot cross. "
    "The app then samples it by parallel tempering (the diagnostics say so), whose chains visit both explanations in "
    "proportion to the evidence, and the rank intervals span both. This fit takes longer (about 15 s on GPQA-size "
    "data). Where that is not enough (a part of the judges the data barely pin down, e.g. with β_max = 0), it tempers "
    "from a reference fitted to the chains so far, which can take several minutes. Adding a third judge or a few "
    "labelled items tells the explanations apart.\n"
    "- **Posterior predictive misfit.** If the fitted score distribution of a (judge, candidate) pair is far from the "
    "observed one, the model cannot explain that pair: often a self-preference not covered by the families, or a "
    "judge that treats one candidate differently. Raise ω, check the families, or drop that judge.\n"
    "- **Ranks that move across the sweep.** The data alone do not settle the order (theorem 2: with 3 or more levels, "
    "rankings are not identifiable without assumptions about the judges).\n"
    "- **Judges that are not independent**, such as several prompts of one model: the model treats them as separate "
    "witnesses and its intervals will be too narrow.\n"
    "- **Few items per candidate.** With a few dozen items, sampling noise alone gives wide intervals; that is honest, "
    "not a failure.")

st.header("Geometry lab", anchor="geometry")
st.markdown(
    "Teaching views that need no data: barycentric coordinates as area ratios; the 2-level segment (theorem 1) and a "
    "label-flipping judge; the 3-level flip of theorem 2, where moving the judge's vertices along Θ + hΔ keeps both "
    "candidates inside the triangle yet swaps their expected-score order; and the augmented simplex, where a "
    "candidate's height is its expected score.")

st.header("Export", anchor="export")
st.markdown(
    "- Every table downloads as CSV and every figure as interactive HTML (PNG/SVG when the optional static exporter "
    "is installed).\n"
    "- The posterior downloads as NetCDF: `arviz.from_netcdf(path)` opens it, with named dimensions candidate, judge, "
    "true_level and level.\n"
    "- The settings download as JSON (everything needed to refit: data hash, scale, families, options, seed).\n"
    "- The page address carries the dataset and the settings: copy it to share the exact view.\n"
    "- The same analyses run from the command line: `python -m simplex_core fit DATA --out result.json` (see the README).")

st.header("Speed and background fits")
st.markdown(
    "The ω and β_max sliders step through 33 × 41 values (the paper's 5 × 5 grid among them; *Any ω and β_max* "
    "under Advanced model settings gives continuous sliders). Moving one starts a real fit in a separate process; "
    "its progress shows at the top of the page, with a Cancel button, and the page stays usable meanwhile. "
    "Every finished fit is kept in an on-disk cache, so any setting fitted before (by anyone, even before a restart) "
    "comes back at once. After the first fit of a dataset is shown, the rest of the 5 × 5 grid of the paper's values "
    "is fitted in the background (its progress and the time left show in the sidebar).\n\n"
    "**The approximate answer.** ω and β_max enter only the prior, so the posterior of a fit already done can be "
    "moved to another setting by weighting its draws with the ratio of the two priors (Pareto-smoothed importance "
    "sampling). While the real fit runs, the Rankings page shows that reweighted answer at once in every Bayesian "
    "view — ranking line, figures, tables and downloads — labelled *approximate* with the Pareto k̂ and the "
    "effective sample size of the weights. k̂ ≤ 0.7 means the reweighting is usable; above it the answer is shown "
    "with a warning, *not to be trusted*: the real fit decides, and replaces it when it lands. Moves in β_max are "
    "usually well within reach; moves in ω between the grid's values often are not (the prior of the random effects "
    "is sharp in ω). ω = 0 is another model (no random effects): a fit at ω > 0 cannot stand in for it, nor the "
    "reverse. The other pages show the previous fit, labelled, until the real fit lands.")
