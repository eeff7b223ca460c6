"""The app's stylesheet: Textual's, with parsed CSS kept across reparses while the variables hold.

Textual (8.2) reparses every CSS source of the app from scratch in a fresh stylesheet each
time a mode's screen is first shown (`switch_mode` calls `refresh_css`, twice for a new mode):
~13,000 characters of CSS, about half the CPU of opening the review or browse screen the first
time. Parsing depends only on the source and the CSS variables (the theme), so the rules parsed
once are reused until the variables change.
"""

from __future__ import annotations

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet as TextualStylesheet
from textual.css.types import CSSLocation

ParseKey = tuple[str, CSSLocation, bool, int, str]


class Stylesheet(TextualStylesheet):
    """A stylesheet whose reparse reuses the rules already parsed with the same variables."""

    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        self._kept: dict[ParseKey, list[RuleSet]] = {}
        self._kept_for: dict[str, str] = dict(self._variables)

    def set_variables(self, variables: dict[str, str]) -> None:
        if variables != self._kept_for:  # another theme: the parsed rules hold old values
            self._kept = {}
            self._kept_for = dict(variables)
        super().set_variables(variables)

    def _parse_rules(
        self,
        css: str,
        read_from: CSSLocation,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        key = (css, read_from, is_default_rules, tie_breaker, scope)
        rules = self._kept.get(key)
        if rules is None:
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            self._kept[key] = rules
        return rules

    def reparse(self) -> None:
        """Textual's reparse (a fresh stylesheet, so that an error leaves this one whole),
        with the fresh one sharing the parsed rules."""
        fresh = Stylesheet(variables=self._variables)
        fresh._kept, fresh._kept_for = self._kept, self._kept_for
        for read_from, (css, is_defaults, tie_breaker, scope) in self.source.items():
            fresh.add_source(
                css,
                read_from=read_from,
                is_default_css=is_defaults,
                tie_breaker=tie_breaker,
                scope=scope,
            )
        try:
            fresh.parse()
        except Exception:
            self._invalid_css.update(fresh._invalid_css)
            raise
        self._rules = fresh.rules
        self._rules_map = None
        self.source = fresh.source
        self._require_parse = False
