"""THE WINDOW: rules engine, tables, AI, campaign and offline economy. Pure: no IO."""
