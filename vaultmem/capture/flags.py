"""Candidates checked against the vault's current facts: a duplicate or a contradiction.

A candidate fact duplicates a current fact of its entity that holds the same value after
normalising (`memory.values.normalise`), or (with an embedder) one whose "key value" means
nearly the same; it contradicts one with the same key and another value. Pure: the facts and
the vectors come in as values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultmem.capture.candidates import Candidate
from vaultmem.capture.note import Flag
from vaultmem.memory.values import key_id, normalise

if TYPE_CHECKING:
    import numpy as np

NEAR_DUPLICATE = 0.92  # cosine of "key value" texts that say the same thing
Embed = Callable[[Sequence[str]], "np.ndarray"]


@dataclass(frozen=True)
class CurrentFact:
    """A fact the vault holds now, where it lives."""

    entity: str  # the note's title (what `[[Entity]]` in a capture names)
    path: str
    key: str
    value: str
    block: str | None  # the fact line's block id, without "^"
    aliases: tuple[str, ...] = ()

    @property
    def target(self) -> str:
        """The link target of the fact: `Title#^block`, else the note."""
        return f"{self.entity}#^{self.block}" if self.block else self.entity


def _names(fact: CurrentFact) -> set[str]:
    return {n.casefold() for n in (fact.entity, *fact.aliases)}


def check(
    candidates: Sequence[Candidate],
    facts: Sequence[CurrentFact],
    embed: Embed | None = None,
    threshold: float = NEAR_DUPLICATE,
) -> dict[str, tuple[Flag, ...]]:
    """The flags of each fact candidate (by id) against the current facts of its entity."""
    by_entity: dict[str, list[CurrentFact]] = {}
    for fact in facts:
        for name in _names(fact):
            by_entity.setdefault(name, []).append(fact)
    out: dict[str, tuple[Flag, ...]] = {}
    unresolved: list[tuple[Candidate, list[CurrentFact]]] = []
    for c in candidates:
        if c.kind not in ("fact", "decision"):
            continue
        own = by_entity.get(c.entity.casefold(), [])
        if not own:
            continue
        flags: list[Flag] = []
        value = normalise(c.value)
        same_value = [f for f in own if normalise(f.value) == value]
        if same_value:
            flags.append(Flag("duplicates", same_value[0].target))
        elif c.kind == "fact":
            same_key = [f for f in own if key_id(f.key) == key_id(c.key)]
            flags += [Flag("contradicts", f.target, f.value) for f in same_key[:1]]
            if not same_key:
                unresolved.append((c, own))
        if flags:
            out[c.id] = tuple(flags)
    if embed is not None and unresolved:
        out.update(_near(unresolved, embed, threshold))
    return out


def _near(
    pairs: Sequence[tuple[Candidate, list[CurrentFact]]], embed: Embed, threshold: float
) -> dict[str, tuple[Flag, ...]]:
    """Near-identical meaning by vectors: "key value" of a candidate against its entity's."""
    import numpy as np  # only with an embedder: not on every CLI start

    texts = [f"{c.key} {c.value}" for c, _ in pairs]
    facts = [f for _, own in pairs for f in own]
    unique = list(dict.fromkeys(facts))
    vectors = np.asarray(embed(texts + [f"{f.key} {f.value}" for f in unique]), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)
    row = {f: len(texts) + i for i, f in enumerate(unique)}
    out: dict[str, tuple[Flag, ...]] = {}
    for i, (c, own) in enumerate(pairs):
        best = max(own, key=lambda f: float(vectors[i] @ vectors[row[f]]))
        if float(vectors[i] @ vectors[row[best]]) >= threshold:
            out[c.id] = (Flag("duplicates", best.target),)
    return out
