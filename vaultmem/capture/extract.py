"""The offline extractor: rules that find first-person statements worth remembering.

Each sentence a person says about themselves may become a candidate: a fact (identity,
possession, preference, plans, what they did), an open loop ("I'll …", "next step", "remind me
to"), or a decision ("we decided/agreed …"); dates are resolved against the transcript's own
date. Questions, reactions to the other speaker ("that's great, you …") and small talk are
left out. The session becomes one episode candidate. docs/capture.md lists the rules and
bench/capture_locomo.py measures them against LoCoMo's annotations.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from vaultmem.capture import spoken_dates
from vaultmem.capture.candidates import (
    DECISION_KEY,
    EPISODE_KEY,
    LOOP_KEY,
    Candidate,
    Kind,
    candidate_id,
    safe_name,
)
from vaultmem.capture.transcript import Transcript, Turn
from vaultmem.memory.errors import Refused
from vaultmem.memory.values import check_key

EXTRACTOR = "heuristic"
DEFAULT_USER_ENTITY = "Me"
MAX_VALUE_CHARS = 200
MIN_WORDS = 6  # a generic first-person statement shorter than this is small talk

_SENTENCE_RE = re.compile(r"(?<=[.!?…])[\"”')\]]*\s+|\n+")
_CLAUSE_RE = re.compile(r",?\s+(?:and|but|so|plus)\s+(?=(?:I|I'm|I’m|I've|I’ve|my|we)\b)")
_FIRST_PERSON_RE = re.compile(
    r"\b(?:I|I'm|I’m|I've|I’ve|I'd|I’d|I'll|I’ll|my|me|mine|myself|we|we're|we’re|we've|we’ve|"
    r"our|ours|us)\b",
    re.IGNORECASE,
)
_YOU_RE = re.compile(r"\b(?:you|your|you're|you’re|yours|you've|you’ve|ya)\b", re.IGNORECASE)
_REACTION_RE = re.compile(
    r"^(?:wow|oh|aw+|ah|omg|haha|lol|yeah|yes|yep|no|nope|ok|okay|sure|cool|nice|great|awesome|"
    r"congrats|congratulations|hey|hi|hello|thanks|thank you|that's|that is|that sounds|sounds|"
    r"glad|so glad|sorry|i'm (?:so )?(?:happy|glad|proud|sorry|thrilled)|i'm here|i agree|"
    r"i know|i bet|i can imagine|i understand|i can see|i'm sure|i totally|i can't wait|"
    r"i appreciate|i feel you|i hope|let me know|let's|i think so|good luck|take care|bye)\b",
    re.IGNORECASE,
)
# interjections before a statement ("Oh, and btw - I've been …"): dropped, not the statement
_LEAD_RE = re.compile(
    r"^(?:(?:oh|ah|wow|haha|hah|lol|yeah|yes|yep|yup|well|so|and|btw|by the way|also|plus|"
    r"anyway|actually|honestly|ok|okay|hey|hi|true|right|definitely|totally|absolutely)\b"
    r"[\s,!.:;-]*)+",
    re.IGNORECASE,
)
_HEDGE_RE = re.compile(
    r"\b(?:maybe|might|perhaps|probably|possibly|not sure|i think|i guess|kind of|sort of)\b",
    re.IGNORECASE,
)
_NEGATED_RE = re.compile(r"^\s*(?:n't|not|never|no longer)\b", re.IGNORECASE)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})

_I = r"\bI(?:\s+(?:really|just|also|finally|recently|actually|still|always|totally|now))?"
_IM = r"\bI(?:'m| am)\s+"
_V = r"\s+(?P<v>.+)"
_MY_VERBS = (
    r"is|are|was|were|has|have|had|loves?|loved|likes?|liked|got|gets|went|goes|made|makes|"
    r"took|takes|started|wants?|needs?|lives?|lived|works?|worked|plays?|played|enjoys?|"
    r"enjoyed|just|really|also|can|will|always|never"
)
_RULE_TABLE: list[tuple[Kind, str | None, str, float]] = [
    ("decision", DECISION_KEY,
     r"\b(?:we|I)(?:'ve| have)?\s+(?:finally\s+)?(?:decided|agreed|settled on|chose|opted)"
     r"(?:\s+(?:to|on|that|for))?" + _V, 0.8),
    ("decision", DECISION_KEY, r"\bthe decision (?:is|was)(?: to| that)?" + _V, 0.8),
    ("decision", DECISION_KEY, r"^let's go with" + _V, 0.6),
    ("loop", LOOP_KEY,
     r"\bnext steps?\s*(?:is|are|:|will be|would be)\s*(?:to\s+)?(?P<v>.+)", 0.75),
    ("loop", LOOP_KEY, r"\b(?:todo|to-do|to do)\s*:\s*(?P<v>.+)", 0.8),
    ("loop", LOOP_KEY, r"\bremind me to" + _V, 0.8),
    ("loop", LOOP_KEY, r"\b(?:don't|do not) (?:let me )?forget to" + _V, 0.7),
    ("loop", LOOP_KEY,
     r"\bI(?:'ll| will| promise to| am going to|'m going to|'m gonna| gonna)\s+"
     r"(?!be\b|have\b|miss\b|never\b|always\b|try\b|keep\b|let\b|see\b|think\b)(?P<v>.+)",
     0.65),
    ("loop", LOOP_KEY, r"\b(?:I|we)(?: really)? (?:need to|have to|must|should)" + _V, 0.55),
    ("fact", "name", r"\bmy name(?:'s| is)" + _V, 0.9),
    ("fact", "age", _IM + r"(?P<v>\d{1,3})(?: years old)?\b", 0.85),
    ("fact", "birthday", r"\bmy birthday is" + _V, 0.9),
    ("fact", None,
     r"\bmy (?P<k>(?:favou?rite|fave|best|current|new|old)\s+[a-z][a-z ]{1,24}?)"
     r"\s+(?:is|are|was|were)" + _V, 0.85),
    ("fact", None, r"\bmy (?P<k>[a-z][a-z ]{1,24}?)(?:'s| is| are)\s+(?:called|named)" + _V, 0.85),
    ("fact", "lives in", _I + r"\s+(?:live|am living|'m living|moved)\s+(?:in|to)" + _V, 0.85),
    ("fact", "from", _IM + r"(?:originally\s+)?from" + _V, 0.85),
    ("fact", "works as",
     _I + r"\s+(?:work|am working|'m working)\s+as\s+(?:an?\s+)?(?P<v>.+)", 0.85),
    ("fact", "works at", _I + r"\s+(?:work|am working|'m working)\s+(?:at|for|in)" + _V, 0.8),
    ("fact", "studies",
     _I + r"\s+(?:study|studied|am studying|'m studying|majored in|major in)" + _V, 0.8),
    ("fact", "allergic to", _IM + r"allergic to" + _V, 0.9),
    ("fact", "prefers", _I + r"\s+prefer" + _V, 0.8),
    ("fact", "dislikes",
     _I + r"\s+(?:hate|dislike|can't stand|don't like|do not like)" + _V, 0.75),
    ("fact", "likes",
     _I + r"\s+(?:love|like|enjoy|adore|am into|'m into|am a fan of|'m a fan of)" + _V, 0.7),
    ("fact", "plans",
     _IM + r"(?:planning|hoping|thinking about|looking forward to|aiming|about)\s+(?:to\s+)?"
     r"(?P<v>.+)", 0.7),
    ("fact", "plans", _I + r"\s+(?:plan|want|hope|intend)\s+to" + _V, 0.65),
    ("fact", "has",
     _I + r"\s+(?:have|'ve got|have got|own)\s+"
     r"(?P<v>(?:a|an|two|three|four|five|\d+|some|my own)\s+.+)", 0.65),
    ("fact", "is", _IM + r"(?P<v>(?:a|an)\s+.+)", 0.6),
    ("fact", "plans", r"^(?:gonna|going to|planning to|about to|hoping to)" + _V, 0.55),
    ("fact", None,
     r"\bmy (?P<k>[a-z]+(?: [a-z]+)?)\s+(?:is|are)\s+(?!so\b|very\b|really\b)(?P<v>.+)", 0.7),
    ("fact", None, r"\bmy (?P<k>[a-z]+(?: [a-z]+)?)\s+(?P<v>(?:" + _MY_VERBS + r")\b.{3,})", 0.5),
]  # fmt: skip
# (kind, key, pattern, confidence): the first pattern matching a sentence wins. A pattern's
# `v` group is the value; a key of None takes the `k` group.
_RULES = tuple(
    (kind, key, re.compile(pattern, re.IGNORECASE), confidence)
    for kind, key, pattern, confidence in _RULE_TABLE
)
# a generic first-person statement: "I went to a support group" → went to:: a support group
_GENERIC_RE = re.compile(
    r"\b(?:I|we)(?P<aux>'ve|'m|'d|'re| have| am| are| was| were)?\s+"
    r"(?:(?:really|just|also|finally|recently|actually|still|always|never|even|totally|been|"
    r"already|once|got to|started|kind of)\s+)*"
    r"(?P<verb>[a-z]{2,}(?:ed|ing)?)(?P<prep>\s+(?:to|in|at|on|for|with|about|into|up|out|by|"
    r"from|over|off|back))?\s+(?P<v>.{3,})",
    re.IGNORECASE,
)
_NOT_VERBS = frozenset(
    ["so", "really", "very", "not", "the", "a", "an", "too", "just", "glad", "happy", "sorry",
     "sure", "here", "there", "all", "it", "that", "this", "and", "but", "feel", "felt",
     "think", "thought", "know", "knew", "guess", "mean", "hope", "wish", "can", "could",
     "would", "should", "will", "might", "must", "don't", "do", "did", "does", "to", "last",
     "was", "were", "source"]
)  # fmt: skip
_PREPOSITIONS = frozenset(
    ["in", "on", "at", "into", "with", "for", "from", "off", "over", "up", "out"]
)
# "since we last spoke, …": a greeting, not the statement
_SINCE_RE = re.compile(
    r"^(?:(?:so much|a lot|lots|a lot of stuff|tons)\s+(?:has|'s)\s+happened\s+)?"
    r"(?:since|as)\s+(?:we|I)\s+last\s+(?:spoke|chatted|talked|saw each other|caught up|met)"
    r"[\s,;:!.-]*",
    re.IGNORECASE,
)
_OUTCOME_RULES = (
    ("failure", re.compile(r"\b(?:failed|didn't work|did not work|broke|gave up|no luck)\b", re.I)),
    (
        "success",
        re.compile(
            r"\b(?:it worked|works now|succeeded|fixed it|we did it|nailed it|solved)\b", re.I
        ),
    ),
    ("resolved", re.compile(r"\b(?:resolved|sorted (?:it )?out|settled it|closed it)\b", re.I)),
)


@dataclass(frozen=True)
class Extraction:
    """What a transcript proposes, before the gates."""

    candidates: tuple[Candidate, ...]
    extractor: str


def extract(
    transcript: Transcript,
    *,
    user_entity: str = DEFAULT_USER_ENTITY,
    assistant_entity: str | None = None,
    today: dt.date | None = None,
) -> Extraction:
    """Candidates from `transcript` by the rules; dates resolve against the transcript's own
    date (each session's), else `today`."""
    found: list[Candidate] = []
    seen: set[tuple[str, str, str, str]] = set()
    for turn in transcript.turns:
        entity = entity_of(turn, user_entity, assistant_entity)
        day = (turn.when.date() if turn.when else None) or today or dt.date.today()
        for candidate in _turn_candidates(turn, entity, day, transcript.sha256):
            key = (
                candidate.kind,
                candidate.entity.casefold(),
                candidate.key.casefold(),
                candidate.value.casefold(),
            )
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    episode = episode_candidate(transcript, found, user_entity, assistant_entity, today)
    if episode is not None:
        found.append(episode)
    return Extraction(tuple(found), EXTRACTOR)


def entity_of(turn: Turn, user_entity: str, assistant_entity: str | None) -> str:
    """The note a speaker's statements about themselves belong to."""
    if turn.role == "user":
        return safe_name(user_entity) or DEFAULT_USER_ENTITY
    if turn.role == "assistant":
        return safe_name(assistant_entity or "") or "Assistant"
    return safe_name(turn.speaker) or DEFAULT_USER_ENTITY


def sentences(text: str) -> list[str]:
    """A turn's sentences (and clauses joined by "and I …"), list markers trimmed."""
    out = []
    for part in _SENTENCE_RE.split(text):
        cleaned = re.sub(r"^\s*(?:[-*+>]|\d+[.)])\s+", "", part).strip()
        out += [c.strip() for c in _CLAUSE_RE.split(cleaned) if c.strip()]
    return out


def _turn_candidates(turn: Turn, entity: str, day: dt.date, salt: str) -> Iterator[Candidate]:
    for sentence in sentences(turn.text):
        found = statement(sentence, day, own=turn.role != "assistant")
        if found is None:
            continue
        kind, key, value, confidence, due = found
        yield Candidate(
            id=candidate_id(salt, kind, entity, key, value, turn.ref),
            kind=kind,
            entity=entity,
            key=key,
            value=value,
            quote=_quote(sentence),
            turn=turn.ref,
            confidence=confidence,
            due=due,
        )


def statement(
    sentence: str, day: dt.date, *, own: bool = True
) -> tuple[Kind, str, str, float, dt.date | None] | None:
    """(kind, key, value, confidence, due) for a sentence worth a candidate, else None.

    `own` is False for the assistant's turns: only decisions and next steps count there (an
    assistant's "I love that" is no fact about anyone)."""
    text = _LEAD_RE.sub("", sentence.translate(_APOSTROPHES).strip())
    if not text or text.endswith("?") or len(text) < 8:
        return None
    hedged = _HEDGE_RE.search(text) is not None
    for kind, key, pattern, confidence in _RULES:
        if not own and kind == "fact":
            continue
        m = pattern.search(text)
        if m is None or _NEGATED_RE.match(text[m.start("v") :]):
            continue
        if kind == "loop" and not own and not re.search(r"next step|todo|to-do|remind", text, re.I):
            continue
        rule_key = key if key is not None else _key(m["k"])
        value, due = _value(m["v"], day, future=kind != "fact", in_value=kind != "loop")
        if rule_key is None or len(value) < 2 or not _usable_key(rule_key):
            continue
        return (
            kind,
            rule_key,
            value,
            _confidence(confidence, hedged),
            due if kind == "loop" else None,
        )
    if not own:
        return None
    first = _FIRST_PERSON_RE.search(text)
    if first is None or _REACTION_RE.match(text) or len(text.split()) < MIN_WORDS:
        return None
    you = _YOU_RE.search(text)
    if you is not None and you.start() < first.start():  # about the other speaker
        return None
    m = _GENERIC_RE.search(_SINCE_RE.sub("", text))
    if m is None or m["verb"].lower() in _NOT_VERBS:
        return None
    verb = m["verb"].lower()
    if verb in _PREPOSITIONS:  # "I'm on the hunt for …"
        key = f"is {verb}"
    elif verb in ("gonna", "going"):
        key = "plans"
    else:
        key = (verb + (" " + m["prep"].strip().lower() if m["prep"] else "")).strip()
    value, _ = _value(m["v"], day, future=False, in_value=True)
    if len(value) < 3 or not _usable_key(key):
        return None
    return "fact", key, value, _confidence(0.5, hedged), None


def _usable_key(key: str) -> bool:
    """Whether `fact set` takes the key (`was` and `source` hold a fact's history)."""
    try:
        check_key(key)
    except Refused:
        return False
    return True


def _key(raw: str | None) -> str | None:
    if raw is None:
        return None
    key = " ".join(raw.lower().split())
    return key if re.fullmatch(r"[a-z][a-z ]*[a-z]", key) else None


def _confidence(base: float, hedged: bool) -> float:
    return round(max(0.05, base - 0.2) if hedged else base, 2)


def _value(raw: str, day: dt.date, *, future: bool, in_value: bool) -> tuple[str, dt.date | None]:
    """The value of a statement: trailing punctuation and filler gone, a date phrase replaced
    by the day it means (`yesterday` in a chat of 8 May 2023 is 2023-05-07)."""
    text = raw.strip()
    spoken = spoken_dates.find(text, day, future=future)
    due: dt.date | None = None
    if spoken is not None:
        start, end = spoken.at
        before, after = text[:start].rstrip(" ,"), text[end:].lstrip(" ,")
        text = f"{before} {after}".strip() if after else before
        due = spoken.start if spoken.start == spoken.end else spoken.end
    text = _trim(text)
    if spoken is not None and in_value:
        text = f"{text} ({spoken.text})" if text else spoken.text
    text = " ".join(text.replace("::", ":").replace("%%", "%").split())
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"
    return text, due


def _trim(text: str) -> str:
    text = re.sub(r"\s*(?:[!.…,;:]+|\s-+)\s*$", "", text)
    return re.sub(
        r"\s+(?:and|but|so|because|though|too|as well|lol|haha|now|right now)$",
        "",
        text,
        flags=re.I,
    )


def _quote(sentence: str) -> str:
    quote = " ".join(sentence.split())
    return quote if len(quote) <= 400 else quote[:400].rsplit(" ", 1)[0] + " …"


def episode_candidate(
    transcript: Transcript,
    found: Iterable[Candidate],
    user_entity: str = DEFAULT_USER_ENTITY,
    assistant_entity: str | None = None,
    today: dt.date | None = None,
) -> Candidate | None:
    """One episode for the session: its date, the speakers and entities, an outcome when the
    transcript says one, and a summary made of its strongest statements."""
    turns = transcript.turns
    if not turns:
        return None
    people = list(dict.fromkeys(entity_of(t, user_entity, assistant_entity) for t in turns))
    candidates = [c for c in found if c.kind != "episode"]
    entities = tuple(dict.fromkeys([*people, *(c.entity for c in candidates)]))
    outcome = "ongoing"
    for name, rule in _OUTCOME_RULES:
        if any(rule.search(t.text) for t in turns):
            outcome = name
            break
    strongest = sorted(candidates, key=lambda c: (-c.confidence, turns_index(turns, c.turn)))[:3]
    title = transcript.title or (
        f"Conversation of {' and '.join(people[:3])}"
        if len(people) > 1
        else f"Notes of {people[0]}"
    )
    summary_parts = [
        f"{c.entity}: {c.key} {c.value}"
        for c in sorted(strongest, key=lambda c: turns_index(turns, c.turn))
    ]
    summary = "; ".join(summary_parts) if summary_parts else _quote(turns[0].text)
    when = next((t.when for t in turns if t.when is not None), None)
    if when is None and today is not None:
        when = dt.datetime.combine(today, dt.time())
    title = safe_name(title) or "Conversation"
    value = (
        summary if len(summary) <= MAX_VALUE_CHARS * 2 else summary[: MAX_VALUE_CHARS * 2] + " …"
    )
    return Candidate(
        id=candidate_id(transcript.sha256, "episode", title, EPISODE_KEY, value, turns[0].ref),
        kind="episode",
        entity=title,
        key=EPISODE_KEY,
        value=value,
        quote=_quote(turns[0].text),
        turn=turns[0].ref,
        confidence=0.6,
        when=when,
        outcome=outcome,
        entities=entities,
    )


def turns_index(turns: tuple[Turn, ...], ref: str) -> int:
    return next((i for i, t in enumerate(turns) if t.ref == ref), len(turns))
