"""Floor 3, the startup-code audit: what a start runs, read and proved, never run.

Imports ``facts`` and ``detect``; ``probe``, ``guard`` (the install report) and ``cli`` may
import it.  It never imports the guard.
"""
