"""Widgets of the vaultmem app, one per file; their structure in DEFAULT_CSS, looks in the .tcss."""
