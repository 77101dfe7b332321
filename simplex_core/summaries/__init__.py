"""What a fit is read into: tidy posterior tables and result.json (`posterior_tables`), the
presenting leaderboard (`leaderboard`), posterior slices the figures draw (`posterior_views`), and
methods scored against the truth (`evaluation`). Imports every layer below, and `figures`."""
