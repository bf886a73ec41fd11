"""THE WINDOW rules engine (Books I–III, VI)."""
