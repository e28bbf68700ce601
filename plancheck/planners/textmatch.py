"""A small TF-IDF matcher between task text and the toolset's own descriptions.

Documents are built only from what the toolset says about its tools (names, categories,
descriptions, parameter names and docs); nothing is learned from gold plans.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_WORD = re.compile(r"[a-z][a-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "i", "in",
    "into", "is", "it", "its", "of", "on", "or", "our", "please", "provide", "that", "the",
    "their", "them", "then", "these", "this", "to", "use", "using", "was", "we", "were",
    "will", "with", "you", "your", "can", "also", "any", "all", "each", "data", "path",
    "paths", "file", "files", "located", "following", "stored", "image", "images",
})


def stem(word: str) -> str:
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def tokens(text: str) -> list[str]:
    spaced = _CAMEL.sub(" ", text).replace("_", " ").replace("-", " ").lower()
    return [stem(w) for w in _WORD.findall(spaced) if w not in STOPWORDS and len(w) > 1]


@dataclass(frozen=True, slots=True)
class Vector:
    weights: Mapping[str, float]
    norm: float

    def cosine(self, other: Vector) -> float:
        if not self.norm or not other.norm:
            return 0.0
        small, large = (self, other) if len(self.weights) < len(other.weights) else (other, self)
        dot = sum(w * large.weights.get(t, 0.0) for t, w in small.weights.items())
        return dot / (self.norm * other.norm)


class TfIdf:
    """Inverse document frequencies fitted on a set of documents."""

    def __init__(self, documents: Iterable[list[str]]) -> None:
        docs = list(documents)
        frequency: Counter[str] = Counter()
        for doc in docs:
            frequency.update(set(doc))
        count = max(len(docs), 1)
        self.idf = {t: math.log((1 + count) / (1 + n)) + 1.0 for t, n in frequency.items()}
        self.unseen = math.log(1 + count) + 1.0

    def vector(self, words: Iterable[str]) -> Vector:
        counts = Counter(words)
        weights = {t: (1 + math.log(n)) * self.idf.get(t, self.unseen) for t, n in counts.items()}
        return Vector(weights, math.sqrt(sum(w * w for w in weights.values())))
