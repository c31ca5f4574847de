"""An answer's text as exact match compares it at question time (questions.jsonl) and as the
judge's grading settles a probe first: one function, so the two agree.

(harness/stats/scorers.py's `normalize_answer` is the report's, with Unicode punctuation.)
"""

from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalise(text: str) -> str:
    """SQuAD's answer normalisation, as LoCoMo's and LongMemEval's scripts use it: lower case,
    no punctuation, no articles, single spaces."""
    lowered = text.casefold().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", lowered).split())
