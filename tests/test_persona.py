"""Personas: listing, loading within a budget (order, cuts, dedup, stability), creating."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_VAULT, MakeVault
from vaultmem import dialect
from vaultmem.config import Config, load_config
from vaultmem.errors import ConfigError, NoteNotFound, UsageError, VaultmemError
from vaultmem.persona import (
    DEFAULT_BUDGET,
    GUIDANCE,
    SECTIONS,
    ContextPart,
    PersonaContext,
    PersonaExists,
    PersonaInfo,
    find_persona,
    list_personas,
    load_persona,
    new_persona,
)
from vaultmem.vault import Vault

WORK = "personas/work-assistant.md"
WORK_SET = [
    "work/Q4 Roadmap.md",  # Critical Context, and `persona: work-assistant`
    "work/projects/Tariff Optimizer.md",  # Critical Context and Active Projects
    "procedures/firmware-rollback.md",  # Critical Context
    "work/projects/Heatwise Gateway.md",  # Active Projects
    "Maya Chen.md",  # the introduction, line 13
    "work/Architecture Decisions.md",  # Preferences, line 26
    "work/people/Priya Raman.md",  # Preferences, line 27
]


def body_of(path: Path) -> str:
    """A note's text after its front matter, as the persona part carries it."""
    text = path.read_text(encoding="utf-8")
    return text.split("\n---\n", 1)[1].strip("\n") + "\n"


def sources(context: PersonaContext) -> list[tuple[str, str]]:
    return [(p.kind, p.source) for p in context.parts]


# --------------------------------------------------------------------------- the sample vault


def test_list_personas_of_the_sample_vault(sample_vault: Vault) -> None:
    assert list_personas(sample_vault) == (
        PersonaInfo(
            slug="health-coach",
            path="personas/health-coach.md",
            title="Health coach",  # the note's `# Health coach`
            role="Running and nutrition coach for Maya",
            budget=4000,
            aliases=("Health coach", "coach"),
        ),
        PersonaInfo(
            slug="work-assistant",
            path=WORK,
            title="Work assistant",
            role="Engineering assistant for Maya at Heatwise",
            budget=6000,
            aliases=("Work assistant", "heatwise-assistant"),
        ),
    )


def test_work_assistant_at_its_own_budget(sample_vault: Vault) -> None:
    context = load_persona(sample_vault, "work-assistant")
    assert context.budget == 6000
    assert context.role == "Engineering assistant for Maya at Heatwise"
    assert sources(context) == [
        ("persona", WORK),
        ("facts", WORK),
        ("loops", WORK),  # its own and its working set's open loops, before the working set
        *(("working_set", path) for path in WORK_SET),
    ]
    assert [p.chars for p in context.parts] == [1343, 52, 534, 490, 747, 394, 724, 656, 268, 384]
    assert context.usage() == {"persona": 1343, "facts": 70, "loops": 549, "working_set": 4026}
    assert context.used == 5988 == len(context.to_markdown())
    assert context.left_out == ()
    assert not context.over_budget

    persona, facts, loops, roadmap, optimizer, *_ = context.parts
    # by due date, then priority, each with where it lives and the id `loop resolve` takes
    assert loops.text.splitlines() == [
        "- [ ] Finalise the tariff band thresholds with Priya before the freeze 📅 2026-12-01"
        " (work/Q4 Roadmap.md:40, l-c441f99d)",
        "- [ ] Ship the 2.4.2 hotfix (Modbus CRC logging) to the beta ring 📅 2026-12-05"
        " (work/projects/Heatwise Gateway.md:55, l-76d7aa82)",
        "- [ ] Write the launch announcement for the optimizer 📅 2026-12-08"
        " (work/Q4 Roadmap.md:41, l-48a668c5)",
        "- [ ] Add a brown-out counter to the state topic"
        " (work/projects/Heatwise Gateway.md:56, l-8ea3b914)",
        "- [ ] Decide who owns load forecasting in Q1 (work/Q4 Roadmap.md:42, l-e91a74e3)",
    ]
    assert persona.text == body_of(SAMPLE_VAULT / WORK)  # verbatim, front matter left out
    assert facts.text == "- role:: Engineering assistant for Maya at Heatwise\n"
    # The opening paragraph; its two inline fields are in it, so they are not listed again;
    # then the properties that are facts (not tags or `persona`).
    assert roadmap.text.endswith(
        "pilot. [owner:: [[Maya Chen]]] [review:: monthly]\n"
        "- type:: plan\n- date:: 2026-10-01\n- quarter:: 2026-Q4\n"
    )
    # Inline facts without their block ids, `status` once although it is also a property.
    assert optimizer.text.endswith(
        "[[Architecture Decisions#^adr-007]]). Cost estimates use the formulas in"
        " [[Heat pump COP math]].\n"
        "- status:: active\n"
        "- owner:: [[Maya Chen]]\n"
        "- stack:: Python 3.12, OR-Tools, PostgreSQL\n"
        "- launch_date:: 2027-01-20\n"
        "- homes_in_beta:: 212\n"
        "- median_saving_pct:: 17\n"
        "- type:: project\n"
        "- depends_on:: [[Heatwise Gateway]], [[GridFlex API]]\n"
        "- related:: [[Architecture Decisions]]\n"
        "- created:: 2026-02-03\n"
    )
    gateway = context.parts[6].text
    assert "- firmware_version:: 2.4.1\n" in gateway
    assert "was::" not in gateway  # history stays in the note
    assert "2.4.2 hotfix" not in gateway  # tasks are not facts or openings
    assert "![[gateway-dashboard.png|600]]" not in gateway


def test_work_assistant_cut_to_2500(sample_vault: Vault) -> None:
    context = load_persona(sample_vault, "work-assistant", budget=2500)
    assert sources(context) == [
        ("persona", WORK),
        ("facts", WORK),
        ("loops", WORK),
        ("working_set", "work/Q4 Roadmap.md"),
    ]
    assert context.usage() == {"persona": 1343, "facts": 70, "loops": 549, "working_set": 523}
    assert context.used == 2485
    assert context.left_out == tuple(WORK_SET[1:])
    # Cut between two facts: the next one (quarter) did not fit in the characters left.
    assert context.parts[-1].text.endswith("- type:: plan\n- date:: 2026-10-01\n")
    expected = (
        body_of(SAMPLE_VAULT / WORK)
        + "\n## Persona facts\n- role:: Engineering assistant for Maya at Heatwise\n"
        + "\n## Open loops\n"
        + context.parts[2].text
        + "\n## Working set\n"
        + "\n### Q4 Roadmap (work/Q4 Roadmap.md)\n"
        + context.parts[3].text
    )
    assert context.to_markdown() == expected


def test_a_cut_falls_between_lines(sample_vault: Vault) -> None:
    context = load_persona(sample_vault, "work-assistant", budget=1700)
    assert context.usage() == {"persona": 1343, "facts": 70, "loops": 265, "working_set": 0}
    assert context.parts[-1].text == (  # two of the five loops fit, each line whole
        "- [ ] Finalise the tariff band thresholds with Priya before the freeze 📅 2026-12-01"
        " (work/Q4 Roadmap.md:40, l-c441f99d)\n"
        "- [ ] Ship the 2.4.2 hotfix (Modbus CRC logging) to the beta ring 📅 2026-12-05"
        " (work/projects/Heatwise Gateway.md:55, l-76d7aa82)\n"
    )
    assert context.left_out == (WORK, *WORK_SET)  # its loops were cut, then every note


def test_a_budget_asked_below_the_persona_notes_size_is_refused(sample_vault: Vault) -> None:
    for budget in (0, 500, 1342):
        with pytest.raises(UsageError) as info:
            load_persona(sample_vault, "work-assistant", budget=budget)
        assert str(info.value) == (
            f"a budget of {budget:,} characters is below the persona note's own 1,343 "
            f"({WORK}, never cut): give at least 1,343, or shorten the note"
        )
    context = load_persona(sample_vault, "work-assistant", budget=1343)
    assert sources(context) == [("persona", WORK)]
    assert context.used == 1343 and not context.over_budget


def test_its_own_budget_smaller_than_the_persona_note(make_vault: MakeVault) -> None:
    """The front matter's budget is the persona's own: loading works, never cutting the note."""
    body = "# Helper\n\nA long enough note to be over its own budget. See [[Work]].\n"
    vault = make_vault(
        {
            "personas/helper.md": f"---\ntype: persona\nrole: x\nbudget: 20\n---\n{body}",
            "Work.md": "# Work\nThings to do.\n",
        }
    )
    vault.reindex(embed=False)
    context = load_persona(vault, "helper")
    assert sources(context) == [("persona", "personas/helper.md")]
    assert context.parts[0].text == body  # never cut
    assert context.used == len(body) and context.over_budget
    assert context.left_out == ("personas/helper.md", "Work.md")  # its facts, then the note


def test_the_budget_is_never_exceeded_and_lines_stay_whole(sample_vault: Vault) -> None:
    whole = load_persona(sample_vault, "work-assistant", budget=100_000)
    lines_of = {(p.kind, p.source): set(p.text.splitlines()) for p in whole.parts}
    for budget in range(1343, 6100, 41):
        context = load_persona(sample_vault, "work-assistant", budget=budget)
        assert context.used <= budget
        assert sum(context.usage().values()) == context.used == len(context.to_markdown())
        for part in context.parts:
            assert part.text == "" or part.text.endswith("\n")
            assert set(part.text.splitlines()) <= lines_of[part.kind, part.source]
        kept = [p.source for p in context.parts if p.kind == "working_set"]
        assert kept == [s for s in WORK_SET if s in kept]  # rank order, whatever the cut
        assert set(kept) | set(context.left_out) >= set(WORK_SET)


def test_health_coach_and_its_member_note(sample_vault: Vault) -> None:
    context = load_persona(sample_vault, "coach")  # an alias finds it too
    assert context.slug == "health-coach"
    assert [p.source for p in context.parts if p.kind == "working_set"] == [
        "personal/health/Running Plan.md",  # Critical Context + `persona: [health-coach]`
        "personal/health/Sleep Log.md",
        "Maya Chen.md",
        "personal/recipes/Weekly Meal Plan.md",
        # Miso Soup (via [[recipes/Miso Soup]]) no longer fits after the open loops
    ]
    assert context.left_out == ("personal/recipes/Miso Soup.md",)
    assert context.usage() == {"persona": 1108, "facts": 64, "loops": 523, "working_set": 2194}
    running = context.parts[3].text
    assert "- weekly_km:: 42\n" in running and "was::" not in running


def test_loading_is_byte_stable(sample_vault: Vault, tmp_path: Path) -> None:
    first = load_persona(sample_vault, "work-assistant")
    assert load_persona(sample_vault, "work-assistant") == first
    # Another index of the same files, with other file times and rowids: the same bytes.
    copy = tmp_path / "copy"
    copy.mkdir()
    for src in SAMPLE_VAULT.rglob("*"):
        dst = copy / src.relative_to(SAMPLE_VAULT)
        if src.is_dir():
            dst.mkdir(exist_ok=True)
        else:
            dst.write_bytes(src.read_bytes())  # new file times, in another order of creation
    other = Vault(copy, tmp_path / "other.db")
    other.reindex(full=True)
    again = load_persona(other, "work-assistant")
    assert again.to_markdown() == first.to_markdown()
    assert again == first


def test_as_json(sample_vault: Vault) -> None:
    context = load_persona(sample_vault, "work-assistant", budget=2500)
    data = dialect.persona_context(context, find_persona(sample_vault, "work-assistant"), True)
    assert data["slug"] == "work-assistant" and data["budget"] == 2500 and data["used"] == 2485
    assert data["over_budget"] is False
    assert data["usage"] == {"persona": 1343, "facts": 70, "loops": 549, "working_set": 523}
    assert [n["path"] for n in data["left_out"]] == WORK_SET[1:]
    assert data["parts"][1] == {
        "kind": "facts",
        "path": WORK,
        "title": "Work assistant",
        "heading": None,
        "chars": 52,
        "text": "- role:: Engineering assistant for Maya at Heatwise\n",
    }
    without = dialect.persona_context(context, find_persona(sample_vault, "work-assistant"), False)
    assert [set(p) for p in without["parts"]] == [set(p) - {"text"} for p in data["parts"]]


# --------------------------------------------------------------------------- errors


def test_unknown_persona_lists_the_known_ones(sample_vault: Vault) -> None:
    with pytest.raises(NoteNotFound) as info:
        load_persona(sample_vault, "nobody")
    message = str(info.value)
    assert "health-coach, work-assistant" in message
    assert "vaultmem persona list" in message
    assert info.value.exit_code == 1


@pytest.mark.parametrize(
    "slug", ["../x", "/etc/passwd", "a/b", "a\\b", "work\x00assistant", "..", ".hidden", "", " "]
)
def test_hostile_slugs_are_usage_errors(sample_vault: Vault, slug: str) -> None:
    with pytest.raises(UsageError) as info:
        load_persona(sample_vault, slug)
    assert "vaultmem persona list" in str(info.value)


def test_negative_budget_is_a_usage_error(sample_vault: Vault) -> None:
    with pytest.raises(UsageError):
        load_persona(sample_vault, "work-assistant", budget=-1)


def test_a_note_in_the_folder_without_type_persona(make_vault: MakeVault) -> None:
    vault = make_vault({"personas/draft.md": "# Draft\nnot yet\n"})
    vault.reindex(embed=False)
    assert list_personas(vault) == ()
    with pytest.raises(NoteNotFound, match=r"personas/draft.md has no `type: persona`"):
        load_persona(vault, "draft")
    with pytest.raises(NoteNotFound, match="persona new SLUG --role"):
        load_persona(vault, "other")


# --------------------------------------------------------------------------- working set rules

PERSONA = """\
---
type: persona
role: Tester
budget: 3000
user: "[[Ann]]"
tags: [persona]
---
# Tester

Intro line that mentions [[Zed]] first of all.

## Preferences

- Read [[Bob]] and [[Bob#Details]] again.

## Critical Context

- The key note is [[Cat#Plan]].

## Active Projects

- [[Dan]] ships soon.

## Key Facts

city:: Oslo
"""


def _vault(make_vault: MakeVault, extra: dict[str, str] | None = None) -> Vault:
    files = {
        "personas/tester.md": PERSONA,
        "Ann.md": "---\ncity: Oslo\n---\n# Ann\n\nAnn is the user.\n\ncity:: Oslo\n",
        "Bob.md": (
            "---\nstatus: active\n---\n# Bob\n\nBob opening line, long enough to count.\n\n"
            "## Details\n\nDetail text.\nstatus:: active\n- [ ] a task [due:: 2026-12-01]\n"
        ),
        "Cat.md": (
            "# Cat\n\nCat intro.\n\n## Plan\n\n```\ncode line\n\nmore code\n```\n\n"
            "Plan text after code.\n\nsteps:: 3 ^f-1\n\n## Later\n\nnot in the plan\nlater:: 1\n"
        ),
        "Dan.md": (
            "---\npersona: tester\nsummary: Dan in one line.\n---\n# Dan\n\n"
            "Intro line that mentions [[Zed]] first of all.\n"
        ),
        "Zed.md": "# Zed\n\n![[pic.png]]\n\nZed text.\n",
        "pic.png": b"\x89PNG",
        "Eve.md": "---\npersona: [other, Tester]\ndate: 2026-01-02\n---\nEve text.\n",
        "Fay.md": '---\npersona: "[[tester]]"\ndate: 2026-03-04\n---\nFay text.\n',
        "Gus.md": "---\npersona: other\n---\nGus text.\n",
    }
    vault = make_vault({**files, **(extra or {})})
    vault.reindex(embed=False)
    return vault


def test_ranking_dedup_and_membership(make_vault: MakeVault) -> None:
    context = load_persona(_vault(make_vault), "tester")
    assert [(p.source, p.heading) for p in context.parts] == [
        ("personas/tester.md", None),
        ("personas/tester.md", None),
        ("personas/tester.md", None),  # the open loops: Bob's task
        ("Cat.md", "Plan"),  # Critical Context, though linked last: only its section
        ("Dan.md", None),  # Active Projects, and a member
        ("Bob.md", None),  # two links (whole and #Details): once, whole
        ("Ann.md", None),  # a link in a front matter property, line 5
        ("Zed.md", None),  # the introduction, line 10
        ("Fay.md", None),  # members only: newest first
        ("Eve.md", None),
    ]
    parts = {p.source: p.text for p in context.parts[3:]}
    assert context.parts[1].text == "- role:: Tester\n- user:: [[Ann]]\n"
    assert context.parts[2].text == "- [ ] a task 📅 2026-12-01 (Bob.md:12, l-7e8917f6)\n"
    assert parts["Cat.md"] == "Plan text after code.\n- steps:: 3\n"  # no code, no later section
    # Its summary stands for the opening, so the line shared with the persona is not needed.
    assert parts["Dan.md"] == "Dan in one line.\n"
    assert parts["Bob.md"] == "Bob opening line, long enough to count.\n- status:: active\n"
    assert parts["Zed.md"] == "Zed text.\n"  # a lone embed is not an opening
    # The persona's own `city:: Oslo` is about the persona; Ann's is about Ann (and is listed
    # once, though it is also a property).
    assert parts["Ann.md"] == "Ann is the user.\n- city:: Oslo\n"
    assert parts["Fay.md"] == "Fay text.\n- date:: 2026-03-04\n"
    assert context.left_out == ()


def test_text_said_before_is_not_repeated(make_vault: MakeVault) -> None:
    vault = _vault(
        make_vault,
        {"Dan.md": "# Dan\n\nIntro line that mentions [[Zed]] first of all.\nDan's own line.\n"},
    )
    context = load_persona(vault, "tester")
    dan = next(p for p in context.parts if p.source == "Dan.md")
    assert dan.text == "Dan's own line.\n"


def test_a_note_said_entirely_before_is_not_shown(make_vault: MakeVault) -> None:
    vault = _vault(
        make_vault, {"Dan.md": "# Dan\n\nIntro line that mentions [[Zed]] first of all.\n"}
    )
    context = load_persona(vault, "tester")
    assert "Dan.md" not in [p.source for p in context.parts]
    assert "Dan.md" not in context.left_out  # nothing was cut: there was nothing new to say


def test_budget_from_front_matter_and_default(make_vault: MakeVault) -> None:
    vault = _vault(
        make_vault,
        {
            "personas/plain.md": "---\ntype: persona\nrole: r\n---\n# Plain\n",
            "personas/odd.md": "---\ntype: Persona\nbudget: lots\n---\n# Odd\n",
        },
    )
    budgets = {p.slug: p.budget for p in list_personas(vault)}
    assert budgets == {"odd": DEFAULT_BUDGET, "plain": DEFAULT_BUDGET, "tester": 3000}
    assert load_persona(vault, "plain").budget == DEFAULT_BUDGET
    assert load_persona(vault, "plain").to_markdown() == "# Plain\n\n## Persona facts\n- role:: r\n"


def test_a_persona_is_titled_by_its_first_heading_when_level_one(make_vault: MakeVault) -> None:
    vault = _vault(
        make_vault,
        {
            "personas/plain.md": "---\ntype: persona\n---\n# Plain Helper\n\n# Second\n",
            "personas/nameless.md": "---\ntype: persona\n---\nNo heading first.\n# Late\n",
            "personas/deep.md": "---\ntype: persona\n---\n## Only a subheading\n",
        },
    )
    titles = {p.slug: p.title for p in list_personas(vault)}
    assert {k: titles[k] for k in ("plain", "nameless", "deep")} == {
        "plain": "Plain Helper",
        "nameless": "Late",
        "deep": "deep",
    }


def test_a_symlink_swapped_in_after_indexing_is_never_read(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    vault = _vault(make_vault)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nTOP SECRET TEXT\n", encoding="utf-8")
    (vault.root / "Bob.md").unlink()
    (vault.root / "Bob.md").symlink_to(secret)
    context = load_persona(vault, "tester")
    assert "TOP SECRET" not in context.to_markdown()
    assert "Bob.md" in context.left_out


def test_personas_folder_setting(make_vault: MakeVault) -> None:
    vault = make_vault({"agents/helper.md": "---\ntype: persona\nrole: Helps\n---\n# Helper\n"})
    vault.config = Config(personas_folder="agents")
    vault.reindex(embed=False)
    assert [p.path for p in list_personas(vault)] == ["agents/helper.md"]
    assert load_persona(vault, "helper").parts[0] == ContextPart(
        "persona", "agents/helper.md", None, "# Helper\n"
    )


# --------------------------------------------------------------------------- creating


def test_new_persona_writes_the_template_and_indexes_as_a_persona(make_vault: MakeVault) -> None:
    vault = make_vault({"Note.md": "# Note\n"})
    vault.reindex(embed=False)
    path = new_persona(vault, "coach-2", "Running coach: calm, practical")
    assert path == vault.root / "personas" / "coach-2.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(
        '---\ntype: persona\nrole: "Running coach: calm, practical"\nbudget: 5000\n---\n'
        "# Coach 2\n\nRunning coach: calm, practical.\n"
    )
    for section in SECTIONS:  # each with a line of guidance, hidden in Obsidian's reading view
        assert f"\n## {section}\n\n%% {GUIDANCE[section]} Delete this line. %%\n" in text
    assert all(len(line) < 200 for line in GUIDANCE.values())
    vault.reindex(embed=False)
    info_of_note = vault.show("personas/coach-2.md")
    assert info_of_note.links == ()  # the guidance's example [[Project]] is not a link
    (info,) = list_personas(vault)
    assert (info.slug, info.role, info.budget) == (
        "coach-2",
        "Running coach: calm, practical",
        5000,
    )
    context = load_persona(vault, "coach-2")
    assert context.parts[0].text.startswith("# Coach 2\n")
    assert context.parts[1].text == "- role:: Running coach: calm, practical\n"


def test_new_persona_refuses_to_overwrite(make_vault: MakeVault) -> None:
    vault = make_vault({"personas/taken.md": "my own words\n"})
    with pytest.raises(PersonaExists) as info:
        new_persona(vault, "taken", "Anything")
    assert isinstance(info.value, VaultmemError) and info.value.exit_code == 2
    assert "never overwrites" in str(info.value)
    assert (vault.root / "personas/taken.md").read_text(encoding="utf-8") == "my own words\n"
    assert sorted(p.name for p in (vault.root / "personas").iterdir()) == ["taken.md"]


@pytest.mark.parametrize("slug", ["../x", "a/b", "/etc/passwd", "Upper", "", "-x", "a b", "x\x00"])
def test_new_persona_rejects_bad_slugs(make_vault: MakeVault, slug: str) -> None:
    vault = make_vault({})
    with pytest.raises(UsageError):
        new_persona(vault, slug, "role")
    assert not (vault.root / "personas").exists()


def test_new_persona_needs_a_role(make_vault: MakeVault) -> None:
    with pytest.raises(UsageError, match="--role"):
        new_persona(make_vault({}), "ok", "  \n ")


@pytest.mark.parametrize("folder", ["../elsewhere", "/etc", "a/../../b", ".hidden", "a\\\\b"])
def test_personas_folder_must_stay_inside_the_vault(tmp_path: Path, folder: str) -> None:
    (tmp_path / ".vaultmem").mkdir()
    (tmp_path / ".vaultmem" / "config.toml").write_text(
        f"personas_folder = {json.dumps(folder)}\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="personas_folder"):
        load_config(tmp_path)


def test_personas_folder_from_the_config_file(tmp_path: Path) -> None:
    (tmp_path / ".vaultmem").mkdir()
    (tmp_path / ".vaultmem" / "config.toml").write_text(
        'personas_folder = "agents/personas/"\n', encoding="utf-8"
    )
    assert load_config(tmp_path).personas_folder == "agents/personas"
    assert load_config(tmp_path / "missing").personas_folder == "personas"


def test_links_rank_in_reading_order_within_a_line(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "personas/p.md": "---\ntype: persona\n---\n# P\n\nSee [[Zoe]] and then [[Abe]].\n",
            "Zoe.md": "Zoe text.\n",
            "Abe.md": "Abe text.\n",
        }
    )
    vault.reindex(embed=False)
    context = load_persona(vault, "p")
    assert [p.source for p in context.parts[1:]] == ["Zoe.md", "Abe.md"]


def test_the_line_under_a_closing_fence_opens_the_note(make_vault: MakeVault) -> None:
    """A paragraph right below a code block's closing fence (no blank line between) is prose
    of its own, the note's opening: it is not skipped with the code."""
    vault = make_vault(
        {
            "personas/p.md": "---\ntype: persona\n---\n# P\n\n## Critical Context\n\n- [[Code]]\n",
            "Code.md": "# Code\n\n```\nmake test\n```\nRun the tests before a release.\n",
        }
    )
    vault.reindex(embed=False)
    (part,) = [p for p in load_persona(vault, "p").parts if p.source == "Code.md"]
    assert part.text == "Run the tests before a release.\n"
