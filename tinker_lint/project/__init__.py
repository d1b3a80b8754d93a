"""The project a linted file belongs to: its other modules, and what their functions do."""
