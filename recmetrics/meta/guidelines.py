"""Choosing a metric: the paper's toy cases and its guidelines (Schröder, Thiele & Lehner 2011).

Two parts, both pure library logic (the notebook ``04_choosing_a_metric`` and the widget
:mod:`recmetrics.widgets.guide` only call them):

**Toy cases (Figures 1-4).** Ten items, each judged (relevant = rating 5, irrelevant = rating 1),
ranked by a recommender; every panel of a figure becomes one user of a small :class:`ToyCase`
(a Run, Qrels, an empty training set and the ten-item catalog, so the AllItems universe is the
ten items) and is scored by the registered metrics:

* :func:`figure1` -- one ranking of ten items with four relevant ones, the list length k varied
  from 1 to 10 (the paper's exact order is not recoverable from its text; we use relevant items
  at ranks 1, 2, 4 and 7, :data:`FIGURE1_RANKING`);
* :func:`figure2` -- a single relevant item moved from rank 1 to rank 10, top-4 list;
* :func:`figure3` -- 1 to 9 relevant items out of ten, top-4 lists of a perfect recommender
  (relevant items first) and its inverse (relevant items last);
* :func:`figure4` -- three relevant items moved as a block from ranks 1-3 to ranks 8-10, top-4 list.

**Guidelines (§6).** :data:`QUESTIONS` are the paper's six questions; :func:`recommend_metrics`
turns answers into a list of ``(metric family, reason)`` following :data:`RULES`, and
:func:`cautions` lists the metrics the answers rule out, with the paper's reasons.
:func:`measured_properties` is the hook that adds the measured robustness and discriminative
power of the recommended metrics once the meta-evaluation has written its result tables.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..errors import InputError, unknown_name

# ============================================================================ toy cases
N_ITEMS = 10
TOY_K = 4
REL_RATING, IRR_RATING = 5.0, 1.0

#: relevance of ranks 1..10 in Figure 1 (four relevant items); our choice, see the module docstring
FIGURE1_RANKING = (1, 1, 0, 1, 0, 0, 1, 0, 0, 0)

#: (label, metric name template): ``{k}`` is replaced by the figure's cut-off. ``MAP`` is AP over the
#: whole ranking (the paper's Figure 2 point: it reacts to the position of one relevant item).
FIGURE_METRICS: tuple[tuple[str, str], ...] = (
    ("precision", "P@{k}"),
    ("recall", "Recall@{k}"),
    ("F1", "F1@{k}"),
    ("fallout", "fallout@{k}"),
    ("miss rate", "missrate@{k}"),
    ("inverse precision", "inverse_precision@{k}"),
    ("inverse recall", "inverse_recall@{k}"),
    ("markedness", "markedness@{k}"),
    ("informedness", "informedness@{k}"),
    ("MCC", "MCC@{k}"),
    ("AP@k", "AP@{k}"),
    ("MAP", "AP"),
    ("LAUC", "LAUC@{k}"),
    ("AUC", "AUC"),
    ("BKTau@k", "BKTau@{k}"),
    ("BKTau", "BKTau"),
)


@dataclass
class ToyCase:
    """Rankings of the ten toy items, one user per panel, ready for :func:`recmetrics.evaluate`."""

    run: Any                 # recmetrics Run
    qrels: Any               # recmetrics Qrels
    train: pd.DataFrame      # empty: every item is in every user's universe
    catalog: np.ndarray      # the item ids 0..n-1
    panels: pd.DataFrame     # one row per user: user, panel letter and the case's parameters

    @property
    def context(self) -> dict:
        return {"train": self.train, "catalog": self.catalog}


def toy_case(relevance: Sequence[Sequence[int]], panels: pd.DataFrame | None = None) -> ToyCase:
    """One user per relevance pattern: user ``u`` ranks items ``0..n-1`` in that order and item ``j``
    (rank ``j + 1``) is relevant when ``relevance[u][j]`` is true. All items are judged."""
    from ..data.qrels import Qrels
    from ..data.run import Run

    rel = np.asarray(relevance, dtype=bool)
    if rel.ndim != 2 or rel.shape[1] == 0 or rel.shape[0] == 0:
        raise InputError(f"relevance must be a non-empty list of equally long 0/1 patterns, got shape {rel.shape}")
    n_users, n = rel.shape
    users = np.repeat(np.arange(n_users), n)
    items = np.tile(np.arange(n), n_users)
    qrels = Qrels(pd.DataFrame({"user": users, "item": items,
                                "rating": np.where(rel.ravel(), REL_RATING, IRR_RATING)}))
    run = Run(np.arange(n_users), np.tile(np.arange(n), (n_users, 1)), np.full(n_users, n), name="toy")
    if panels is None:
        panels = pd.DataFrame({"user": np.arange(n_users)})
    panels = panels.reset_index(drop=True).assign(
        user=np.arange(n_users),
        panel=[chr(ord("a") + i) if i < 26 else str(i) for i in range(n_users)],
        ranking=["".join("R" if x else "." for x in row) for row in rel])
    return ToyCase(run, qrels, pd.DataFrame({"user": pd.Series(dtype=np.int64), "item": pd.Series(dtype=np.int64)}),
                   np.arange(n), panels)


def _metric_names(metrics, k: int) -> list[tuple[str, str]]:
    metrics = FIGURE_METRICS if metrics is None else metrics
    out = []
    for m in metrics:
        label, template = (m, m) if isinstance(m, str) else m
        out.append((label, template.replace("{k}", str(k))))
    return out


def toy_scores(case: ToyCase, metrics=None, k: int = TOY_K) -> pd.DataFrame:
    """Long DataFrame of every panel's metric values: the panel columns plus ``metric, name, value``.

    ``metrics``: (label, template) pairs or plain names (default :data:`FIGURE_METRICS`); ``{k}``
    in a template becomes ``k``.
    """
    names = _metric_names(metrics, k)
    from ..evaluation import evaluate

    ev = evaluate(case.run, case.qrels, [n for _, n in names], users="all", **case.context)
    values = ev.per_user.loc[case.panels["user"].to_numpy()].to_numpy()
    frames = []
    for col, (label, name) in enumerate(names):
        frames.append(case.panels.assign(metric=label, name=name, value=values[:, col]))
    return pd.concat(frames, ignore_index=True)


def figure1(metrics=None, ranking: Sequence[int] = FIGURE1_RANKING) -> pd.DataFrame:
    """Figure 1: one ranking, the list length k from 1 to 10. Columns ``k, metric, name, value, ...``."""
    ranking = tuple(int(bool(x)) for x in ranking)
    case = toy_case([ranking])
    frames = [toy_scores(case, metrics, k).assign(k=k) for k in range(1, len(ranking) + 1)]
    out = pd.concat(frames, ignore_index=True)
    out["panel"] = [chr(ord("a") + k - 1) for k in out["k"]]
    return out.assign(figure=1)


def figure2(metrics=None, k: int = TOY_K, n_items: int = N_ITEMS) -> pd.DataFrame:
    """Figure 2: one relevant item at rank ``position`` = 1..10, top-k list (k = 4)."""
    positions = np.arange(1, n_items + 1)
    rel = (np.arange(n_items)[None, :] == positions[:, None] - 1).astype(int)
    case = toy_case(rel, pd.DataFrame({"position": positions}))
    return toy_scores(case, metrics, k).assign(figure=2, k=k)


def figure3(metrics=None, k: int = TOY_K, n_items: int = N_ITEMS) -> pd.DataFrame:
    """Figure 3: ``n_relevant`` = 1..9 of ten items, a perfect and an inverse recommender, top-k list."""
    rows, params = [], []
    for recommender in ("perfect", "inverse"):
        for r in range(1, n_items):
            first = np.arange(n_items) < r
            rows.append(first if recommender == "perfect" else first[::-1])
            params.append((recommender, r, r / n_items))
    case = toy_case(np.asarray(rows, dtype=int),
                    pd.DataFrame(params, columns=["recommender", "n_relevant", "ratio"]))
    return toy_scores(case, metrics, k).assign(figure=3, k=k)


def figure4(metrics=None, k: int = TOY_K, n_items: int = N_ITEMS, block: int = 3) -> pd.DataFrame:
    """Figure 4: a block of three relevant items starting at rank ``position`` = 1..8, top-k list."""
    starts = np.arange(1, n_items - block + 2)
    idx = np.arange(n_items)[None, :]
    rel = ((idx >= starts[:, None] - 1) & (idx < starts[:, None] - 1 + block)).astype(int)
    case = toy_case(rel, pd.DataFrame({"position": starts}))
    return toy_scores(case, metrics, k).assign(figure=4, k=k)


# ============================================================================ guidelines (§6)
class Question(NamedTuple):
    key: str
    text: str
    options: tuple[str, ...]
    help: str


QUESTIONS: tuple[Question, ...] = (
    Question("rated_unrated", "Is there a distinction between rated and unrated items?", ("yes", "no"),
             "If all items are implicitly rated, predictive accuracy metrics are not applicable: there is "
             "no unrated item whose rating could be predicted."),
    Question("scale", "Are items rated on a numerical or a binary scale?", ("numerical", "binary", "unary"),
             "A binary (or unary) rating scale usually suggests a classification or ranking task."),
    Question("interest", "Are users interested in rating predictions or only in top-ranked items?",
             ("predictions", "top items"),
             "If users only care about the top-ranked items, a higher error on individual predictions is "
             "acceptable as long as the top items are identified: use classification or ranking metrics."),
    Question("limited_list", "Is a limited list of top-ranked items shown?", ("yes", "no"),
             "If yes, metrics of the overall predictive or ranking accuracy are not appropriate: the "
             "predictions and the ranking of the other items are irrelevant to users."),
    Question("ordered", "Do the recommended items have or imply an order?", ("yes", "no"),
             "If yes, precision, recall, markedness and informedness are not sufficient: they ignore "
             "the order among the recommended items."),
    Question("decay", "How fast does the user's interest in lower ranked items decay?", ("fast", "slow"),
             "MAP and GMAP emphasise the first recommendations; AUC and Kendall's tau weigh swaps at "
             "lower and higher ranks the same way."),
)

_QUESTION = {q.key: q for q in QUESTIONS}

#: a typical e-commerce top-k widget (the paper's running example); missing answers take these
DEFAULT_ANSWERS: dict[str, str] = {"rated_unrated": "yes", "scale": "numerical", "interest": "top items",
                                   "limited_list": "yes", "ordered": "yes", "decay": "fast"}


class Family(NamedTuple):
    key: str
    title: str
    metrics: tuple[str, ...]      # registered metric names; {k} = the list length
    aggregation: str = "arithmetic"


FAMILIES: dict[str, Family] = {f.key: f for f in (
    Family("predictive accuracy", "Predictive accuracy: MAE, RMSE, NMAE (MSE)", ("MAE", "RMSE", "NMAE", "MSE")),
    Family("classification accuracy", "Classification accuracy: markedness, informedness, Matthews correlation",
           ("markedness@{k}", "informedness@{k}", "MCC@{k}")),
    Family("top-weighted ranking", "Top-weighted rank accuracy: MAP and GMAP (AP over the list)", ("AP@{k}",),
           "geometric"),
    Family("limited ranking", "Limited rank accuracy: LAUC@k and boolean Kendall's tau@k", ("LAUC@{k}", "BKTau@{k}")),
    Family("full ranking", "Rank accuracy of the whole ranking: AUC and boolean Kendall's tau", ("AUC", "BKTau")),
)}


class Rule(NamedTuple):
    family: str
    when: Mapping[str, tuple[str, ...]]   # derived answer -> accepted values (all must hold)
    reason: str


#: The decision rules, applied in order to the derived answers (``task`` is "prediction" when
#: rated/unrated items are distinguished, the scale is numerical and users want predictions,
#: else "top items"; ``shows_list`` is "yes" when the task is top items or a limited list is shown).
RULES: tuple[Rule, ...] = (
    Rule("predictive accuracy", {"task": ("prediction",)},
         "Users see predicted ratings of unrated items on a numerical scale, so the accuracy of every "
         "prediction matters (§4.1): MAE and RMSE in rating units, RMSE and MSE emphasising large errors, "
         "NMAE comparable across rating scales."),
    Rule("classification accuracy", {"shows_list": ("yes",), "ordered": ("no",)},
         "The recommended items form an unordered set (§4.2): count correct and incorrect decisions. Prefer "
         "markedness, informedness and Matthews correlation to precision, recall and F1, whose values depend "
         "on the ratio of relevant items and can mislead when it is skewed (§5.1, Fig. 3); they also help "
         "choose the list length (Fig. 1)."),
    Rule("top-weighted ranking", {"shows_list": ("yes",), "ordered": ("yes",), "decay": ("fast",)},
         "Order matters and interest decays fast: MAP and GMAP emphasise the first recommendations, "
         "unlike AUC or Kendall's tau (§6, Fig. 2); errors at low ranks become irrelevant."),
    Rule("limited ranking", {"shows_list": ("yes",), "limited_list": ("yes",), "ordered": ("yes",),
                             "decay": ("slow",)},
         "A limited ordered list whose items all get attention: LAUC measures classification and ranking "
         "accuracy of the top k at once -- 1 when every relevant item comes first within the list, swaps at "
         "the top or bottom of the list count the same, changes beyond the list are ignored (§5.2); the "
         "boolean Kendall's tau of the top k is a highly correlated alternative."),
    Rule("full ranking", {"shows_list": ("yes",), "limited_list": ("no",), "ordered": ("yes",),
                          "decay": ("slow",)},
         "Users look through a long ordered list and care about all of it: the AUC (and the boolean "
         "Kendall's tau for partial rankings) measures the whole ranking, weighing swaps at high and low "
         "ranks the same (§4.3, §5.2)."),
)

#: Metrics the answers rule out, with the paper's reasons (``family`` is a short label here).
CAUTIONS: tuple[Rule, ...] = (
    Rule("predictive accuracy", {"rated_unrated": ("no",)},
         "All items are implicitly rated: there is no unrated item to predict, so MAE/RMSE are not "
         "applicable (§6)."),
    Rule("predictive accuracy", {"rated_unrated": ("yes",), "task": ("top items",)},
         "Users care about the top items, not individual rating scores: a higher prediction error is "
         "acceptable as long as the top items are identified, so MAE/RMSE do not measure the goal (§4.1, §6)."),
    Rule("precision, recall, F1", {"shows_list": ("yes",)},
         "Precision, recall and F1 depend on the ratio of relevant items and can mislead when it is skewed "
         "(§5.1, Fig. 3); if used, read them with fallout and miss rate, or use markedness/informedness."),
    Rule("unordered set metrics alone", {"shows_list": ("yes",), "ordered": ("yes",)},
         "Precision, recall, markedness and informedness ignore the order among the recommended items (§6)."),
    Rule("whole-list metrics", {"limited_list": ("yes",)},
         "Only a limited list is shown: overall predictive or ranking accuracy (AUC, RMSE over all items) "
         "counts items users never see (§6)."),
    Rule("AUC, Kendall's tau", {"shows_list": ("yes",), "ordered": ("yes",), "decay": ("fast",)},
         "AUC and Kendall's tau weigh swaps at the top and at the bottom of a ranking the same; with fast "
         "decaying interest that over-weights the low ranks (§5.2, §6, Fig. 2, 4)."),
    Rule("unary judgments", {"scale": ("unary",)},
         "Unary ratings do not separate disliked from unknown items: the 'irrelevant' class contains items "
         "the user may like, so precision-like values are lower bounds (§3.2)."),
)


class Recommendation(NamedTuple):
    family: str
    reason: str


def normalise_answers(answers: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Validate ``answers`` (keys of :data:`QUESTIONS`; booleans accepted for yes/no) and fill the
    missing ones from :data:`DEFAULT_ANSWERS`."""
    out = dict(DEFAULT_ANSWERS)
    for key, value in (answers or {}).items():
        q = _QUESTION.get(key)
        if q is None:
            raise unknown_name("guideline question", str(key), _QUESTION)
        if isinstance(value, (bool, np.bool_)) and q.options == ("yes", "no"):
            value = "yes" if value else "no"
        text = str(value).strip().lower().replace("_", " ")
        if text not in q.options:
            raise InputError(f"answer {value!r} to {q.text!r} ({key}) must be one of {list(q.options)}")
        out[key] = text
    return out


def _derived(a: Mapping[str, str]) -> dict[str, str]:
    d = dict(a)
    prediction = a["rated_unrated"] == "yes" and a["scale"] == "numerical" and a["interest"] == "predictions"
    d["task"] = "prediction" if prediction else "top items"
    d["shows_list"] = "yes" if (d["task"] == "top items" or a["limited_list"] == "yes") else "no"
    return d


def _matches(rule: Rule, d: Mapping[str, str]) -> bool:
    return all(d[key] in values for key, values in rule.when.items())


def recommend_metrics(answers: Mapping[str, Any] | None = None) -> list[Recommendation]:
    """The metric families that fit the answers to :data:`QUESTIONS`, with the paper's reasons.

    Returns a list of ``(family, reason)``; ``FAMILIES[family]`` gives the registered metrics. Every
    combination of answers yields at least one family.
    """
    d = _derived(normalise_answers(answers))
    out = [Recommendation(r.family, r.reason) for r in RULES if _matches(r, d)]
    if d["task"] == "prediction" and d["limited_list"] == "yes":
        out[0] = Recommendation(out[0].family, out[0].reason + " Only a limited list is shown, though: pair "
                                "it with a metric of that list, since errors on items never shown do not "
                                "matter to users (§6).")
    return out


def cautions(answers: Mapping[str, Any] | None = None) -> list[Recommendation]:
    """Metrics the answers rule out or qualify, with the paper's reasons."""
    d = _derived(normalise_answers(answers))
    return [Recommendation(r.family, r.reason) for r in CAUTIONS if _matches(r, d)]


def family_metrics(family: str, k: int = 10) -> list[str]:
    """The registered metric names of a family, with the list length ``k`` filled in."""
    if family not in FAMILIES:
        raise unknown_name("metric family", family, FAMILIES)
    return [m.replace("{k}", str(int(k))) for m in FAMILIES[family].metrics]


def decision_table() -> pd.DataFrame:
    """Every combination of answers with its recommended families (for a static view of the rules)."""
    rows = []
    for combo in itertools.product(*(q.options for q in QUESTIONS)):
        answers = dict(zip((q.key for q in QUESTIONS), combo))
        rows.append({**answers, "recommended": ", ".join(r.family for r in recommend_metrics(answers))})
    return pd.DataFrame(rows)


def rules_table() -> pd.DataFrame:
    """The rules and cautions as a table: kind, family, condition, reason."""
    def cond(rule):
        return "; ".join(f"{k} = {' or '.join(v)}" for k, v in rule.when.items())

    rows = [("recommend", r.family, cond(r), r.reason) for r in RULES]
    rows += [("caution", r.family, cond(r), r.reason) for r in CAUTIONS]
    return pd.DataFrame(rows, columns=["kind", "family", "when", "reason"])


# ============================================================================ meta-evaluation hook
#: Environment variable naming the directory of meta-evaluation result tables.
META_RESULTS_ENV = "RECMETRICS_META_RESULTS"
#: The tables the hook reads, each a CSV with at least the columns ``dataset, metric, value``
#: (``metric`` a registered metric name such as ``markedness@10``).
META_TABLES = {"discriminative power": "discriminative_power.csv", "robustness": "robustness.csv"}


def meta_results_dir(path: str | os.PathLike | None = None) -> Path:
    """Where :func:`measured_properties` looks: ``path``, else ``$RECMETRICS_META_RESULTS``, else
    ``results/meta`` under the current directory."""
    return Path(path or os.environ.get(META_RESULTS_ENV) or Path("results") / "meta")


def save_measured(prop: str, values, dataset: str, path: str | os.PathLike | None = None) -> Path:
    """Append ``{metric: value}`` of one property (a key of :data:`META_TABLES`) measured on
    ``dataset`` to its table in :func:`meta_results_dir` (the rows of that dataset are replaced),
    so that :func:`measured_properties` — chapter 4's guide — finds it.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = save_measured("robustness", {"P@10": 0.9, "nDCG@10": 0.8}, "toy", d)
    >>> measured_properties(["P@10"], d).round(2).values.tolist()
    [[0.9]]
    """
    if prop not in META_TABLES:
        raise InputError(f"property must be one of {list(META_TABLES)}, got {prop!r}")
    base = meta_results_dir(path)
    base.mkdir(parents=True, exist_ok=True)
    f = base / META_TABLES[prop]
    rows = pd.DataFrame({"dataset": dataset, "metric": [str(m) for m in values.keys()],
                         "value": [float(v) for v in values.values()]})
    if f.exists():
        old = pd.read_csv(f)
        rows = pd.concat([old[old["dataset"] != dataset], rows], ignore_index=True)
    rows.to_csv(f, index=False)
    return f


def measured_properties(metrics: Iterable[str], path: str | os.PathLike | None = None) -> pd.DataFrame | None:
    """HOOK -- measured discriminative power and robustness of ``metrics`` on our datasets.

    Reads the meta-evaluation result tables (:data:`META_TABLES`) from :func:`meta_results_dir`
    when they exist and returns a DataFrame indexed by metric with one column per
    (property, dataset); returns ``None`` while no table exists (the meta-evaluation has not been
    run yet). Metric names are matched case-insensitively after parsing (``map@10`` = ``AP@10``).
    """
    from ..metrics import parse

    def canon(name):
        try:
            return str(parse(str(name)))
        except InputError:
            return str(name)

    wanted = {canon(m): m for m in metrics}
    base = meta_results_dir(path)
    frames = []
    for prop, filename in META_TABLES.items():
        f = base / filename
        if not f.exists():
            continue
        t = pd.read_csv(f)
        missing = [c for c in ("dataset", "metric", "value") if c not in t.columns]
        if missing:
            raise InputError(f"{f}: meta-evaluation table lacks column(s) {missing}; has {list(t.columns)}")
        t = t.assign(property=prop, key=t["metric"].map(canon))
        frames.append(t[t["key"].isin(wanted)])
    if not frames:
        return None
    table = pd.concat(frames, ignore_index=True)
    if table.empty:
        return pd.DataFrame(index=pd.Index(list(wanted.values()), name="metric"))
    wide = table.pivot_table(index="key", columns=["property", "dataset"], values="value", aggfunc="mean")
    wide.index = pd.Index([wanted[k] for k in wide.index], name="metric")
    return wide


def measured_note(measured: pd.DataFrame | None) -> str:
    """One sentence saying what :func:`measured_properties` found: which properties on which
    datasets, or that there is none (then the guide shows the rules only). It names no folder: the
    sentence is published in the book.

    >>> measured_note(None)
    'No measured discriminative power or robustness was found, so the explorer shows the rules only.'
    >>> cols = pd.MultiIndex.from_tuples([("robustness", "ml"), ("discriminative power", "ml")])
    >>> measured_note(pd.DataFrame([[0.9, 0.1]], index=["P@10"], columns=cols))
    'Measured discriminative power and robustness (dataset ml) are shown under each recommended metric.'
    """
    cols = list(measured.columns) if measured is not None and not measured.empty else []
    if not cols:
        return "No measured discriminative power or robustness was found, so the explorer shows the rules only."
    props = " and ".join(sorted({str(p) for p, _ in cols}))
    datasets = sorted({str(d) for _, d in cols})
    return (f"Measured {props} (dataset{'s' if len(datasets) > 1 else ''} {', '.join(datasets)}) are shown under "
            "each recommended metric.")


def catalogue_identities(run, qrels, k: int, universes=("all", "judged"), **context) -> pd.DataFrame:
    """How far Schröder et al.'s measures sit from their catalogue-scale approximations.

    With the AllItems universe a user's true negatives ``tn`` dwarf every other cell of the
    confusion matrix at list length ``k``, so fallout ``fp/(fp+tn)`` and the false omission rate
    ``fn/(fn+tn)`` vanish and:

    * informedness = recall − fallout ≈ recall@k;
    * markedness = precision − fn/(fn+tn) ≈ precision@k;
    * MCC = ±sqrt(informedness · markedness) ≈ sqrt(P@k · R@k);
    * LAUC@k, the area under a ROC that is a straight line behind the list, equals
      (1 + TPR − FPR)/2 = (1 + informedness)/2 up to the order *within* the top k;
    * boolean τ@k (ordered) ≈ MCC@k: with the unordered top k it is exactly MCC (τ-b of a 2x2
      table is the φ coefficient), and the order inside a short list moves few of the
      ``~|U|²/2`` pairs.

    For each universe (``"all"``: catalogue minus training items; ``"judged"``: the user's test
    items only, where ``tn`` is small and the approximations fail), returns the mean and maximum
    absolute difference over users of each identity, and ``se``: the standard error of that mean
    (sample standard deviation of the per-user |difference| over √users; NaN for one user), which
    a claim about the mean must clear. Columns ``universe, identity, mean |difference|,
    max |difference|, se, users``."""
    from ..evaluation import evaluate

    rows = []
    for universe in universes:
        u = f"(universe={universe})"
        names = {"P": f"P@{k}", "R": f"Recall@{k}", "mk": f"markedness@{k}{u}", "inf": f"informedness@{k}{u}",
                 "mcc": f"MCC@{k}{u}", "lauc": f"LAUC@{k}{u}", "bkt": f"BKTau@{k}{u}"}
        ev = evaluate(run, qrels, list(names.values()), **context).per_user
        v = {key: ev.iloc[:, j].to_numpy() for j, key in enumerate(names)}
        pairs = {
            "informedness ≈ recall": v["inf"] - v["R"],
            "markedness ≈ precision": v["mk"] - v["P"],
            "MCC ≈ sqrt(P·R)": v["mcc"] - np.sqrt(v["P"] * v["R"]),
            "LAUC ≈ (1 + informedness)/2": v["lauc"] - (1 + v["inf"]) / 2,
            "BKTau ≈ MCC": v["bkt"] - v["mcc"],
        }
        for identity, diff in pairs.items():
            a = np.abs(diff)
            se = float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else float("nan")
            rows.append({"universe": universe, "identity": identity, "mean |difference|": float(a.mean()),
                         "max |difference|": float(a.max()), "se": se, "users": len(a)})
    return pd.DataFrame(rows)


__all__ = ["catalogue_identities", "ToyCase", "toy_case", "toy_scores", "figure1", "figure2", "figure3", "figure4", "FIGURE_METRICS",
           "FIGURE1_RANKING", "QUESTIONS", "DEFAULT_ANSWERS", "FAMILIES", "RULES", "CAUTIONS", "Recommendation",
           "normalise_answers", "recommend_metrics", "cautions", "family_metrics", "decision_table",
           "rules_table", "meta_results_dir", "save_measured", "measured_note", "measured_properties", "META_TABLES", "META_RESULTS_ENV"]
