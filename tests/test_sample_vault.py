"""The committed sample vault, indexed: every syntax and link fact its checklist promises."""

from __future__ import annotations

import unicodedata

import pytest

from vaultmem.vault import Vault

# (source note, link target as written, heading or block, expected destination)
RESOLVES = [
    ("work/Q4 Roadmap.md", "Heatwise Gateway", None, "work/projects/Heatwise Gateway.md"),
    (
        "work/Gateway MQTT topics.md",
        "Heatwise Gateway",
        "Release plan",
        "work/projects/Heatwise Gateway.md",
    ),
    ("work/Meeting notes.md", "Tariff Optimizer", "my plan", "work/projects/Tariff Optimizer.md"),
    ("work/projects/Tariff Optimizer.md", "", "Pros, cons", "work/projects/Tariff Optimizer.md"),
    (
        "work/projects/Tariff Optimizer.md",
        "Architecture Decisions",
        "^adr-007",
        "work/Architecture Decisions.md",
    ),
    (
        "work/Heat pump COP math.md",
        "Architecture Decisions",
        "^tariff-bands",
        "work/Architecture Decisions.md",
    ),
    (
        "inbox/2026-11-29 claude-code.md",
        "Tariff Optimizer",
        "^f-1a2b",
        "work/projects/Tariff Optimizer.md",
    ),
    ("personal/travel/Kyoto Itinerary.md", "日本旅行", "Route", "personal/travel/日本旅行.md"),
    (
        "work/projects/Heatwise Gateway.md",
        "gateway-dashboard.png",
        None,
        "attachments/gateway-dashboard.png",
    ),
    ("work/projects/Heatwise Gateway.md", "spec.pdf", None, "attachments/spec.pdf"),
    ("Maya Chen.md", "work/Heatwise.md", None, "work/Heatwise.md"),
    ("Maya Chen.md", "work/Q4 Roadmap.md", None, "work/Q4 Roadmap.md"),
    ("Maya Chen.md", "personal/health/Running Plan.md", None, "personal/health/Running Plan.md"),
    ("work/projects/Installer Portal.md", "../Q4 Roadmap.md", None, "work/Q4 Roadmap.md"),
    ("work/people/Lena Vogel.md", "../Heatwise", None, "work/Heatwise.md"),
    ("personas/health-coach.md", "recipes/Miso Soup", None, "personal/recipes/Miso Soup.md"),
    ("daily/2026-11-29.md", "work/Meeting notes", None, "work/Meeting notes.md"),
    ("Maya Chen.md", "Meeting notes", None, "work/Meeting notes.md"),
    ("personal/home/Apartment.md", "Meeting notes", None, "personal/home/Meeting notes.md"),
]


def _anchor(heading: str | None, block: str | None) -> str | None:
    return f"^{block}" if block else heading


@pytest.mark.parametrize(
    ("src", "target", "anchor", "dst"), RESOLVES, ids=[f"{s}->{t}#{a}" for s, t, a, _ in RESOLVES]
)
def test_links_resolve_as_obsidian_does(
    sample_vault: Vault, src: str, target: str, anchor: str | None, dst: str
) -> None:
    found = [
        link
        for link in sample_vault.show(src).links
        if link.target == target and _anchor(link.heading, link.block) == anchor
    ]
    assert found, f"{src} has no link to {target}#{anchor}"
    assert {link.dst_path for link in found} == {dst}
    assert all(link.anchor_ok is not False for link in found)


def test_nfd_written_link_reaches_the_nfc_file(sample_vault: Vault) -> None:
    links = sample_vault.show("personal/books/Reading List.md").links
    nfd = [x for x in links if x.target != unicodedata.normalize("NFC", x.target)]
    assert nfd and {x.dst_path for x in nfd} == {"personal/Café Lumière.md"}


def test_unresolved_targets_are_exactly_the_wanted_notes(sample_vault: Vault) -> None:
    wanted = {
        r[0] for r in sample_vault.conn.execute("SELECT target FROM links WHERE dst_path IS NULL")
    }
    assert wanted == {"Load Forecasting", "Marathon Training", "firmware-rollback v1", "Priya"}


def test_hidden_links_are_not_links(sample_vault: Vault) -> None:
    targets = {r[0] for r in sample_vault.conn.execute("SELECT target FROM links")}
    hidden = {
        "Fenced Link",
        "Indented Link",
        "Inline Code Link",
        "Hidden",
        "Hidden2",
        "x",
        "p_h",
        "Math Block Link",
    }
    assert not targets & hidden


def test_doctor_reports_the_planted_problems(sample_vault: Vault) -> None:
    report = sample_vault.doctor()
    assert [(p.src_path, p.written, p.fix) for p in report.alias_fixable] == [
        ("work/Meeting notes.md", "[[Priya]]", "[[Priya Raman|Priya]]")
    ]
    assert [(p.src_path, p.written) for p in report.missing_anchors] == [
        ("work/Meeting notes.md", "[[Installer Portal#Pricing]]")
    ]
    assert {p.src_path for p in report.ambiguous} == {"Maya Chen.md", "personal/home/Apartment.md"}
    assert report.warnings == () and report.skipped == () and report.healthy


def test_typed_links(sample_vault: Vault) -> None:
    def relations(src: str) -> set[tuple[str, str | None]]:
        return {(x.relation, x.dst_path) for x in sample_vault.show(src).links}

    gateway = relations("work/projects/Heatwise Gateway.md")
    assert ("depends_on", "work/projects/Installer Portal.md") in gateway
    assert ("related", "work/people/Priya Raman.md") in gateway
    assert ("owner", "work/people/Priya Raman.md") in gateway
    assert ("embeds", "work/Gateway release checklist.md") in gateway
    optimizer = relations("work/projects/Tariff Optimizer.md")
    assert {
        ("depends_on", "work/projects/Heatwise Gateway.md"),
        ("depends_on", "work/GridFlex API.md"),
    } <= optimizer


def test_tags_tasks_and_aliases(sample_vault: Vault) -> None:
    stats = sample_vault.stats()
    assert (stats.notes, stats.attachments, stats.open_tasks, stats.done_tasks) == (43, 2, 21, 11)
    cafe = sample_vault.show("Café Lumière")
    assert "café" in cafe.tags and "berlin/places" in cafe.tags
    api = sample_vault.show("GridFlex API")
    assert not {"123", "api-keys", "per-minute"} & set(api.tags)
    mqtt = sample_vault.show("Gateway MQTT topics")
    assert not {"fenced-tag", "indented-tag", "inline-tag", "hidden-tag"} & set(mqtt.tags)
    assert sample_vault.find_note("lena") == "work/people/Lena Vogel.md"  # `alias:` string
    assert sample_vault.find_note("Japan 2026") == "personal/travel/日本旅行.md"
    gateway_tasks = sample_vault.show("Heatwise Gateway").tasks
    assert any(t.priority == "high" and t.due == "2026-12-05" for t in gateway_tasks)


def test_keyword_search_finds_the_right_note(sample_vault: Vault) -> None:
    assert sample_vault.search("sourdough starter").hits[0].path == (
        "personal/recipes/Sourdough Loaf.md"
    )
    assert sample_vault.search("MQTT topics").hits[0].path == "work/Gateway MQTT topics.md"
