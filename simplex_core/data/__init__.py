"""The data: the long judgment table and its contract (`table`), scales (`scale`), score patterns
(`patterns`), the built-in datasets (`datasets`), gold labels (`gold`), and the text and CSV helpers
every layer above uses (`text`, `spreadsheet`). The lowest layer: imports nothing else of the core."""
