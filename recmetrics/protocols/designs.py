"""Evaluation designs of Bellogín's thesis ch. 4 (paper 004) as named, round-tripping specs.

Table 4.2: candidate items **AI** (all items) / **TI** (items with a test rating); relevant
selection **AR** (all the user's relevant test items in one target set) / **1R** (one target set
per relevant test item, Cremonesi et al. 2010); non-relevant items **AN** (all candidates minus the
user's relevant test and training items) / **NN** (``n`` sampled at random, shared by the user's 1R
sets, i.e. N_u^r = N_u as in the lemma of Eq. 4.2).

Popularity-neutralising designs (§4.6): ``P1R(m=10,n=99,popularity=full)`` (1R within m popularity
percentiles, averaged), ``U1R(n=99)`` / ``UAR`` (uniform test-item profiles, C = T; the test set
must come from :func:`recmetrics.protocols.uniform_split`), ``AI-UAR`` (UAR with every item as a
candidate, C = I: the thesis' evidence that UAR needs the TI policy, §4.6.3), ``head10(relevant=1R,
n=99)`` (the 10% most popular items removed from the test data and from C).

Defaults and open choices
-------------------------
* ``n`` is |N_u| (non-relevant items), so a 1R target set has t = n + 1 items. It defaults to 99:
  "For 1R we shall always use TI-NN, with |T_u| = 100" (§4.3.3; random precision 1/100 = 0.0100,
  the value Fig. 4.4 quotes).
* ``popularity`` (P1R only): which counts sort the items into the m percentiles — ``full`` (default:
  every rating, train and test, i.e. the thesis' r(i), the popularity of §4.5.2 and Fig. 4.5; the
  percentiles J_k partition the item set J, §4.6.1) or ``train`` (training ratings only, r_train(i),
  the counts the popularity recommender ranks by). The thesis does not say which it used and the
  choice moves the result (Pop/Random P@10 on movielens-small: 1.02 with full counts, 1.31 with
  training counts), so the chapter runs both.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError
from ..names import Registry, parse_params

#: |N_u| of the thesis' NN designs: |T_u| = n + 1 = 100 (§4.3.3)
DEFAULT_N = 99
#: the readings of P1R's percentiles (see the module docstring)
POPULARITY = ("full", "train")

_BASE_RE = re.compile(r"^(AI|TI)-(AR|1R)-(AN|NN)$", re.I)
_SPECIAL = Registry("design")  # the named designs of §4.6: name (case-insensitive) -> parameter defaults
_SPECIAL.add("P1R", {"m": 10, "n": DEFAULT_N, "popularity": "full"})
_SPECIAL.add("U1R", {"n": DEFAULT_N})
_SPECIAL.add("UAR", {}, aliases=("TI-UAR",))
_SPECIAL.add("AI-UAR", {})
_SPECIAL.add("head10", {"relevant": "1R", "n": DEFAULT_N})
BASE_NAMES = [f"{c}-{r}-{x}" for c in ("AI", "TI") for r in ("AR", "1R") for x in ("AN", "NN")]
NAMES = BASE_NAMES + _SPECIAL.names()


@dataclass(frozen=True)
class Design:
    """One evaluation design. Build with :func:`parse`; ``str(design)`` parses back."""

    candidates: str = "TI"      # AI | TI
    relevant: str = "1R"        # AR | 1R
    nonrelevant: str = "NN"     # AN | NN
    n: int = DEFAULT_N          # |N_u| for NN
    kind: str = "base"          # base | P1R | U1R | UAR | head10
    m: int = 10                 # percentiles (P1R)
    popularity: str = "full"    # P1R: percentiles by full-data (train + test) or training counts

    def __str__(self) -> str:
        if self.kind == "base":
            s = f"{self.candidates}-{self.relevant}-{self.nonrelevant}"
            return s + (f"(n={self.n})" if self.nonrelevant == "NN" else "")
        if self.kind == "P1R":
            return f"P1R(m={self.m},n={self.n},popularity={self.popularity})"
        if self.kind == "U1R":
            return f"U1R(n={self.n})"
        if self.kind == "UAR":
            return "UAR" if self.candidates == "TI" else "AI-UAR"
        return f"head10(relevant=1R,n={self.n})" if self.relevant == "1R" else "head10(relevant=AR)"

    @property
    def sampled(self) -> bool:
        """True when non-relevant items are sampled (NN)."""
        return self.nonrelevant == "NN"

    @property
    def uniform(self) -> bool:
        """True for the designs that need a uniform test split (U1R, UAR, AI-UAR)."""
        return self.kind in ("U1R", "UAR")


def parse(spec: "str | Design") -> Design:
    """``"TI-1R-NN(n=99)"``, ``"AI-AR-AN"``, ``"P1R(m=10)"``, ``"U1R"``, ``"UAR"``, ``"AI-UAR"``, ``"head10"`` -> :class:`Design`.

    Unknown names raise :class:`~recmetrics.errors.UnknownNameError` naming the closest valid one.
    Names are case-insensitive; ``n`` defaults to 99 (|T_u| = 100, the thesis' 1R), ``m`` to 10 and
    P1R's ``popularity`` to ``full``; ``str()`` writes the design in its canonical spelling, which
    parses back to an equal :class:`Design`.

    >>> d = parse("ti-1r-nn(n=50)")
    >>> str(d), d.sampled, str(parse("p1r"))
    ('TI-1R-NN(n=50)', True, 'P1R(m=10,n=99,popularity=full)')
    >>> parse(str(d)) == d, str(parse("ai-uar")), parse("AI-UAR").candidates
    (True, 'AI-UAR', 'AI')
    """
    if isinstance(spec, Design):
        return spec
    if not isinstance(spec, str):
        raise InputError(f"a design is a string such as 'TI-1R-NN(n=99)', got {type(spec).__name__} {spec!r}")
    text = spec.strip()
    m = re.match(r"^([^()]*?)\s*(?:\((.*)\))?$", text)
    if not m:
        raise InputError(f"design {spec!r} must be written Name or Name(param=value,...)")
    name, params = m.group(1).strip(), m.group(2)
    base = _BASE_RE.match(name)
    if base:
        c, r, x = (g.upper() for g in base.groups())
        p = parse_params(params, {"n": DEFAULT_N} if x == "NN" else {}, spec, f"design {c}-{r}-{x}")
        d = Design(c, r, x, n=p.get("n", DEFAULT_N))
    else:
        key = _SPECIAL.find(name, known=NAMES)
        p = parse_params(params, _SPECIAL.get(key), spec, f"design {key}")
        if key == "P1R":
            pop = str(p.get("popularity", "full")).lower()
            if pop not in POPULARITY:
                raise InputError(f"design {spec!r}: popularity={pop!r} must be one of {', '.join(POPULARITY)} "
                                 "(the counts that sort the items into percentiles)")
            d = Design("TI", "1R", "NN", n=p.get("n", DEFAULT_N), kind="P1R", m=p.get("m", 10), popularity=pop)
        elif key == "U1R":
            d = Design("TI", "1R", "NN", n=p.get("n", DEFAULT_N), kind="U1R")
        elif key in ("UAR", "AI-UAR"):
            d = Design("AI" if key == "AI-UAR" else "TI", "AR", "AN", kind="UAR")
        else:
            rel = str(p.get("relevant", "1R")).upper()
            if rel not in ("AR", "1R"):
                raise InputError(f"head10: relevant={rel!r} must be 'AR' or '1R'")
            d = Design("TI", rel, "NN" if rel == "1R" else "AN", n=p.get("n", DEFAULT_N), kind="head10")
    if d.sampled and d.n < 1:
        raise InputError(f"design {spec!r}: n (the number of sampled non-relevant items) must be >= 1, got {d.n}")
    if d.kind == "P1R" and d.m < 1:
        raise InputError(f"design {spec!r}: m (the number of popularity percentiles) must be >= 1, got {d.m}")
    return d


__all__ = ["Design", "parse", "NAMES", "BASE_NAMES", "DEFAULT_N", "POPULARITY"]
