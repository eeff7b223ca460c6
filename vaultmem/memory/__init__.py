"""The memory layer's pure core: facts, episodes, open loops, recall, the gate, salience.

Every module here takes text and values and returns values: no SQL, no files, and a clock
passed in (`today`, `now`). The core (`Vault`) reads notes and the index, calls these, and hands
the planned line edits to the one write path. docs/memory.md states the file forms.
"""
