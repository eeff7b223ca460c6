"""The one way vaultmem changes a vault: read a note's bytes once, edit its lines with pure
functions, write atomically only over the revision read, and move deleted files to `.trash/`.

Planning is pure (`plan_edit`, `plan_new_note`, `plan_note_from_template` compute the new bytes);
`write` applies a plan and returns the vault paths it touched, for the core to reindex.
"""

from vaultmem.edit.lines import (
    append_to_section,
    check_task,
    find_heading,
    insert_after,
    replace_line,
    strike_item,
    uncheck_task,
)
from vaultmem.edit.properties import PropertyValue, remove_property, set_property
from vaultmem.edit.reading import DEFAULT_MAX_BYTES, NoteSource, read_note
from vaultmem.edit.template import plan_note_from_template, render_template
from vaultmem.edit.text import Encoding, Line, Lines, split_lines, unified_diff
from vaultmem.edit.trash import (
    TrashEntry,
    list_trash,
    move_to_trash,
    purge,
    restore,
)
from vaultmem.edit.writing import (
    Change,
    clean_temporaries,
    is_temporary,
    plan_edit,
    plan_new_note,
    write,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Change",
    "Encoding",
    "Line",
    "Lines",
    "NoteSource",
    "PropertyValue",
    "TrashEntry",
    "append_to_section",
    "check_task",
    "clean_temporaries",
    "find_heading",
    "insert_after",
    "is_temporary",
    "list_trash",
    "move_to_trash",
    "plan_edit",
    "plan_new_note",
    "plan_note_from_template",
    "purge",
    "read_note",
    "remove_property",
    "render_template",
    "replace_line",
    "restore",
    "set_property",
    "split_lines",
    "strike_item",
    "uncheck_task",
    "unified_diff",
    "write",
]
