"""Obsidian's search operators in a query: the words meaning search ranks, and the filters a
note must pass.

    "exact phrase"   the note holds the phrase          -word, -"phrase", -tag:#x   it does not
    a OR b           either (terms side by side: both)   ( … )                      grouping
    tag:#x           tagged x (or x/…)                   path:folder    its path holds "folder"
    file:name        its file name holds "name"          content:word   its text holds the word
    section:(a b)    one section holds a and b           line:(a b)     one line holds a and b
    task:(a b)       a task holds a and b                task-todo: / task-done:   open / done

Operator names are case-insensitive (`TAG:` is `tag:`), as in Obsidian. Plain words are not
filters: they are what hybrid search ranks by (with the words of the phrases and of section:,
line:, task: and content:), so `tag:#recipe quick dinner` ranks the notes tagged recipe by
"quick dinner". A word is a filter only inside a group that has operators in it
(`(soup OR tag:#stew)`). Pure: parsing only; vaultmem.search evaluates the filters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vaultmem.errors import UsageError

OPERATORS = frozenset(
    ["tag", "path", "file", "content", "section", "line", "task", "task-todo", "task-done"]
)
# operators whose value is words to find (they also join the words search ranks by)
TEXT_OPERATORS = frozenset(["content", "section", "line", "task", "task-todo", "task-done"])
MAX_WORDS = 64  # words ranked; a longer query is cut, with a notice
_OPERATOR_RE = re.compile(r"([A-Za-z][A-Za-z-]*):")
_WORD_RE = re.compile(r"\w+")


class QueryError(UsageError):
    """A malformed query, with the place of the problem shown under it."""

    def __init__(self, query: str, at: int, problem: str) -> None:
        start = max(0, at - 40)
        end = min(len(query), at + 40)
        shown = ("…" if start else "") + query[start:end] + ("…" if end < len(query) else "")
        caret = " " * (at - start + (1 if start else 0)) + "^"
        super().__init__(f"{problem} (at character {at + 1}):\n  {shown}\n  {caret}")
        self.at = at
        self.problem = problem


@dataclass(frozen=True)
class Term:
    """One thing to look for: a word, a phrase or an operator with its value."""

    op: str  # "word", "phrase", or one of OPERATORS
    value: str  # the word, phrase, tag (no "#"), path or file fragment, or the words inside
    at: int = 0  # where it starts in the query


@dataclass(frozen=True)
class Not:
    node: Node


@dataclass(frozen=True)
class AllOf:
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class AnyOf:
    nodes: tuple[Node, ...]


Node = Term | Not | AllOf | AnyOf


@dataclass(frozen=True)
class Parsed:
    text: str  # the words to rank by
    filter: Node | None  # what a note must pass (None: every note)
    notices: tuple[str, ...] = field(default=())
    typed: str = ""  # the plain words as typed ("2026-03-01" whole), for the date router


def filters(node: Node) -> bool:
    """Whether a node says anything about which notes pass (plain words only rank)."""
    if isinstance(node, Term):
        return node.op != "word"
    if isinstance(node, Not):
        return True
    return any(filters(n) for n in node.nodes)


def only_excludes(node: Node | None) -> bool:
    """A filter that only says what to leave out (`-draft -tag:#old`)."""
    if node is None:
        return False
    if isinstance(node, Not):
        return True
    if isinstance(node, AllOf):
        return all(isinstance(n, Not) or not filters(n) for n in node.nodes) and any(
            isinstance(n, Not) for n in node.nodes
        )
    return False


def parse(query: str) -> Parsed:
    """Split a query into ranking words and a filter; QueryError points at a malformed part."""
    parser = _Parser(query)
    tree = parser.expression(top=True)
    words: list[str] = []
    _collect_words(tree, words, negated=False)
    notices = parser.notices
    if len(words) > MAX_WORDS:
        notices.append(f"only the first {MAX_WORDS} words of the query are searched")
        words = words[:MAX_WORDS]
    kept = _prune(tree)
    typed = " ".join(_typed_words(tree))
    return Parsed(" ".join(words), kept, tuple(dict.fromkeys(notices)), typed)


def loosened(query: str) -> tuple[str, tuple[str, ...]] | None:
    """The query with its exact phrases as plain words, and those phrases, for a query of only
    words and phrases (`what did she say about "nothing is impossible"`); None for any other
    (no phrase, an operator, a negation, a group, or a malformed query). A search whose
    phrases no note holds answers with this instead, and says so (Vault.search)."""
    try:
        tree = _Parser(query).expression(top=True)
    except QueryError:
        return None
    nodes = tree.nodes if isinstance(tree, AllOf) else (tree,)
    if not all(isinstance(n, Term) and n.op in ("word", "phrase") for n in nodes):
        return None
    phrases = [n for n in nodes if isinstance(n, Term) and n.op == "phrase"]
    if not phrases:
        return None
    loose = query
    for term in reversed(phrases):  # from the end: each phrase's place stays where it was
        end = term.at + len(term.value) + 2  # the quotes around it
        loose = f"{loose[: term.at]} {term.value} {loose[end:]}"
    return loose, tuple(t.value for t in phrases)


def _typed_words(node: Node) -> list[str]:
    """The top level's words, plain ones as typed: what dates are read from (and what is
    left of them, the words to rank by)."""
    if isinstance(node, Term):
        if node.op == "word":
            return [node.value]
        return _WORD_RE.findall(node.value) if node.op == "phrase" else []
    if isinstance(node, AllOf):
        return [w for n in node.nodes for w in _typed_words(n)]
    return []


def _collect_words(node: Node, out: list[str], negated: bool) -> None:
    if isinstance(node, Term):
        if not negated and (node.op in ("word", "phrase") or node.op in TEXT_OPERATORS):
            out.extend(_WORD_RE.findall(node.value))
    elif isinstance(node, Not):
        _collect_words(node.node, out, not negated)
    else:
        for n in node.nodes:
            _collect_words(n, out, negated)


def _prune(node: Node) -> Node | None:
    """The filter part of a tree: the top level's plain words dropped (they only rank)."""
    if not filters(node):
        return None
    if isinstance(node, AllOf):
        kept = [n for n in node.nodes if filters(n)]
        return kept[0] if len(kept) == 1 else AllOf(tuple(kept))
    return node


class _Parser:
    def __init__(self, query: str) -> None:
        self.q = query
        self.i = 0
        self.notices: list[str] = []

    def _skip(self) -> None:
        while self.i < len(self.q) and self.q[self.i].isspace():
            self.i += 1

    def expression(self, top: bool = False) -> Node:
        """Terms side by side (all must hold) with OR between some: OR binds tighter."""
        groups: list[Node] = []
        while True:
            self._skip()
            if self.i >= len(self.q):
                break
            if self.q[self.i] == ")":
                if not top:
                    break
                # natural text has them ("a smiley :)"): left out, with a note saying where
                self._notice(self.i, "a ')' with no '(' is ignored")
                self.i += 1
                continue
            if self._at_or():
                start = self.i
                self.i += 2
                self._skip()
                if not groups:
                    self._notice(start, "an OR with nothing before it is ignored")
                    continue
                if self.i >= len(self.q) or self.q[self.i] == ")" or self._at_or():
                    self._notice(start, "an OR with nothing after it is ignored")
                    continue
                right = self.unary()
                if right is None:
                    continue
                left = groups.pop()
                both = (*left.nodes, right) if isinstance(left, AnyOf) else (left, right)
                groups.append(AnyOf(both))
                continue
            node = self.unary()
            if node is not None:
                groups.append(node)
        return groups[0] if len(groups) == 1 else AllOf(tuple(groups))

    def _at_or(self) -> bool:
        q, i = self.q, self.i
        return q.startswith("OR", i) and (i + 2 == len(q) or q[i + 2].isspace() or q[i + 2] == "(")

    def unary(self) -> Node | None:
        self._skip()
        if self.q[self.i] == "-":
            start = self.i
            self.i += 1
            if self.i >= len(self.q) or self.q[self.i].isspace() or self.q[self.i] == ")":
                self.notices.append("a lone '-' excludes nothing: ignored")
                return None
            inner = self.unary()
            if inner is None:
                return None
            if isinstance(inner, Not):
                raise QueryError(self.q, start, "a double '-'")
            return Not(inner)
        return self.primary()

    def primary(self) -> Node | None:
        q = self.q
        start = self.i
        if q[start] == "(":
            self.i += 1
            inner = self.expression()
            if self.i >= len(q):
                self._notice(start, "a '(' never closed is closed at the end")
            self.i += 1  # the ")"
            return inner
        if q[start] == '"':
            if q.find('"', start + 1) < 0:  # a stray quote: the rest are words
                self._notice(start, "a quote never closed is ignored")
                self.i = start + 1
                return None
            return Term("phrase", self._quoted(), start)
        m = _OPERATOR_RE.match(q, start)
        if m and m.group(1).lower() in OPERATORS:
            return self._operator(m.group(1).lower(), m.end(), start)
        end = start
        while end < len(q) and not q[end].isspace() and q[end] not in '()"':
            end += 1
        if end == start:  # a stray quote or parenthesis character inside a word
            end = start + 1
        self.i = end
        token = q[start:end]
        if m and m.group(1).isalpha() and len(m.group(1)) <= 12:
            self.notices.append(f"unknown operator '{m.group(1)}:' searched as words")
        return Term("word", token, start)

    def _notice(self, at: int, what: str) -> None:
        shown = self.q[max(0, at - 20) : at + 20].replace("\n", " ")
        self.notices.append(f"{what} (character {at + 1}: …{shown}…)")

    def _quoted(self) -> str:
        start = self.i
        end = self.q.find('"', start + 1)
        if end < 0:
            raise QueryError(self.q, start, "this quote is never closed")
        self.i = end + 1
        return self.q[start + 1 : end]

    def _operator(self, op: str, at: int, start: int) -> Node:
        q = self.q
        self.i = at
        if at >= len(q) or q[at].isspace() or q[at] == ")":
            raise QueryError(q, start, f'{op}: needs a value ({op}:word, {op}:"a phrase")')
        if q[at] == '"':
            value = self._quoted()
        elif q[at] == "(":
            depth, end = 0, at
            while end < len(q):
                depth += {"(": 1, ")": -1}.get(q[end], 0)
                if depth == 0:
                    break
                end += 1
            if depth:
                raise QueryError(q, at, "this parenthesis is never closed")
            value = q[at + 1 : end]
            if '"' in value and value.count('"') % 2:
                raise QueryError(q, at + 1 + value.index('"'), "this quote is never closed")
            self.i = end + 1
        else:
            end = at
            while end < len(q) and not q[end].isspace() and q[end] not in "()":
                end += 1
            value = q[at:end]
            self.i = end
        value = value.strip()
        if op == "tag":
            value = value.lstrip("#")
        if op == "path":
            value = value.replace("\\", "/").lstrip("/")
            if ".." in value.split("/"):
                raise QueryError(q, start, "path: cannot leave the vault ('..')")
        if op == "file":
            value = value.removesuffix(".md")
        if not value or (op in TEXT_OPERATORS and not _WORD_RE.search(value)):
            raise QueryError(q, start, f'{op}: needs a value ({op}:word, {op}:"a phrase")')
        return Term(op, value, start)
