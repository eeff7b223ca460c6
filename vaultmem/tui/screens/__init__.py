"""The app's screens, one per file; a new screen is a new file plus one line in `app.MODES`."""
