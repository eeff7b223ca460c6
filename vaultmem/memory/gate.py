"""The memory gate: does a message need the person's memory, or can it be answered without?

Offline rules weigh what a message asks (docs/memory.md, "The gate"):

  for memory   a continuation cue ("where did we leave off"), a note the vault knows named in
               the request, questions about the person's or the agent's own past ("when did I",
               "what did you recommend", "what did we decide"), "my …" in a question of fact,
               personal time ("last week" beside I/we/my), asking for what suits *me*;
  against      greetings and thanks, a request that carries its own material (translate,
               rewrite, fix *this*, pasted text or code), arithmetic, general knowledge,
               how-to and creative requests with nothing personal in them.

A clear "against" decides at once: no search is run (the message is spared one). A clear "for"
still searches, for the context. What is neither is decided by the best search hit's strength
(`best_hit`, 0..1: see `hit_strength`), and with `best_hit` known a memory question whose best
hit is weak and names no known note is "nothing-stored". `parse_llm_answer` reads a model's
verdict for `--llm`, refusing anything it cannot read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from vaultmem.memory.continuation import cue_of, weak_cue
from vaultmem.memory.errors import Refused
from vaultmem.memory.mentions import EntityMatch, Names, index_of, overlap, topic_words

Verdict = Literal["needs-memory", "no-memory", "nothing-stored"]
EXIT_CODES: dict[Verdict, int] = {"needs-memory": 0, "no-memory": 2, "nothing-stored": 3}

LONG_MESSAGE = 4000  # past this, the gate reads the head and the tail only
HEAD_TAIL = 1500
NEEDS = 2.0  # score at or above which a message needs memory
HIT_STRONG = 0.6  # best hit strength that tips an undecided message to needs-memory
HIT_WEAK = 0.34  # below this, a memory question with no known note finds nothing stored


@dataclass(frozen=True)
class GateDecision:
    verdict: Verdict
    search: bool  # the decision (or its context) needs a search; False: spared one
    score: float
    reasons: tuple[str, ...]
    entities: tuple[EntityMatch, ...]
    query: str  # what to search for

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "search": self.search,
            "score": self.score,
            "reasons": list(self.reasons),
            "entities": [{"path": m.path, "name": m.name, "score": m.score} for m in self.entities],
            "query": self.query,
        }


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_GREETING = _r(
    r"^(?:hi+|hello+|hey+(?: there)?|yo|hiya|howdy|good (?:morning|afternoon|evening|night|day)"
    r"|thanks?(?: you)?(?: so much| a lot| very much)?|thx|ty|cheers|ok(?:ay)?|cool|great|nice|"
    r"perfect|awesome|got it|sounds good|bye(?: for now)?|see you|goodbye|lol|haha+|wow|"
    r"how are you(?: doing)?(?: today)?|what'?s up|sup|appreciate it|that worked|"
    r"that'?s (?:great|helpful|perfect|it)|no worries|sure|yes|no|yep|nope|bonjour|hallo|hola|"
    r"ciao|merci|danke|gracias)"
    r"(?:[\s,.!?:;]+(?:hi+|hello|there|so much|a lot|again|man|mate|friend|buddy|everyone|"
    r"guys|that worked|appreciate it|it worked|that's great|today|for now|cool|great|nice|"
    r"lol|thanks|thank you|ok|good|very much|that|worked))*[\s.!?:)(]*$"
)
_GREETING_LEAD = _r(
    r"^(?:hi+|hello|hey(?: there)?|good (?:morning|afternoon|evening)|ok(?:ay)?|"
    r"thanks?(?: you)?)[\s,!.:-]+(?:(?:quick|a|one) question[\s,:!.-]*)?"
)
_TRANSFORM = _r(
    r"^\s*(?:can you |could you |please |pls |help me )*(?:translate|traduis|traduce|traduzca|"
    r"übersetze|rewrite|re-write|rephrase|paraphrase|reword|summari[sz]e|proofread|proof-read|"
    r"correct|fix the (?:grammar|spelling|typos)|fix|edit|shorten|"
    r"make (?:this|it|the)(?: \w+)? (?:shorter|longer|friendlier|more \w+|sound \w+)|"
    r"improve|polish|simplify|convert|turn (?:this|these)|format|reformat|tidy|clean up|"
    r"explain this|review this|what does this (?:code|do)|"
    r"write unit tests for|add comments to|refactor)\b"
)
_PAYLOAD_MARK = _r(r"(?::\s*\S|[\"“«'`]|\n)")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»|`[^`]*`|```.*?```", re.DOTALL)
_CODE = _r(
    r"```|`[^`]+`|\b(?:python|javascript|typescript|java|rust|golang|c\+\+|c#|sql|regex|bash|"
    r"shell|git|docker(?:file)?|kubernetes|css|html|json|yaml|flexbox|numpy|pandas|react|node|"
    r"npm|pip|curl|api|http|tcp|udp|function|variable|compile|exception|stack trace|"
    r"traceback|keyerror|typeerror|null pointer|big o|algorithm|sqlalchemy|flask|django|"
    r"my code|this code|the code|script|compiler|syntax error|segfault)\b|"
    r"[{};]\s*$|\bdef \w+\(|=>|\bimport \w+"
)
_ARITHMETIC = _r(
    r"^[\s\d.,+\-*/^%=()x×÷?]+$|\bconvert \d|\b\d+(?:\.\d+)?\s*%\s*of\b|\bsquare root\b|"
    r"\b(?:what(?:'s| is)) \d+(?:\.\d+)?\s*[-+*/x×÷^]\s*\d|\bhow many \w+ (?:in|are in) an? \w+|"
    r"\b\d+(?:\.\d+)?\s*(?:fahrenheit|celsius|miles?|km|kg|lbs?|pounds?|ounces?|inches|feet|"
    r"usd|eur|gbp|dollars?|euros?)\b.{0,20}\b(?:in|to|into)\b|\bcompound interest\b|"
    r"\baverage speed\b|\bsplit an? .*\bbill\b|\bpower of \d"
)
_KNOWLEDGE = _r(
    r"^(?:hi[,!]?\s*)?(?:what (?:is|are|was|were) (?:a|an|the)\b(?! \w+ (?:i|we|you|my|our)\b)|"
    r"what(?:'s| is) the (?:difference|capital|population|tallest|largest|boiling|"
    r"meaning|formula|plural|origin|history|best way|time complexity)|what causes|"
    r"what does \S+ (?:mean|measure|stand for)|what (?:happened|did) (?:at|in|to) the"
    r"(?! \w+ (?:i|we|you)\b)|who (?:wrote|painted|invented|discovered|won|is|was|were|"
    r"directed|composed|founded)\b|how (?:does|do|did) (?:a|an|the)?\s*[\w -]+ work|"
    r"why (?:is|are|do|does|did)\b|explain\b|define\b|is (?:a|an) \w+ (?:a|an)\b|"
    r"how (?:many|much|long|far|old|big|tall) (?:\w+ ){0,2}(?:is|are|does|do|in|on)\b"
    r"(?![^?]*\b(?:i|we|my|our|me|us)\b)|(?:known|famous) for\b|"
    r"when (?:did|was|were|is) (?:the )?(?-i:[A-Z])|what year\b|which (?:country|planet|city|"
    r"language)|how did (?:the )?(?-i:[A-Z])[\w ]+ (?:fall|start|end|begin|go)\b|"
    r"tell me about (?:the )?(?-i:[A-Z])|what (?:did|does) (?-i:[A-Z][a-z]+) say about)"
)
_LANGUAGE = _r(
    r"\b(?:(?:right|correct|proper|best) way to say|how (?:do|would|should) (?:you|i|we) say|"
    r"what(?:'s| is) the (?:\w+ )?word for|how do you spell|how (?:is|do you) pronounce)\b"
)
_HOWTO = _r(
    r"^(?:how (?:do|can|should|would) (?:i|you|we|one)\b(?! (?:usually|normally))|how to\b|"
    r"steps to\b|what(?:'s| is) (?:the )?(?:best|easiest|right|a good) way to\b|"
    r"in (?:python|git|javascript|rust|sql|bash|excel)\b|"
    r"i'm (?:learning|trying to learn)\b)"
)
_CREATIVE = _r(
    r"^(?:write|draft|compose|create|generate|make|give me|tell me|suggest|recommend|brainstorm|"
    r"plan|list|name|come up with)\b(?:\s+(?:me|us))?\s+(?:a|an|some|\d+|three|five|ten|a few|"
    r"the best|good|ideas?|titles?|names?|jokes?|poems?|stor(?:y|ies)|recipes?|classic|"
    r"limericks?|haikus?|\d+-day)\b"
)
_PERSONAL = _r(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b")
_MEMORY_WORDS = _r(
    r"\b(?:remember|remind me|recall|you (?:told|said|recommended|suggested|mentioned|gave|"
    r"showed|sent|provided|listed|promised|helped)|did you (?:tell|recommend|suggest|mention|"
    r"say|give|show|send|provide|list)|(?:our|the) (?:previous|last|earlier|past) "
    r"(?:conversation|chat|discussion|session)|we (?:discussed|talked|spoke|chatted|covered)|"
    r"(?:i|we) (?:told|mentioned|said) (?:you|to you|earlier)|as (?:i|we) (?:said|discussed)|"
    r"earlier you|you and i|as before|like (?:last time|before)|"
    r"what (?:fixed|solved|worked for) (?:it|that|this) (?:then|last time|before)|"
    r"(?:recap|summari[sz]e|search|check|look (?:in|through)|in) (?:my|our) "
    r"(?:notes|journal|vault|log|diary|records|files)|my notes)\b"
)
_OWN_PAST = _r(
    r"\b(?:did|have|had|was|were|do|am) (?:i|we)\b(?! (?:need|have to|should|want)\b)|"
    r"\b(?:i|we) (?:went|bought|got|visited|met|started|finished|booked|ordered|paid|spent|"
    r"made|took|tried|decided|agreed|planned|attended|watched|read|saw|used|picked|moved|"
    r"received|sold|lost|won|ran|did|had|was|were|been|have been|'ve been|signed up|joined|"
    r"mentioned|named|set up|upgraded|adopted|acquired|completed|learned|chose|called|"
    r"promised|stopped|left)\b|"
    r"\bdid (?:it|they|he|she|you|that) (?:\w+ )?(?:take|cost) (?:me|us)\b"
)
_FACT_ABOUT_ME = _r(
    r"^(?:so |and |ok |hey )?(?:what|what's|when|when's|where|where's|who|who's|whom|whose|"
    r"which|how (?:many|much|long|often|old)|is|are|was|were|do|does|did|has|have)\b"
    r"(?![^?]*\b(?:should|could|can|would) (?:i|we)\b)[^?]*\b(?:my|our|mine|ours|i|we)\b"
)
_ADVICE_ME = _r(
    r"\b(?:recommend|suggest|suggestions?|ideas?|tips?|advice|should i|what can i|could i|"
    r"can you help me (?:find|pick|choose|plan)|any (?:recommendations|suggestions))\b"
)
_FOR_ME = _r(
    r"\b(?:for me|suit me|interest me|i'm|i am|i've|i have|i'd|i would|i want|i need|i like|"
    r"i love|i enjoy|my|i should|i could|i can|i'll|i will|i might|i may)\b"
)
_PERSONAL_TIME = _r(
    r"\b(?:last (?:week|month|year|time|summer|winter|spring|autumn|fall|night|weekend|monday|"
    r"tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|\d+ (?:days?|weeks?|months?"
    r"|years?) ago|a (?:few|couple of) (?:days|weeks|months) ago|earlier (?:today|this week)|"
    r"recently|previous(?:ly)?|this (?:week|month|year|morning)|so far|in (?:january|february|"
    r"march|april|may|june|july|august|september|october|november|december))\b"
)
_THAT_THING = _r(
    r"\b(?:that|the) (?:\w+ ){0,3}(?:i|we|you|he|she|they|(?-i:[A-Z][a-z]+)) (?:liked|loved|"
    r"mentioned|recommended|suggested|talked about|bought|booked|used|sent|wrote|picked|"
    r"chose|found|shared|made)\b"
)
_DEICTIC = _r(r"\b(?:the|that|our|my) (?:\w+ ){0,2}(?:again|so far|anymore)\b")
_FOREIGN_CUES = _r(
    r"\b(?:wo waren wir|stehen geblieben|haben wir|habe ich|hatte ich|mein(?:e|en|em)?|"
    r"unser(?:e|en)?|"
    r"en qué quedamos|dónde lo dejamos|qué dije|mi (?:\w+ )?(?:de|del)|on en était|"
    r"où en (?:étions|sommes)|avons-nous|ai-je|j'ai (?:dit|parlé)|notre|nos)\b"
)


def _payload_split(text: str) -> tuple[str, str]:
    """(request, payload): quoted text, code, and what follows a `verb:` are material the
    person gave, not words about their memory."""
    payload = " ".join(m.group(0) for m in _QUOTED.finditer(text))
    request = _QUOTED.sub(" ", text)
    if _TRANSFORM.search(request) and ":" in request:
        head, _, tail = request.partition(":")
        if len(head.split()) <= 12:
            request, payload = head, payload + " " + tail
    if "\n" in request:
        first, _, rest = request.partition("\n")
        if len(rest) > 40 and first.strip():
            request, payload = first, payload + " " + rest
    return request.strip(), payload.strip()


def _read(message: str) -> str:
    if len(message) <= LONG_MESSAGE:
        return message
    # joined by a space: a line break would make the tail payload (`_payload_split`), and the
    # tail is where a question after a long paste stands
    return message[:HEAD_TAIL] + " … " + message[-HEAD_TAIL:]


def classify(
    message: str,
    names: Names = (),
    *,
    best_hit: float | None = None,
) -> GateDecision:
    """The gate's verdict for `message` (see the module doc). `names` are the notes the vault
    knows; `best_hit` is the strength of the best search hit, None when no search ran."""
    if not message.strip():
        raise Refused("empty message: give the gate the message to classify")
    text = " ".join(_read(message).replace("’", "'").split(" "))
    request, payload = _payload_split(text)
    stripped = _GREETING_LEAD.sub("", request).strip() or request
    reasons: list[str] = []
    plus = 0.0
    minus = 0.0
    definite_no = False

    if _GREETING.match(request.strip()):
        return _decide("no-memory", False, -3.0, ("a greeting or thanks",), (), "")

    named = index_of(names).find(stripped)
    matches = [m for m in named if m.score == 1.0 and _specific(stripped, m.name)]
    partial = [m for m in named if 0.5 <= m.score < 1.0]
    cue = cue_of(stripped)
    weak = weak_cue(stripped)

    if cue is not None:
        plus += 3
        reasons.append(f"continuation cue {cue[0]!r}")
    if matches:
        plus += 3
        reasons.append("names " + ", ".join(repr(m.name) for m in matches[:3]))
    elif partial and (weak or cue):
        plus += 2
        reasons.append(f"partly names {partial[0].name!r} beside a work verb")
    if m := _MEMORY_WORDS.search(stripped):
        plus += 3
        reasons.append(f"asks about what was said before ({m.group(0)!r})")
    if m := _OWN_PAST.search(stripped):
        plus += 2
        reasons.append(f"about the person's own past ({m.group(0)!r})")
    if _FACT_ABOUT_ME.search(stripped) and not _HOWTO.search(stripped):
        plus += 2
        reasons.append("a question of fact about the person")
    if _PERSONAL.search(stripped) and (m := _PERSONAL_TIME.search(stripped)):
        plus += 1.5
        reasons.append(f"personal time {m.group(0)!r}")
    if _ADVICE_ME.search(stripped) and _FOR_ME.search(stripped):
        plus += 2
        reasons.append("asks for what suits the person")
    if m := _THAT_THING.search(stripped):
        plus += 2
        reasons.append(f"points at something shared before ({m.group(0)!r})")
    if _DEICTIC.search(stripped) and "?" in stripped:
        plus += 1
        reasons.append("refers back to a known thing")
    if m := _FOREIGN_CUES.search(stripped):
        plus += 2
        reasons.append(f"personal or continuation words ({m.group(0)!r})")

    if payload and _TRANSFORM.search(stripped):
        minus += 4
        definite_no = True
        reasons.append("a request on material it carries (translate, rewrite, fix …)")
    elif _TRANSFORM.search(stripped) and _PAYLOAD_MARK.search(text):
        minus += 3
        definite_no = True
        reasons.append("a request on material it carries")
    if _LANGUAGE.search(stripped):
        minus += 3
        definite_no = True
        reasons.append("a question about words or a language")
    if _ARITHMETIC.search(stripped):
        minus += 3
        definite_no = True
        reasons.append("arithmetic or a unit conversion")
    if _CODE.search(text) and not matches:
        minus += 2
        reasons.append("programming help")
    if _KNOWLEDGE.search(stripped) and not matches:
        minus += 2
        reasons.append("a general-knowledge question")
    if _HOWTO.search(stripped):
        minus += 2
        reasons.append("a how-to question")
    if _CREATIVE.search(stripped) and not matches:
        minus += 2
        reasons.append("a creative or generic request")

    score = round(plus - minus, 2)
    query = " ".join(topic_words(stripped)) or stripped
    entities = tuple(matches or partial)
    if definite_no and plus < 3:
        return _decide("no-memory", False, score, tuple(reasons), entities, query)
    if score >= NEEDS:
        verdict: Verdict = "needs-memory"
        if best_hit is not None and best_hit < HIT_WEAK and not matches:
            verdict = "nothing-stored"
            reasons.append(f"best hit strength {best_hit:.2f} < {HIT_WEAK}")
        return _decide(verdict, True, score, tuple(reasons), entities, query)
    if minus > 0 and score <= 0:
        return _decide("no-memory", False, score, tuple(reasons), entities, query)
    # undecided: what the vault holds decides
    if best_hit is not None and best_hit >= HIT_STRONG:
        reasons.append(f"best hit strength {best_hit:.2f} >= {HIT_STRONG}")
        return _decide("needs-memory", True, score, tuple(reasons), entities, query)
    reasons.append("nothing personal in it" if best_hit is None else "no strong hit")
    return _decide("no-memory", True, score, tuple(reasons), entities, query)


def _decide(
    verdict: Verdict,
    search: bool,
    score: float,
    reasons: tuple[str, ...],
    entities: tuple[EntityMatch, ...],
    query: str,
) -> GateDecision:
    return GateDecision(verdict, search, score, reasons, entities, query)


def _specific(message: str, name: str) -> bool:
    """A named note used as that very thing: not "a heat pump" (any heat pump), not "Tom
    Hanks" when the note is "Tom"."""
    pattern = re.compile(rf"(\b\w+\s+)?\b{re.escape(name)}\b((?:'s)?\s+\S+)?", re.IGNORECASE)
    for m in pattern.finditer(message):
        before = (m.group(1) or "").strip().lower()
        after = (m.group(2) or "").strip()
        if before in ("a", "an"):
            continue
        nxt = re.match(r"[^\W\d_]*", after.removeprefix("'s").strip())
        word = nxt.group(0) if nxt else ""
        if word[:1].isupper() and not after.startswith("'s") and not message.startswith(word):
            continue  # "Tom Hanks": another person who shares the first name
        return True
    return False


def hit_strength(message: str, hit_text: str) -> float:
    """How well a hit (its title, heading and text) covers the message's topic words, 0..1."""
    return overlap(message, hit_text)


# --------------------------------------------------------------------------- --llm

LLM_PROMPT = """\
You decide whether an assistant needs the user's long-term memory (their notes: people,
projects, past conversations, decisions, preferences) to answer a message well.

Message:
<<<
{message}
>>>

Answer with exactly one word: MEMORY if the answer depends on something the user or the
assistant stored earlier, NONE if the message can be answered from itself and general
knowledge."""

_WORD_MEMORY = {"memory", "needs-memory", "needs_memory", "yes", "true"}
_WORD_NONE = {"none", "no-memory", "no_memory", "no", "false"}


def parse_llm_answer(answer: str) -> Literal["needs-memory", "no-memory"] | None:
    """A model's verdict, or None when its answer is not clearly one (the caller then falls
    back to the offline gate and says so). Reasoning in <think> blocks is ignored; JSON
    {"memory": true} and {"verdict": "none"} are read too."""
    text = re.sub(r"<think>.*?(</think>|$)", "", answer, flags=re.DOTALL | re.IGNORECASE)
    text = text.strip().strip("`").strip()
    if not text or len(text) > 400:
        return None
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        for key in ("memory", "needs_memory", "needsMemory"):
            if isinstance(data.get(key), bool):
                return "needs-memory" if data[key] else "no-memory"
        value = data.get("verdict") or data.get("answer")
        text = value if isinstance(value, str) else ""
    words = re.findall(r"[a-z_\-]+", text.lower())
    said_memory = any(w in _WORD_MEMORY for w in words)
    said_none = any(w in _WORD_NONE for w in words)
    if said_memory == said_none:
        return None  # both or neither: not an answer
    if len(words) > 12:
        return None  # prose, not the one word asked for
    return "needs-memory" if said_memory else "no-memory"
